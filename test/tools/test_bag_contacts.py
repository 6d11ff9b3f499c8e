"""rnea-bag's contacts.csv against an independent engine: arm7 in MuJoCo
(rnea_ros.simulation.mujoco_backend), lockstep computed-torque tracking at full speed,
pushes of 30 N on link3 ... link7 at known times (MuJoCo's xfrc_applied at the link's
centre of mass), recorded as a bag by rnea_ros.tools.synthetic_bag.record_contacts
(effort = the torque applied). rnea-bag sees only the bag and the URDF.

Thresholds are proposed by rnea-bag itself from a contact-free recording
(--propose-contact-thresholds, margin 2) and used on the others: every push is a row
of contacts.csv at its link, starting within the observer's delay (30 ms) of the push,
with peak_nm within 10 % of max |J^T F|; a contact-free run gives no row; a bag
without efforts or velocities gives no contacts.csv and says why."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import yaml

from rnea_ros.control.contact import DetectionSettings, episodes, residuals
from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.simulation.mujoco_backend import MujocoSimulator
from rnea_ros.tools.bag import main
from rnea_ros.tools.synthetic_bag import ContactPush, record_contacts

VISCOUS = 0.3  # [N m s/rad]: MuJoCo's joint damping, and the URDF's <dynamics damping>
PUSHES = [ContactPush(f"link{i}", 0.4 + 0.6 * (i - 3), 0.3, 30.0) for i in range(3, 8)]
DELAY = 0.030  # [s] detection within this of the push's start
RELEASE = 0.25  # [s] released within this after the push's end


def arm7():
    model = load_robot("arm7")
    return model.replace(viscous=np.full(model.nv, VISCOUS))


@pytest.fixture(scope="module")
def urdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """arm7's URDF with the plant's viscous friction in <dynamics>."""
    text = sample_urdf("arm7").read_text().replace('damping="0.0"', f'damping="{VISCOUS}"')
    path = tmp_path_factory.mktemp("urdf") / "arm7_damped.urdf"
    path.write_text(text)
    return path


def record(path: Path, pushes: list[ContactPush], duration: float, phase: float,
           **kwargs: bool) -> dict[str, np.ndarray]:
    model = arm7()
    plant = MujocoSimulator(sample_urdf("arm7"), model, dt=1e-3, damping=model.viscous,
                            contacts=False)
    return record_contacts(path, model, plant, pushes, duration=duration, phase=phase,
                           **kwargs)


def contacts(out: Path) -> list[dict[str, str]]:
    with open(out / "contacts.csv", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def run(bag: Path, urdf: Path, out: Path, *extra: str) -> None:
    assert main([str(bag), "--urdf", str(urdf), "--out", str(out), "--quiet", *extra]) == 0


@pytest.fixture(scope="module")
def calibrated(urdf: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """rnea-bag's proposal from a contact-free recording at full speed."""
    tmp = tmp_path_factory.mktemp("calibration")
    record(tmp / "free", [], 3.0, 0.0)
    code = main([str(tmp / "free"), "--urdf", str(urdf), "--out", str(tmp / "out"), "--quiet",
                 "--propose-contact-thresholds", "--no-plots"])
    assert code == 0
    assert contacts(tmp / "out") == []
    return tmp / "out" / "contact_thresholds.yaml"


@pytest.fixture(scope="module")
def pushed(urdf: Path, calibrated: Path, tmp_path_factory: pytest.TempPathFactory
           ) -> tuple[dict[str, np.ndarray], Path]:
    tmp = tmp_path_factory.mktemp("pushed")
    truth = record(tmp / "bag", PUSHES, 3.4, 0.7)
    run(tmp / "bag", urdf, tmp / "out", "--contact-thresholds", str(calibrated))
    return truth, tmp / "out"


