"""Speed of the platform + legs inverse dynamics (Khalil 2010 §5) against our tree RNEA.

For the Gough-Stewart platform and the Delta robot (``urdf/*.urdf`` + loop
files), per call and per sample of a batch: ``rc.platform_inverse_dynamics``
(inverse geometric models, leg Jacobians, each leg's RNEA, the platform's
Newton-Euler wrench and eq. 66's solve) next to ``rc.rnea`` on the equivalent
spanning tree at the same state (its tree torques, which a closed-loop
formulation would still have to project, eq. 55). Issue target: closed-loop
inverse dynamics at most 3x the tree RNEA per call. Also, for information,
Pinocchio's constrained forward dynamics against ours, per call, and the share
of the batch that is the legs' RNEA (``rnea_rows`` on the legs' packed rows at
their states; the rest is the legs' inverse geometry and rates and the
platform). Timings are the best of several repeats (the batch rows
interleaved), measured in the same run.

    python bench/bench_parallel.py            # or: make bench
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np
from timing import best_time, best_times  # the script's directory is on sys.path

import rnea_ros.core as rc
from rnea_ros.core.coupling.loop_file import loop_file_path
from rnea_ros.core.coupling.parallel_model import quaternion_of
from rnea_ros.core.dynamics._rnea_jit import rnea_rows
from rnea_ros.loop_oracle import LoopOracle
from rnea_ros.samples import share_directory

TARGET = 3.0  # platform + legs inverse dynamics / tree RNEA, per call, at most
ROBOTS = {"gough_stewart": rc.GoughStewart, "delta": rc.DeltaRobot}




def random_states(robot: rc.ParallelRobot, count: int, seed: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reachable platform states around the pose with the active joints at 0."""
    rng = np.random.default_rng(seed)
    home = rc.platform_forward_geometry(robot, np.zeros(robot.nv))
    xs: list[np.ndarray] = []
    while len(xs) < count:
        x = home + rng.uniform(-0.08, 0.08, robot.nx)
        if robot.nx == 7:
            x[3:] = quaternion_of(rc.link_pose(robot.tree, np.zeros(robot.tree.nv),
                                               robot.platform)[0])
            x[3:] += rng.normal(0.0, 0.05, 4)
            x[3:] /= np.linalg.norm(x[3:])
        try:
            rc.platform_tree_state(robot, x)
        except rc.ParallelRobotError:
            continue
        xs.append(x)
    return (np.array(xs), rng.normal(0.0, 0.3, (count, robot.nv)),
            rng.normal(0.0, 3.0, (count, robot.nv)))




def legs_state(robot: rc.ParallelRobot, X: np.ndarray, XD: np.ndarray, XDD: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every leg's ``q, qd, qdd`` (N, 3m) at the samples, in ``leg_floats``' row order."""
    from rnea_ros.core.coupling.parallel_kinematics import _detail

    legs = np.array([_detail(robot, *s)[0] for s in zip(X, XD, XDD, strict=True)])
    n = len(X)
    return (legs[:, :, 0:3].reshape(n, -1).copy(), legs[:, :, 3:6].reshape(n, -1).copy(),
            legs[:, :, 6:9].reshape(n, -1).copy())


def bench_robot(name: str, samples: int) -> list[tuple[str, float, float, float, bool | None]]:
    urdf = share_directory() / "urdf" / f"{name}.urdf"
    robot = ROBOTS[name].from_urdf(urdf)
    tree = robot.tree
    X, XD, XDD = random_states(robot, 64, seed=1)
    x, xd, xdd = X[0], XD[0], XDD[0]
    q, qd, qdd = rc.platform_tree_state(robot, x, xd, xdd)
    ours = lambda: rc.platform_inverse_dynamics(robot, x, xd, xdd)  # noqa: E731
    tree_rnea = lambda: rc.rnea(tree, q, qd, qdd)  # noqa: E731
    ours(), tree_rnea()
    t_ours, t_tree = best_time(ours, 20000), best_time(tree_rnea, 20000)
    rows: list[tuple[str, float, float, float, bool | None]] = [
        ("ID per call vs tree rnea", t_ours, t_tree, t_ours / t_tree, t_ours / t_tree <= TARGET)]
    reps = -(-samples // len(X))
    BX, BXD, BXDD = (np.tile(a, (reps, 1))[:samples] for a in (X, XD, XDD))
    states = [rc.platform_tree_state(robot, *s) for s in zip(X, XD, XDD, strict=True)]
    Q, QD, QDD = (np.tile(np.array([s[k] for s in states]), (reps, 1))[:samples]
                  for k in range(3))
    rc.platform_inverse_dynamics_batch(robot, BX[:2], BXD[:2], BXDD[:2])
    rc.rnea_batch(tree, Q[:2], QD[:2], QDD[:2])
    LQ, LQD, LQDD = (np.tile(a, (reps, 1))[:samples] for a in legs_state(robot, X, XD, XDD))
    legs_tau = np.empty_like(LQ)
    g = tree.gravity
    t_ours, t_tree, t_legs = best_times((
        lambda: rc.platform_inverse_dynamics_batch(robot, BX, BXD, BXDD),
        lambda: rc.rnea_batch(tree, Q, QD, QDD),
        lambda: rnea_rows(robot.leg_floats, LQ, LQD, LQDD, g, True, legs_tau)), 1, 5)
    rows.append((f"batch ID ({samples}), per sample, vs rnea_batch", t_ours / samples,
                 t_tree / samples, t_ours / t_tree, None))
    rows.append(("  of which the legs' RNEA (rnea_rows)", t_legs / samples, t_tree / samples,
                 t_legs / t_tree, None))
    tau = ours()
    oracle = LoopOracle(urdf, rc.load_loops(tree, loop_file_path(urdf)))
    fd = lambda: rc.platform_forward_dynamics(robot, x, xd, tau)  # noqa: E731
    pin_fd = lambda: oracle.tree.link_acceleration(  # noqa: E731
        q, qd, oracle.accelerations(q, qd, tau)[0], robot.platform)
    fd(), pin_fd()
    t_fd, t_pin = best_time(fd, 2000), best_time(pin_fd, 2000)
    rows.append(("FD per call vs pin.constraintDynamics", t_fd, t_pin, t_fd / t_pin, None))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Parallel-robot dynamics against the tree RNEA")
    parser.add_argument("--samples", type=int, default=10_000)
    args = parser.parse_args(argv)
    print(f"{'robot':<14}{'measure':<44}{'ours us':>9}{'peer us':>9}{'ratio':>8}  target")
    failures = 0
    for name in ROBOTS:
        for label, t_ours, t_peer, ratio, ok in bench_robot(name, args.samples):
            target = (f"<= {TARGET} {'ok' if ok else 'MISSED'}" if ok is not None
                      else "(information)")
            print(f"{name:<14}{label:<44}{t_ours * 1e6:9.3f}{t_peer * 1e6:9.3f}{ratio:8.2f}  "
                  f"{target}")
            failures += ok is False
    print("(pin.constraintDynamics is timed with rnea_ros.loop_oracle.LoopOracle's Python "
          "wrapper: tau into the tree order, the call, the cut wrenches, the platform's "
          "acceleration by forwardKinematics)")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
