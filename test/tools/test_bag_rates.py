"""rnea-bag on noisy efforts (issue 37): noise-aware effort-rate checks, violations.csv,
the HTML report, argument checks, provenance and the optional per-sample series."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from rnea_ros import __version__
from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.tools.bag import main
from rnea_ros.tools.synthetic_bag import write_bag

MODEL = load_robot("arm7")
URDF = str(sample_urdf("arm7"))
CLOCK = 1.7e9  # 2023-11-14T22:13:20Z: a wall-clock recording
STEP = (7.0, 0.005, 2, 30.0)  # start [s], rise [s], joint index, height [N m]: 6000 N m/s


@pytest.fixture(scope="module")
def bags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """20 s at 1 kHz of the slow synthetic motion (true |tau_dot| well below 1000 N m/s):
    1 N m effort noise and nothing else; 0.5 N m noise and a 30 N m step in 5 ms."""
    root = tmp_path_factory.mktemp("rates")
    out = {"noisy": root / "noisy", "step": root / "step"}
    write_bag(out["noisy"], MODEL, duration=20.0, noise=1.0, seed=3, clock=CLOCK)
    write_bag(out["step"], MODEL, duration=20.0, noise=0.5, seed=4, clock=CLOCK,
              steps=[STEP])
    return out


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([*argv, "--quiet"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def read_violations(out: Path) -> list[dict[str, str]]:
    with open(out / "violations.csv", newline="") as stream:
        return list(csv.DictReader(stream))


def test_noise_of_1_nm_gives_no_effort_rate_violation(bags: dict[str, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """Differentiated raw, 1 N m of noise gave ~18,000 false effort-rate intervals."""
    out = tmp_path / "o"
    code, text, err = run([str(bags["noisy"]), "--urdf", URDF, "--out", str(out),
                           "--no-plots"], capsys)
    assert code == 0, err
    rows = read_violations(out)
    assert [r for r in rows if r["kind"] == "effort_rate"] == []
    assert "limit violations: 0;" in text
    report = (out / "report.md").read_text()
    assert len(report.splitlines()) < 80
    # The noise is estimated from the data: 1 N m within 5 % on every joint.
    table = report.split("## Measured effort noise")[1].split("\n\n")[2].splitlines()[2:]
    sigmas = [float(row.split("|")[2]) for row in table]
    assert len(sigmas) == MODEL.nv and np.allclose(sigmas, 1.0, rtol=0.05), sigmas


def test_a_real_step_is_found_once_at_its_joint_and_time(bags: dict[str, Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    out = tmp_path / "o"
    code, _, err = run([str(bags["step"]), "--urdf", URDF, "--out", str(out)], capsys)
    assert code == 0, err
    rows = [r for r in read_violations(out) if r["kind"] == "effort_rate"]
    assert len(rows) == 1, rows  # one interval, not one per noisy crossing
    row = rows[0]
    start, rise = STEP[0], STEP[1]
    assert row["joint"] == MODEL.joint_names[STEP[2]] and row["unit"] == "N m/s"
    # Seconds from the first analysed sample; the interval covers the ramp, within a
    # Savitzky-Golay half-window (25 ms) each side.
    assert start - 0.025 <= float(row["start_s"]) <= start
    assert start + rise <= float(row["end_s"]) <= start + rise + 0.025
    assert start <= float(row["peak_s"]) <= start + rise
    assert float(row["peak"]) > float(row["threshold"]) > float(row["limit"]) == 1000.0
    assert row["start_utc"].startswith("2023-11-14T22:13:2")  # CLOCK + 7 s, in UTC


def test_violations_csv_and_html_report(bags: dict[str, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    spike = (12.0, 0.01, 4, 20.0)  # an effort over joint5's 12 N m limit
    bag = tmp_path / "spike"
    write_bag(bag, MODEL, duration=15.0, noise=0.5, seed=5, clock=CLOCK, steps=[STEP],
              spikes=[spike])
    code, _, err = run([str(bag), "--urdf", URDF, "--out", str(out)], capsys)
    assert code == 0, err
    with open(out / "violations.csv", newline="") as stream:
        header = next(csv.reader(stream))
    assert header[:7] == ["joint", "kind", "start_s", "end_s", "peak", "limit", "unit"]
    rows = read_violations(out)
    assert [(r["joint"], r["kind"]) for r in rows] == [("joint3", "effort_rate"),
                                                        ("joint5", "effort")]
    effort = rows[1]
    assert float(effort["start_s"]) == pytest.approx(spike[0], abs=1e-3)
    assert float(effort["peak"]) == spike[3] and effort["unit"] == "N m"
    page = (out / "report.html").read_text()
    assert page.startswith("<!doctype html>") and "src='http" not in page
    # self-contained: one plot per joint and contacts.png
    assert page.count("src='data:image/png;base64,") == MODEL.nv + 1
    assert "t0 = 2023-11-14T22:13:20.000Z" in page  # UTC, not epoch seconds
    assert "<tr class=violation><td>joint5</td><td>effort</td><td>12.0000</td>" in page
    assert "2023-11-14T22:13:32.000Z" in page  # the spike's start in UTC


def test_plots_mark_the_intervals_with_the_tables_peaks() -> None:
    """The rate panel plots the rate that was checked; each interval is shaded and its
    peak (the table's) marked, in view, even when decimation dropped it."""
    from rnea_ros.tools.bag.report import JointFigure
    from rnea_ros.tools.bag.statistics import Violation

    t = np.linspace(0.0, 20.0, 4000)
    rate = 10.0 * np.sin(t)  # the decimated curve misses the 4.6e4 N m/s peak
    peak = Violation("joint1", "effort_rate", 7.0, 7.01, 4.6e4, 1000.0, 7.004, 1100.0)
    over = Violation("joint1", "effort", 12.0, 12.01, 20.0, 12.0, 12.0, 12.0)
    figure = JointFigure()
    try:
        figure.draw("j", "N m", t, np.sin(t), np.sin(t), np.sin(t), rate, rate, 1000.0,
                    [peak, over])
        top, _, bottom = figure.axes
        assert bottom.get_ylim()[1] >= 4.6e4 and not figure.note.get_visible()
        assert all(line.get_visible() for line in figure.limits)
        marks = [m for m in figure.marks if hasattr(m, "get_marker") and m.get_marker() == "x"]
        limits = [m for m in figure.marks if hasattr(m, "get_marker") and m.get_marker() != "x"]
        assert sorted(float(m.get_ydata()[0]) for m in limits) == [-12.0, 12.0]
        assert {m.axes for m in limits} == {top}  # the crossed effort limit
        assert sorted((float(m.get_xdata()[0]), float(m.get_ydata()[0])) for m in marks) == \
            [(7.004, 4.6e4), (12.0, 20.0)]
        spans = [m for m in figure.marks if not hasattr(m, "get_marker")]
        assert len(spans) == 2 and {s.axes for s in spans} == {top, bottom}
        figure.draw("j", "N m", t, np.sin(t), np.sin(t), np.sin(t), rate, rate, 1000.0, [])
        assert figure.marks == [] and bottom.get_ylim()[1] < 100.0  # redrawn: none left
    finally:
        figure.close()


@pytest.mark.parametrize(("args", "message"), [
    (["--joints", "joint1", "joint1"], "--joints joint1 given more than once"),
    (["--plot-points", "-5"], "--plot-points -5: must be > 0"),
    (["--plot-points", "0"], "--plot-points 0: must be > 0"),
    (["--series", "xml"], "--series: invalid choice: 'xml'"),
    (["--chunk", "ten"], "--chunk: invalid int value: 'ten'"),
])
def test_bad_arguments_are_refused_before_any_work(args: list[str], message: str,
                                                   tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    code, _, err = run(["/nonexistent/bag", "--out", str(out), *args], capsys)
    assert code == 1 and message in err and err.count("\n") == 1, err
    assert "does not exist" not in err and not out.exists()  # checked before the bag


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rnea-bag {__version__}"
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "(default: 4000)" in text and "(default: 1000.0)" in text
    assert "(default: none)" in text and "(default: rnea_bag_report)" in text
    from rnea_ros.tools.bag.cli import parser

    for action in parser()._actions:
        assert action.help, action.option_strings  # help text on every flag


def test_outputs_are_stamped_with_version_command_and_digests(
        bags: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    args = [str(bags["noisy"]), "--urdf", URDF, "--out", str(out), "--no-plots"]
    assert run(args, capsys)[0] == 0
    report = (out / "report.md").read_text()
    bag_digest = hashlib.sha256()
    for f in sorted(p for p in bags["noisy"].rglob("*") if p.is_file()):
        bag_digest.update(str(f.relative_to(bags["noisy"])).encode() + b"\0")
        bag_digest.update(f.read_bytes())
    urdf_digest = hashlib.sha256(Path(URDF).read_bytes()).hexdigest()
    assert f"rnea-bag {__version__}: `rnea-bag {' '.join(args)} --quiet`" in report
    assert bag_digest.hexdigest() in report and urdf_digest in report
    assert urdf_digest in (out / "report.html").read_text()


def test_series_is_opt_in_csv_or_parquet(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    bag = tmp_path / "b"
    write_bag(bag, MODEL, duration=1.0, noise=0.5, seed=1)
    args = [str(bag), "--urdf", URDF, "--no-plots"]
    assert run([*args, "--out", str(tmp_path / "none")], capsys)[0] == 0
    assert sorted(p.name for p in (tmp_path / "none").iterdir()) == \
        ["contacts.csv", "report.html", "report.md", "violations.csv"]
    assert run([*args, "--out", str(tmp_path / "c"), "--series", "csv"], capsys)[0] == 0
    assert run([*args, "--out", str(tmp_path / "p"), "--series", "parquet"], capsys)[0] == 0
    with open(tmp_path / "c" / "series.csv", newline="") as stream:
        rows = list(csv.reader(stream))
    table = pq.read_table(tmp_path / "p" / "series.parquet")
    assert table.column_names == rows[0]
    stamp = json.loads(pq.read_schema(tmp_path / "p" / "series.parquet").metadata[b"rnea_bag"])
    assert stamp["version"] == __version__ and "--series parquet" in stamp["command"]
    assert stamp["inputs"][URDF] == "sha256:" + hashlib.sha256(Path(URDF).read_bytes()).hexdigest()
    values = np.array(rows[1:], dtype=np.float64)
    assert np.array_equal(np.column_stack([c.to_numpy() for c in table.columns]), values,
                          equal_nan=True)  # the same doubles
    size = {k: (tmp_path / k / f"series.{e}").stat().st_size for k, e in (("c", "csv"),
                                                                       ("p", "parquet"))}
    assert size["p"] < 0.6 * size["c"], size


def test_a_value_chattering_about_its_threshold_is_one_interval_across_chunks() -> None:
    """Runs of one joint closer than ``merge`` are one interval, also when a chunk edge
    falls between them; runs further apart stay apart."""
    from rnea_ros.tools.bag.statistics import ViolationTracker

    t = np.arange(0.0, 2.0, 0.001)
    x = np.zeros((t.size, 2))
    x[1000:1030:2, 0] = 1500.0  # 15 crossings within 30 ms, over a chunk edge at 1010
    x[1500, 0] = -1200.0  # 470 ms later: another interval
    x[1020, 1] = 1100.0
    tracker = ViolationTracker(["a", "b"], np.array([1000.0, 1000.0]), "effort_rate", 0.05)
    for part in (slice(0, 1010), slice(1010, 1400), slice(1400, None)):
        tracker.add(t[part], x[part])
    found = [(v.joint, round(v.start, 3), round(v.end, 3), v.peak) for v in tracker.close()]
    assert found == [("a", 1.0, 1.028, 1500.0), ("b", 1.02, 1.02, 1100.0),
                     ("a", 1.5, 1.5, -1200.0)]
    assert tracker.close() == tracker.close()  # closing again adds nothing


@pytest.mark.parametrize(("window", "order"), [(51, 4), (11, 3), (101, 6)])
def test_noise_estimate_and_rate_gain_are_those_of_white_noise(window: int, order: int) -> None:
    """Identities the threshold rests on: the estimated deviation of white noise on a smooth
    signal is its deviation, and the filtered rate of white noise has the deviation
    ``sigma * rate_gain``; beyond 5 of them, the Gaussian tail (2.9e-7 a side)."""
    from rnea_ros.tools.bag.differentiation import effort_rate, noise_sigma, rate_gain

    rng = np.random.default_rng(7)
    dt, sigma = 1e-3, np.array([0.5, 1.0, 2.0])
    t = np.arange(200_000) * dt
    smooth = np.column_stack([30.0 * np.sin(t), 5.0 * np.cos(2.0 * t), 0.0 * t])
    noise = rng.normal(0.0, 1.0, smooth.shape) * sigma
    assert np.allclose(noise_sigma(smooth + noise), sigma, rtol=0.01)
    rate = effort_rate(noise, dt, window, order)[window:-window]
    expected = sigma * rate_gain(window, order, dt)
    assert np.allclose(rate.std(axis=0), expected, rtol=0.02)
    # 600,000 samples at 5.7e-7 (both sides): 0.34 expected, of correlated samples
    assert (np.abs(rate) > 5.0 * expected).sum() <= 3


def test_many_violations_stay_readable_and_all_in_the_csv(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """250 real effort violations: report.md lists 200 and says where the rest are;
    violations.csv has every one, once."""
    spikes = [(0.1 + 0.07 * k, 0.005, 4, 20.0) for k in range(250)]  # joint5, limit 12
    bag = tmp_path / "b"
    write_bag(bag, MODEL, duration=17.8, noise=0.5, seed=2, spikes=spikes)
    out = tmp_path / "o"
    code, _, err = run([str(bag), "--urdf", URDF, "--out", str(out), "--no-plots"], capsys)
    assert code == 0, err
    rows = read_violations(out)
    efforts = [r for r in rows if r["kind"] == "effort"]
    assert len(efforts) == 250 and {r["joint"] for r in efforts} == {"joint5"}
    starts = np.array([float(r["start_s"]) for r in efforts])
    assert np.allclose(starts, [s[0] for s in spikes], atol=1.5e-3)
    report = (out / "report.md").read_text()
    assert report.count("| joint5 | effort |") == 200
    assert f"{len(rows) - 200} more in `violations.csv`." in report