def test_the_proposal_is_a_controller_parameter_fragment(calibrated: Path) -> None:
    params = yaml.safe_load(calibrated.read_text())["/**"]["ros__parameters"]
    th = np.array(params["contact.thresholds"])
    assert th.shape == (7,) and (th >= 0.05).all() and (th < 1.0).all(), th


def test_every_push_is_a_row_at_its_link_and_time(pushed: tuple[dict[str, np.ndarray], Path]
                                                  ) -> None:
    truth, out = pushed
    rows = contacts(out)
    assert [r["link"] for r in rows] == [p.link for p in PUSHES]
    t0 = truth["t"][0]
    for push, row in zip(PUSHES, rows, strict=True):
        start, end = float(row["start_s"]), float(row["end_s"])
        assert push.start <= start <= push.start + DELAY, (push.link, start)
        assert push.start + push.duration <= end < push.start + push.duration + RELEASE
        window = (truth["t"] - t0 >= push.start) & (truth["t"] - t0 < push.start + push.duration)
        true_peak = np.abs(truth["tau_ext"][window]).max()
        assert abs(float(row["peak_nm"]) - true_peak) <= 0.10 * true_peak, (push.link,
                                                                           row["peak_nm"],
                                                                           true_peak)


def test_the_report_plots_the_residuals_and_lists_the_contacts(
        pushed: tuple[dict[str, np.ndarray], Path]) -> None:
    _, out = pushed
    assert (out / "contacts.png").stat().st_size > 10_000
    report = (out / "report.md").read_text()
    assert "## Contacts" in report and "![contacts](contacts.png)" in report
    assert "| link7 | joint7 |" in report
    assert "Proposed thresholds" not in report  # nothing proposed on this run
    assert "data:image/png;base64" in (out / "report.html").read_text()


def test_streaming_in_chunks_gives_the_batch_episodes(
        pushed: tuple[dict[str, np.ndarray], Path], urdf: Path, calibrated: Path,
        tmp_path: Path) -> None:
    """Chunks of 500 samples (the observer and detector carried across) give the rows of
    one rnea_ros.control.contact.episodes over the whole recording."""
    truth, out = pushed
    run(out.parent / "bag", urdf, tmp_path / "chunked", "--contact-thresholds",
        str(calibrated), "--chunk", "500", "--no-plots")
    model = arm7()
    th = np.array(yaml.safe_load(calibrated.read_text())["/**"]["ros__parameters"]
                  ["contact.thresholds"])
    r = residuals(model, truth["t"], truth["q"], truth["qd"], truth["tau"], 100.0)
    settings = DetectionSettings(th, np.zeros(7), np.zeros(7), 0.5, 0.002)
    events = episodes(model, settings, truth["t"], r, truth["qd"])
    rows = contacts(tmp_path / "chunked")
    assert rows == contacts(out)
    assert len(rows) == len(events) == len(PUSHES)
    t0 = truth["t"][0]
    for row, event in zip(rows, events, strict=True):
        assert row["link"] == event.link and row["joint"] == event.joint
        assert float(row["start_s"]) == pytest.approx(event.start_s - t0, abs=1e-6)
        assert float(row["end_s"]) == pytest.approx(event.end_s - t0, abs=1e-6)
        assert float(row["peak_nm"]) == pytest.approx(event.peak_nm, rel=1e-9)


@pytest.mark.parametrize("phase", [1.3, 2.1])
def test_no_row_without_contact(urdf: Path, calibrated: Path, tmp_path: Path,
                                phase: float) -> None:
    record(tmp_path / "bag", [], 3.0, phase)
    run(tmp_path / "bag", urdf, tmp_path / "out", "--contact-thresholds", str(calibrated),
        "--no-plots")
    assert contacts(tmp_path / "out") == []
    assert "No contact" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.parametrize("missing", ["efforts", "velocities"])
