"""rnea-bag on bags written from simulated runs with known dynamics."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from rnea_ros.oracle import PinocchioOracle
from rnea_ros.samples import example_robot_urdf, load_robot, sample_urdf
from rnea_ros.tools.bag import Options, analyse, main
from rnea_ros.tools.synthetic_bag import write_bag

MODEL = load_robot("arm7")
URDF = str(sample_urdf("arm7"))
NOISE, OFFSET = 0.05, 0.1
SPIKE = (1.5, 0.01, 4, 20.0)  # start [s], length [s], joint index, effort [N m] > 12 limit


@pytest.fixture(scope="module", params=["mcap", "sqlite3"])
def bag(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bags") / f"run_{request.param}"
    oracle = PinocchioOracle(URDF, MODEL)  # ground truth from an engine that is not ours
    friction = MODEL.coulomb, MODEL.viscous

    def truth(Q, QD, QDD):
        return np.array([oracle.rnea(*s) + friction[0] * np.sign(s[1]) + friction[1] * s[1]
                         for s in zip(Q, QD, QDD, strict=True)])
    write_bag(path, MODEL, duration=3.0, noise=NOISE, command_offset=OFFSET,
              storage=request.param, spikes=[SPIKE], nan_samples=[700, 701],
              robot_description=Path(URDF).read_text(), inverse_dynamics=truth)
    return path


def test_residual_matches_the_injected_noise_and_finds_the_violation(bag: Path,
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert main([str(bag), "--urdf", URDF, "--out", str(out), "--quiet", "--series", "csv"]) == 0
    analysis, stats = analyse(Options(bag=bag, out=tmp_path / "again", urdf=Path(URDF),
                                      plots=False, progress=False))
    table = analysis.model_vs_measured.table()
    others = [j for j in range(MODEL.nv) if j != SPIKE[2]]
    assert np.allclose(table["rms"][others], NOISE, rtol=0.1)
    assert np.all(np.abs(table["bias"][others]) < 0.01)
    command = analysis.command_vs_measured.table()
    assert np.allclose(command["bias"][others], OFFSET, atol=0.01)
    assert stats["skipped_nan"] == 2 and analysis.written == 3000 - 2
    efforts = [v for v in analysis.effort_violations.close()]
    assert len(efforts) == 1
    v = efforts[0]
    start = 1.0 + SPIKE[0]  # the synthetic bag's clock starts at 1 s
    assert v.joint == "joint5" and v.peak == SPIKE[3] and v.limit == 12.0
    assert start - 1e-6 <= v.start <= start + 1e-3 and v.end == pytest.approx(start + 0.009,
                                                                             abs=1.5e-3)
    report = (out / "report.md").read_text()
    assert "| joint5 | effort |" in report and "Model - measured effort" in report
    assert "| rate [Hz] | 1000.0 |" in report and "| command rate [Hz] (receive time) | 1000.0 |" \
        in report and "| holes (> 1.5 periods: new segment) | 1 |" in report
    assert all((out / f"joint_{j}.png").stat().st_size > 10000 for j in MODEL.joint_names)
    with open(out / "series.csv", newline="") as stream:
        rows = list(csv.reader(stream))
    assert len(rows) == 1 + analysis.written and rows[0][0] == "t"
    assert len(rows[0]) == 1 + 10 * MODEL.nv


def test_chunked_processing_gives_the_same_result(bag: Path, tmp_path: Path) -> None:
    small, _ = analyse(Options(bag=bag, out=tmp_path / "a", urdf=Path(URDF), chunk=300,
                               plots=False, progress=False))
    large, _ = analyse(Options(bag=bag, out=tmp_path / "b", urdf=Path(URDF), chunk=100000,
                               plots=False, progress=False))
    a, b = small.model_vs_measured.table(), large.model_vs_measured.table()
    for key in ("rms", "bias", "max"):
        assert np.allclose(a[key], b[key], rtol=1e-9, atol=1e-12)


def test_robot_from_the_bag_and_receive_time_base(bag: Path, tmp_path: Path) -> None:
    analysis, _ = analyse(Options(bag=bag, out=tmp_path / "r", time_base="receive",
                                  plots=False, progress=False))
    assert analysis.model.name == "arm7" and analysis.written == 2998


@pytest.mark.parametrize(("args", "message"), [
    (["/nonexistent/bag"], "does not exist"),
    (["{bag}", "--states-topic", "/foo"], "topic '/foo' is not in the bag; topics:"),
    (["{bag}", "--urdf", str(example_robot_urdf("ur5"))], "no usable joint state"),
    (["{bag}", "--joints", "joint1", "elbow"], "--joints elbow not in the robot"),
    (["{corrupt}"], "cannot read bag"),
    (["{bare}"], "no robot: pass --urdf"),
])
def test_bad_input_gives_one_clear_message(args, message: str, bag: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    corrupt = tmp_path / "corrupt.mcap"
    corrupt.write_bytes(b"this is not a bag" * 100)
    bare = tmp_path / "bare"
    if "{bare}" in args:
        write_bag(bare, MODEL, duration=0.3, storage="mcap")
    argv = [a.format(bag=bag, corrupt=corrupt, bare=bare) for a in args]
    assert main([*argv, "--out", str(tmp_path / "o"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1
