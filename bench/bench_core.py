"""Speed of the dynamics core against Pinocchio's Python bindings, in one run.

Prints, for Panda and UR5 (example-robot-data), per-call times of our RNEA and
gravity against ``pinocchio.rnea`` / ``computeGeneralizedGravity``, of the
elastic-joint inverse dynamics (motors on every joint, every other joint
elastic) against our RNEA and Pinocchio's on the rotor-augmented tree, the
per-sample time of our batch RNEA over 10^4 samples against
``pinocchio.rneaInParallel`` with one thread, and the start-up cost of the
compiled kernels (cold compile and cached). Timings are the best of several
repeats; the ratios are what matter (targets from the foundation issue).

    python bench/bench_core.py            # or: make bench
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pinocchio as pin
from timing import best_pair, best_time, best_times  # the script's directory is on sys.path

from rnea_ros.core.dynamics.gfd import rnea_time_derivative
from rnea_ros.core.dynamics.rnea import gravity_torques, rnea, rnea_batch
from rnea_ros.core.elastic.fd import forward_dynamics
from rnea_ros.core.elastic.hybrid import forward_dynamics_recursive
from rnea_ros.core.elastic.model import JointDrive, MotorSpec, elastic_model
from rnea_ros.core.elastic.rnea import elastic_rnea
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.oracle import AugmentedOracle, PinocchioOracle
from rnea_ros.samples import load_robot, robot_urdf

TARGETS = {"rnea": 1.5, "gravity": 1.5}  # ours / Pinocchio per call, at most
GFD_OF_RNEA = 2.2  # tau and tau_dot together / our RNEA, per call, at most
GFD_OF_CHAIN = 2.0  # Pinocchio's chain-rule route / ours, per call, at least
ELASTIC_OF_RNEA = 3.0  # elastic inverse dynamics (hua-2024 Alg. 1) / our RNEA, per call, at most
BATCH_TARGET = 2.0  # Pinocchio / ours per sample, at least






def startup_times() -> tuple[float, float]:
    """(cold, cached) seconds for import + first RNEA call in a fresh interpreter."""
    code = ("import time; t = time.perf_counter()\n"
            "import numpy as np\n"
            "from rnea_ros.core.dynamics.rnea import rnea, gravity_torques\n"
            "from rnea_ros.samples import load_robot\n"
            "m = load_robot('panda'); z = np.zeros(m.nv)\n"
            "rnea(m, z, z, z); gravity_torques(m, z)\n"
            "print(time.perf_counter() - t)")
    times = []
    for cache in ("0", "1"):
        env = dict(os.environ, RNEA_ROS_NO_JIT_CACHE="1" if cache == "0" else "0")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return times[0], times[1]


def bench_robot(name: str, samples: int) -> list[tuple[str, float, float, float, bool]]:
    model = load_robot(name).without_friction()
    oracle = PinocchioOracle(robot_urdf(name), model)
    pm, pd = oracle.pm, oracle.pd
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    pq, pv, pa = oracle.config(q), oracle.tangent(qd), oracle.tangent(qdd)
    rows = []
    for label, ours, theirs in (
        ("rnea", lambda: rnea(model, q, qd, qdd), lambda: pin.rnea(pm, pd, pq, pv, pa)),
        ("gravity", lambda: gravity_torques(model, q),
         lambda: pin.computeGeneralizedGravity(pm, pd, pq)),
    ):
        ours(), theirs()
        t_ours, t_pin = best_pair(ours, theirs, 20000)
        ratio = t_ours / t_pin
        rows.append((f"{label} per call", t_ours, t_pin, ratio, ratio <= TARGETS[label]))
    qddd = rng.uniform(-1, 1, model.nv)
    pj = oracle.tangent(qddd)

    def chain_rule() -> Any:
        pin.computeRNEADerivatives(pm, pd, pq, pv, pa)
        return pd.dtau_dq @ pv + pd.dtau_dv @ pa + pin.crba(pm, pd, pq) @ pj

    gfd = lambda: rnea_time_derivative(model, q, qd, qdd, qddd)  # noqa: E731
    ours_rnea = lambda: rnea(model, q, qd, qdd)  # noqa: E731
    gfd(), chain_rule()
    # interleaved, so that a load drifting during the run weighs on the ratio's both sides
    t_gfd, t_rnea, t_chain = best_times((gfd, ours_rnea, chain_rule), 20000)
    rows.append(("tau+tau_dot per call vs our rnea", t_gfd, t_rnea, t_gfd / t_rnea,
                 t_gfd / t_rnea <= GFD_OF_RNEA))
    rows.append(("tau_dot vs Pinocchio chain rule", t_gfd, t_chain, t_gfd / t_chain,
                 t_chain / t_gfd >= GFD_OF_CHAIN))
    rows += bench_elastic(model, name, q, qd, qdd, rng)
    Q, QD, QDD = (rng.uniform(-1, 1, (samples, model.nv)) for _ in range(3))
    PQ = np.array([oracle.config(x) for x in Q]).T.copy()
    PV, PA = (np.array([oracle.tangent(x) for x in X]).T.copy() for X in (QD, QDD))
    pool = pin.ModelPool(pm, 1)
    rnea_batch(model, Q[:2], QD[:2], QDD[:2])
    t_ours = best_time(lambda: rnea_batch(model, Q, QD, QDD), 1, 5) / samples
    t_pin = best_time(lambda: pin.rneaInParallel(1, pool, PQ, PV, PA), 1, 5) / samples
    rows.append((f"batch rnea ({samples} samples), per sample", t_ours, t_pin, t_ours / t_pin,
                 t_pin / t_ours >= BATCH_TARGET))
    return rows


def elastic_drives(model: RobotModel) -> list[JointDrive]:
    """A motor on every joint's parent link, every other joint elastic (K = 1000 N m/rad)."""
    link_of = {-1: model.root_link}
    for link, frame in model.frames.items():
        link_of.setdefault(frame.body, link)
    return [JointDrive(j, stiffness=1000.0 if i % 2 == 0 else None, motor=MotorSpec(
        link_of[int(model.parent[i])], inertia=(0.002, 0.002, 0.001), gear_ratio=50.0,
        axis=(0.0, 0.0, 1.0), position=(0.0, 0.0, 0.05), mass=0.5))
        for i, j in enumerate(model.joint_names)]