def test_no_contacts_csv_without_efforts_or_velocities(urdf: Path, tmp_path: Path,
                                                       missing: str) -> None:
    record(tmp_path / "bag", PUSHES[:1], 0.8, 0.0, **{missing: False})
    run(tmp_path / "bag", urdf, tmp_path / "out", "--no-plots")
    assert not (tmp_path / "out" / "contacts.csv").exists()
    report = (tmp_path / "out" / "report.md").read_text().splitlines()
    why = [line for line in report if line.startswith("None: contacts not observed")]
    assert len(why) == 1 and f"no {missing}" in why[0], why


def test_bad_thresholds_are_refused_naming_the_joints(urdf: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    record(tmp_path / "bag", [], 0.2, 0.0)
    code = main([str(tmp_path / "bag"), "--urdf", str(urdf), "--out", str(tmp_path / "out"),
                 "--quiet", "--contact-thresholds", "0.1", "0.2"])
    err = capsys.readouterr().err
    assert code == 1 and "2 values for the 7 joints" in err and "joint7" in err
    assert not (tmp_path / "out").exists()
    bad = tmp_path / "bad.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    other: 1\n")
    code = main([str(tmp_path / "bag"), "--urdf", str(urdf), "--out", str(tmp_path / "out"),
                 "--quiet", "--contact-thresholds", str(bad)])
    assert code == 1 and "no 'contact.thresholds'" in capsys.readouterr().err
    code = main([str(tmp_path / "bag"), "--urdf", str(urdf), "--out", str(tmp_path / "out"),
                 "--quiet", "--contact-thresholds", "-1"])
    assert code == 1 and "joint1" in capsys.readouterr().err
    for flag, value, says in (("--contact-gain", "0", "--contact-gain 0.0: must be finite"),
                              ("--contact-release", "1.5", "must be in (0, 1]"),
                              ("--contact-margin", "0.5", "must be finite and >= 1")):
        code = main([str(tmp_path / "bag"), "--urdf", str(urdf), "--out",
                     str(tmp_path / "out"), "--quiet", flag, value])
        assert code == 1 and says in capsys.readouterr().err, flag
    assert not (tmp_path / "out").exists()


