"""A user's own URDF and numba's cache: the kernels are generic over the model.

What the shipped robots compile (``rnea-precompile`` at install, or their first start)
serves a robot that is not shipped -- other joint and link names, other masses, another
number of joints -- of the same kind: its nodes start without compiling. And
``rnea-precompile --urdf`` compiles a robot of the user's own with its two parameter
files.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numba.core.event as ev
import pytest

from rnea_ros.control import command
from rnea_ros.core.dynamics import _rnea_jit
from rnea_ros.nodes import precompile as pc
from rnea_ros.nodes.precompile import main as precompile_main
from rnea_ros.samples import RobotFiles, robot_files

ROOT = Path(__file__).resolve().parents[2]


def user_arm(folder: Path) -> tuple[Path, Path, Path]:
    """arm7 as a user's own robot: joints ``axis_1..7``, links ``seg_0..8``, every mass
    x 1.3; its controller and simulator files with those joint names. Returns (urdf,
    controller file, simulator file)."""
    urdf = (ROOT / "urdf" / "arm7.urdf").read_text()
    urdf = re.sub(r"joint(\d)", r"axis_\1", urdf.replace('name="arm7"', 'name="user_arm"'))
    urdf = re.sub(r"link(\d)", r"seg_\1", urdf)
    urdf = re.sub(r'mass value="([0-9.e-]+)"',
                  lambda m: f'mass value="{1.3 * float(m.group(1)):.6f}"', urdf)
    paths = folder / "user_arm.urdf", folder / "user_ctl.yaml", folder / "user_sim.yaml"
    paths[0].write_text(urdf)
    for kind, path in zip(("controller", "simulator"), paths[1:], strict=True):
        text = (ROOT / "config" / f"arm7_{kind}.yaml").read_text()
        path.write_text(re.sub(r"joint(\d)", r"axis_\1", text))
    return paths


class Compiles(ev.Listener):
    """The functions numba compiles (not loads) while registered."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def on_start(self, event: Any) -> None:
        self.names.append(event.data["dispatcher"].py_func.__qualname__)

    def on_end(self, event: Any) -> None:
        pass


def build_controllers(urdf: Path, params: Path, modes: tuple[str, ...]) -> None:
    """Construct (and destroy) the controller node in each mode, as a start does."""
    with pc.quiet_context() as context:
        for mode in modes:
            files = RobotFiles(name=urdf.stem, urdf=urdf, controller=params,
                                  simulator=params, ros2_controllers=None, gazebo=None)
            pc.build(pc.Variant("controller", (("mode", mode),)), files, context)


def test_a_user_urdf_starts_on_the_kernels_a_shipped_robot_compiled(tmp_path: Path) -> None:
    """two_link_rr's controller in gravity and inverse-dynamics mode (compiled now or
    loaded from this checkout's cache); then the user's 7-joint arm in both modes
    compiles nothing: the entries called per state (``gravity_command``,
    ``inverse_dynamics_command``, ``gravity_call``) keep one signature each."""
    modes = ("gravity", "inverse_dynamics")
    shipped = robot_files("two_link_rr")
    build_controllers(shipped.urdf, shipped.controller, modes)
    entries: tuple[Any, ...] = (command.gravity_command, command.inverse_dynamics_command,
               _rnea_jit.gravity_call)
    before = [list(d.signatures) for d in entries]
    urdf, controller, _ = user_arm(tmp_path)
    compiles = Compiles()
    ev.register("numba:compile", compiles)  # type: ignore[no-untyped-call]
    try:
        build_controllers(urdf, controller, modes)
    finally:
        ev.unregister("numba:compile", compiles)  # type: ignore[no-untyped-call]
    assert compiles.names == [], compiles.names
    assert [list(d.signatures) for d in entries] == before
    # The command entries are called from Python: one signature each. gravity_call is
    # their callee: when they load from numba's cache its dispatcher gets no signature
    # of its own in this process (it has one when it was compiled here or called
    # directly by an earlier test), never two.
    assert [len(sigs) for sigs in before[:2]] == [1, 1], before
    assert len(before[2]) <= 1, before[2]


def test_precompile_a_user_urdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``rnea-precompile --urdf ... --controller-config ... --simulator-config ...``
    builds that robot's nodes (the fixed-base ones: also on a moving base with an IMU)
    and no shipped robot's; a missing file or parameter file is refused in one line
    (before: no such option, only the shipped robots)."""
    urdf, controller, simulator = user_arm(tmp_path)
    assert precompile_main(["--urdf", str(urdf), "--controller-config", str(controller),
                            "--simulator-config", str(simulator)]) == 0
    out = capsys.readouterr().out
    assert "user_arm" in out and "controller inverse_dynamics + IMU" in out, out
    assert "five_bar" not in out and "arm7" not in out, out
    with pytest.raises(SystemExit) as exc:
        precompile_main(["--urdf", str(urdf), "--controller-config", str(controller)])
    assert exc.value.code == 2
    assert "--urdf needs --controller-config and --simulator-config" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        precompile_main(["--urdf", str(tmp_path / "none.urdf"), "--controller-config",
                         str(controller), "--simulator-config", str(simulator)])
    assert exc.value.code == 2
    assert f"no file {tmp_path / 'none.urdf'}" in capsys.readouterr().err