def bench_elastic(model: RobotModel, name: str, q: Any, qd: Any, qdd: Any,
                  rng: np.random.Generator) -> list[tuple[str, float, float, float, bool]]:
    """Elastic inverse dynamics against our RNEA (target) and Pinocchio's RNEA on the
    augmented tree (rotors as bodies: the same physics), and the two forward dynamics."""
    elastic = elastic_model(model, elastic_drives(model))
    oracle = AugmentedOracle(robot_urdf(name), elastic)
    ne = elastic.n_elastic
    theta, thetad, thetadd = (rng.uniform(-1, 1, ne) for _ in range(3))
    e = elastic.elastic_joints
    theta = q[e] + 0.01 * theta
    G = oracle.G
    yd, ydd = np.r_[qd, thetad], np.r_[qdd, thetadd]
    x, xd, xdd = oracle._config(q, theta), G @ yd, G @ ydd
    pm, pd = oracle.o.pm, oracle.pd
    ours = lambda: elastic_rnea(elastic, q, theta, qd, thetad, qdd, thetadd)  # noqa: E731
    ours_rnea = lambda: rnea(model, q, qd, qdd)  # noqa: E731
    theirs = lambda: pin.rnea(pm, pd, x, xd, xdd)  # noqa: E731
    ours(), ours_rnea(), theirs()
    t_el, t_rnea, t_pin = best_times((ours, ours_rnea, theirs), 20000)  # interleaved
    tau = ours().tau
    fd_rec = lambda: forward_dynamics_recursive(elastic, q, theta, qd, thetad, tau)  # noqa: E731
    fd_alg2 = lambda: forward_dynamics(elastic, q, theta, qd, thetad, tau)  # noqa: E731
    fd_rec(), fd_alg2()
    t_rec, t_alg2 = best_time(fd_rec, 2000), best_time(fd_alg2, 2000)
    return [("elastic ID per call vs our rnea", t_el, t_rnea, t_el / t_rnea,
             t_el / t_rnea <= ELASTIC_OF_RNEA),
            ("elastic ID vs pin.rnea, augmented tree", t_el, t_pin, t_el / t_pin, True),
            ("elastic FD Khalil vs Algorithm 2", t_rec, t_alg2, t_rec / t_alg2, True)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Core speed against Pinocchio")
    parser.add_argument("--robots", nargs="+", default=["panda", "ur5"])
    parser.add_argument("--samples", type=int, default=10_000)
    args = parser.parse_args(argv)
    cold, cached = startup_times()
    print(f"pinocchio {pin.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"start-up (import + load Panda + first rnea and gravity): "
          f"cold compile {cold:.1f} s, from the on-disk cache {cached:.2f} s\n")
    print(f"{'robot':<8}{'measure':<40}{'ours us':>9}{'pin us':>9}{'ours/pin':>10}  target")
    failures = 0
    for name in args.robots:
        for label, t_ours, t_pin, ratio, ok in bench_robot(name, args.samples):
            if label.startswith("tau+tau_dot"):
                target = f"<= {GFD_OF_RNEA} (the 'pin' column is our rnea)"
            elif label.startswith("elastic ID per call"):
                target = f"<= {ELASTIC_OF_RNEA} (the 'pin' column is our rnea)"
            elif label.startswith("elastic ID vs"):
                target = "(information: Pinocchio with the rotors as bodies)"
            elif label.startswith("elastic FD"):
                target = "(information: the 'pin' column is our Algorithm 2)"
            elif label.startswith("tau_dot"):
                target = f"chain/ours >= {GFD_OF_CHAIN} (got {1 / ratio:.2f})"
            elif "per call" in label:
                target = f"<= {TARGETS[label.split()[0]]}"
            else:
                target = f"pin/ours >= {BATCH_TARGET} (got {1 / ratio:.2f})"
            print(f"{name:<8}{label:<40}{t_ours * 1e6:9.3f}{t_pin * 1e6:9.3f}{ratio:10.2f}  "
                  f"{target} {'ok' if ok else 'MISSED'}")
            failures += not ok
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