def held_still(n: int, pushes: list[tuple[int, int, int, float]]
               ) -> tuple[object, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """arm7 held still by tau = g(q) - tau_ext (docs/contacts.md's example): the observer
    reads r -> tau_ext. ``pushes``: (first, stop, joint, torque) sample ranges."""
    import rnea_ros.core as rc

    model = load_robot("arm7")
    t = 1.0 + np.arange(n) * 1e-3
    q = np.tile(0.5 * (model.lower_limit + model.upper_limit), (n, 1))
    qd = np.zeros((n, model.nv))
    tau = rc.gravity_batch(model, q)
    for first, stop, joint, torque in pushes:
        tau[first:stop, joint] -= torque
    return model, t, q, qd, tau


def test_chunks_of_any_size_give_the_batch_episodes() -> None:
    from rnea_ros.tools.bag.contacts import ContactTracker

    model, t, q, qd, tau = held_still(3000, [(500, 900, 3, 2.0), (1800, 2600, 6, -1.0)])
    th = np.full(7, 0.5)
    r = residuals(model, t, q, qd, tau, 100.0)
    events = episodes(model, DetectionSettings(th, np.zeros(7), np.zeros(7), 0.5, 0.002),
                      t, r, qd)
    assert [e.link for e in events] == ["link4", "link7"]
    for sizes in ([3000], [1, 2, 997, 1000, 1000], [7] * 428 + [4]):
        tracker = ContactTracker(model, th, gain=100.0, release=0.5, min_duration=0.002,
                                 dt=1e-3)
        begin = 0
        for size in sizes:
            tracker.add(t[begin:begin + size], q[begin:begin + size],
                        qd[begin:begin + size], tau[begin:begin + size], slice(None))
            begin += size
        rows = tracker.close()
        assert [(c.start, c.end, c.link, c.joint) for c in rows] == \
            [(e.start_s, e.end_s, e.link, e.joint) for e in events], sizes
        assert [c.peak for c in rows] == pytest.approx([e.peak_nm for e in events], rel=1e-12)


def test_the_bag_uses_the_controllers_coulomb_band() -> None:
    """rnea-bag's observer takes the node's Coulomb band (default: the table's
    friction.coulomb_band; --contact-band): on a robot with Coulomb friction at rest with
    noisy recorded velocities it equals the node's monitor and the batch observer, with
    the default band and with band 0 (the exact sign), docs/contacts.md."""
    from rnea_ros.control.contact import ContactMonitor
    from rnea_ros.control.contact.observer import COULOMB_BAND
    from rnea_ros.tools.bag.cli import parse
    from rnea_ros.tools.bag.contacts import ContactTracker

    model, t, q, _, tau = held_still(1500, [])
    model = model.replace(coulomb=np.full(7, 2.0))
    qd = 1e-3 * np.random.default_rng(5).standard_normal(q.shape)
    settings = DetectionSettings(np.full(7, 5.0), np.zeros(7), np.zeros(7), 0.5, 0.002)
    assert parse(["b", "--out", "o"]).contact_band == COULOMB_BAND
    assert parse(["b", "--out", "o", "--contact-band", "0"]).contact_band == 0.0
    for band in (COULOMB_BAND, 0.0):
        tracker = ContactTracker(model, settings.thresholds, gain=50.0, release=0.5,
                                 min_duration=0.002, dt=1e-3, band=band)
        tracker.add(t, q, qd, tau, slice(None))
        monitor = ContactMonitor(model, 50.0, settings, max_gap=0.1, coulomb_band=band)
        r = np.empty_like(tau)
        for k in range(len(t)):
            monitor.update(t[k], q[k], qd[k], tau[k])
            r[k] = monitor.r
        assert np.abs(np.vstack(tracker.plot["r"]) - r).max() < 1e-9
        batch = residuals(model, t, q, qd, tau, 50.0, coulomb_band=band)
        assert np.abs(batch - r).max() < 1e-9
    # the band changes what the friction model gives at rest (else this proves nothing)
    assert np.abs(residuals(model, t, q, qd, tau, 50.0)
                  - residuals(model, t, q, qd, tau, 50.0, coulomb_band=0.0)).max() > 0.5


def test_a_gap_or_a_missing_effort_restarts_the_observer_and_ends_the_contact() -> None:
    from rnea_ros.tools.bag.contacts import ContactTracker

    model, t, q, qd, tau = held_still(2000, [(500, 2000, 3, 2.0)])
    t[1200:] += 0.5  # a gap of 500 periods inside the contact
    tau[1600, 2] = np.nan  # one sample without its effort
    tracker = ContactTracker(model, np.full(7, 0.5), gain=100.0, release=0.5,
                             min_duration=0.002, dt=1e-3)
    tracker.add(t, q, qd, tau, slice(None))
    rows = tracker.close()
    assert tracker.restarts == 2 and tracker.samples == 1999
    # the first contact ends at the last sample before the gap; after each restart the
    # observer starts at r = 0 and finds the (still pushing) contact again
    assert [c.link for c in rows] == ["link4"] * 3
    assert rows[0].end == t[1199] and rows[1].end == t[1599] and np.isnan(rows[2].end)
    assert rows[1].start > t[1200] and rows[2].start > t[1601]


def test_tools_use_the_public_faces_not_private_kernels() -> None:
    """No module under rnea_ros/tools imports a compiled kernel module (``_*_jit``):
    the offline tools call the faces (here ``residual_rows``, ``ContactDetector.rows``)
    that check inputs and keep one place for each equation."""
    import ast

    root = Path(__file__).resolve().parents[2] / "rnea_ros" / "tools"
    private = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            private += [f"{path.relative_to(root)}: {n}" for n in names
                        if any(p.startswith("_") and p.endswith("_jit") for p in n.split("."))]
    assert not private, private
