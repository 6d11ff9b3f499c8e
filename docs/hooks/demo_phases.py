"""MkDocs hook: ``demo-phases.png``, the demo's first two phases as plots.

At build time a short lockstep run of the demo's own closed loop (``rnea_ros.demo``:
its arm, gains, seed-0 start pose and sinusoid; the simulator and controller nodes
of :class:`rnea_ros.nodes.harness.ClosedLoop`, lockstep, so the curves do not depend on
the machine's load) is recorded in a subprocess (``python docs/hooks/demo_phases.py
OUT.png``: rclpy stays out of the MkDocs process) and drawn with matplotlib:

* ``[gravity]``: the joint positions ``q(t)`` [rad] while ``mode: gravity`` holds the
  random start pose ``q0`` (flat lines; the title gives the largest ``|q - q0|``);
* ``[inverse_dynamics]``: the tracking error ``|q(t) - q_ref(t)|`` per joint [rad]
  after the runtime switch, on the demo's 0.5 rad / 0.5 Hz sinusoid.

Shorter than the demo (1 s hold, 2 s tracking instead of 3 s and 5 s) to keep the
docs build fast: about 20-40 s, most of it node start-up and compilation.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGE = "demo-phases.png"
HOLD, TRACK = 1.0, 2.0  # s


def record() -> tuple[Any, Any, Any, Any]:
    """The two phases: ``(t_hold, q_hold, t_track, err_track)``: times [s] from each
    phase's start, the held positions and the absolute tracking errors (samples, 7) [rad]."""
    import numpy as np

    from rnea_ros import demo
    from rnea_ros.nodes.harness import ClosedLoop, track_sinusoid

    rng = np.random.default_rng(0)  # the demo's default seed: the same start pose
    model = demo.load_robot("arm7")
    demo.check_model(200, rng)  # draws what the demo draws before the start pose
    mid = 0.5 * (model.lower_limit + model.upper_limit)
    q0 = rng.uniform(mid - 0.5, mid + 0.5)
    with ClosedLoop({"urdf_path": demo.URDF, "watchdog_timeout": 1.0, **demo.GAINS},
                    {"urdf_path": demo.URDF, "initial_positions": q0.tolist()}) as loop:
        if not loop.run_for(HOLD, wall_timeout=30 + 10 * HOLD):
            raise RuntimeError("the closed loop did not run (no DDS traffic?)")
        t_hold = np.array(loop.probe.recording.t)
        held = np.array(loop.probe.recording.q)[:, :q0.size]
        q_hold = loop.probe.recording.q[-1]
        result = loop.set_controller_parameters({"mode": "inverse_dynamics"})[0]
        if not result.successful:
            raise RuntimeError(f"mode switch refused: {result.reason}")
        t, error, start = track_sinusoid(loop, np.asarray(q_hold), 0.5, 2 * np.pi * 0.5, TRACK)
    return t_hold - t_hold[0], held, t - start, np.abs(error)


def draw(path: str) -> None:
    """Record the phases and write the figure to ``path`` (PNG, no timestamp in it)."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t_hold, held, t_track, err_track = record()
    drift = float(np.abs(held - held[0]).max())
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), constrained_layout=True)
    for j in range(held.shape[1]):
        axes[0].plot(t_hold, held[:, j], lw=1.2, label=f"joint{j + 1}")
        axes[1].semilogy(t_track, np.maximum(err_track[:, j], 1e-9), lw=1)
    axes[0].set_title(f"[gravity] {HOLD:g} s hold of the start pose: max |q - q0| "
                      f"{drift:.1e} rad", fontsize=10)
    axes[1].set_title(f"[inverse_dynamics] 0.5 rad / 0.5 Hz sinusoid, {TRACK:g} s",
                      fontsize=10)
    for ax in axes:
        ax.set_xlabel("time [s]")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("q [rad]")
    axes[1].set_ylabel("|q - q_ref| [rad]")
    axes[0].legend(fontsize=7, ncol=4, loc="center right")
    fig.savefig(path, dpi=110, metadata={"Software": None})


def render() -> bytes:
    """The PNG, drawn in a subprocess (rclpy and the nodes stay out of MkDocs)."""
    env = {**os.environ, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    with tempfile.TemporaryDirectory(prefix="rnea-docs-demo-") as tmp:
        out = Path(tmp) / PAGE
        done = subprocess.run([sys.executable, __file__, str(out)], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0 or not out.is_file():
            raise RuntimeError(f"{PAGE}: the demo run failed (exit {done.returncode}):\n"
                               f"{done.stderr[-2000:]}")
        return out.read_bytes()


def on_files(files: Any, config: Any) -> Any:
    """Adds the generated ``demo-phases.png``."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=render()))
    return files


if __name__ == "__main__":
    draw(sys.argv[1])
