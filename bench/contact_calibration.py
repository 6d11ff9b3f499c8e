"""Contact thresholds for the shipped arm7, calibrated over the demo's motions, and a
long contact-free run at full speed against them (issue 38: "no false contact over 10
minutes of contact-free tracking at full speed, and none during the shipped demo's
motions").

Offline and in lockstep (no scheduling in the result): the plant is the simulator
node's rigid engine as the demo runs it (Pinocchio's ABA, semi-implicit Euler at
1 kHz, no joint damping; ``--damping shipped``: ``config/arm7_simulator.yaml``'s 5, 5,
5, 5, 1, 1, 1 N m s/rad, which the URDF does not have), the controller the node's
``inverse_dynamics`` law with the demo's gains (``ARM7_GAINS``), torques clipped to the
URDF's limits; the observer reads the commanded torques (``contact.effort_source:
commanded``, the default).

1. Calibration over the demo's arm7 motions: the gravity hold (3 s, seed 0's start
   pose), the 0.5 rad, 0.5 Hz cosine on every joint (5 s), the planned minimum-time
   motion, and 20 s of sines at the velocity limits: ``propose_thresholds``, worst
   ``|r_j|`` times ``--margin``, never below ``--floor``. With unmodelled damping
   ``r_j ~ -D_j qd_j``: then also a velocity gain, the largest ``|r_j| / |qd_j|`` (over
   ``|qd_j| > 0.1 rad/s``) times 1.2, and the constant part net of it.
2. Validation on other motions: ``--minutes`` of sines at the velocity limits with other
   phases, and the demo's motions again from other start poses (seeds 1-3): contacts
   flagged (must be none), the worst ``|r_j| / th_j``.

    python bench/contact_calibration.py --minutes 10
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rnea_ros.core as rc
from rnea_ros.control.contact import DetectionSettings, detect, propose_thresholds, residuals
from rnea_ros.control.trajectory import cosine_motion
from rnea_ros.nodes.harness import ARM7_GAINS
from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.simulation.rigid import Simulator

DT = 1e-3
SHIPPED = np.array([5.0, 5.0, 5.0, 5.0, 1.0, 1.0, 1.0])  # config/arm7_simulator.yaml
DAMPING = np.zeros(7)  # the demo's simulator (the table's default); --damping shipped
GAIN = 50.0  # contact.observer_gain (default)
KP, KD = np.array(ARM7_GAINS["kp"]), np.array(ARM7_GAINS["kd"])


def track(model: rc.RobotModel, q_ref: np.ndarray, qd_ref: np.ndarray, qdd_ref: np.ndarray
          ) -> dict[str, np.ndarray]:
    """Run the plant under the inverse-dynamics law along the reference (N, nv) from its
    first sample at rest; returns t, q, qd, tau (the torque held over each period)."""
    sim = Simulator(sample_urdf("arm7"), model, dt=DT, damping=DAMPING)
    sim.reset(q_ref[0].copy(), qd_ref[0].copy())
    n = len(q_ref)
    out = {k: np.empty((n, model.nv)) for k in ("q", "qd", "tau")}
    for k in range(n):
        q, qd = sim.q.copy(), sim.qd.copy()
        a = qdd_ref[k] + KP * (q_ref[k] - q) + KD * (qd_ref[k] - qd)
        tau = np.clip(rc.rnea(model, q, qd, a), -model.effort_limit, model.effort_limit)
        out["q"][k], out["qd"][k], out["tau"][k] = q, qd, tau
        sim.step(tau)
    out["t"] = np.arange(n) * DT
    return out


def sines(model: rc.RobotModel, seconds: float, phase: float) -> tuple[np.ndarray, ...]:
    """Sines about mid-range at each joint's velocity limit (capped at 40 % of the range),
    joint j shifted by j * phase."""
    t = np.arange(round(seconds / DT)) * DT
    mid = 0.5 * (model.lower_limit + model.upper_limit)
    w = np.linspace(2.0, 3.3, model.nv)
    amp = np.minimum(model.velocity_limit / w, 0.4 * (model.upper_limit - model.lower_limit))
    arg = np.outer(t, w) + phase * np.arange(model.nv)
    # a 1 s cosine ramp of the amplitude, so that the arm starts at rest on its reference
    ramp = np.minimum(t / 1.0, 1.0)[:, None]
    ramp = 0.5 * (1 - np.cos(np.pi * ramp))
    dramp = np.where(t < 1.0, 0.5 * np.pi * np.sin(np.pi * t), 0.0)[:, None]
    s, c = np.sin(arg), np.cos(arg)
    q = mid + ramp * amp * s
    qd = ramp * amp * w * c + dramp * amp * s
    qdd = -ramp * amp * w * w * s + 2 * dramp * amp * w * c  # (ramp's own d2 dropped: small)
    return q, qd, qdd


def demo_motions(model: rc.RobotModel, seed: int) -> list[tuple[np.ndarray, ...]]:
    """The demo's arm7 references from seed ``seed``'s start pose: hold 3 s, the cosine
    (0.5 rad, 0.5 Hz) 5 s, then the planned minimum-time motion from its end."""
    from rnea_ros.demo import plan_motion

    rng = np.random.default_rng(seed)
    mid = 0.5 * (model.lower_limit + model.upper_limit)
    q0 = rng.uniform(mid - 0.5, mid + 0.5)
    hold = np.tile(q0, (3000, 1))
    t = np.arange(6000) * DT
    q, qd, qdd = cosine_motion(q0, 0.5, np.pi, t)
    plan = plan_motion(model, q[-1])
    tp = np.arange(round((plan.T + 0.5) / DT)) * DT
    P = plan.spline.derivatives(tp, 2)  # (held at the goal after T)
    for d in (1, 2):
        P[d][tp > plan.T] = 0.0
    zeros = np.zeros_like(hold)
    return [(hold, zeros, zeros), (q, qd, qdd), (P[0], P[1], P[2])]


def concat(parts: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def observe(model: rc.RobotModel, ref: tuple[np.ndarray, ...]) -> dict[str, np.ndarray]:
    run = track(model, *ref)
    run["r"] = residuals(model, run["t"], run["q"], run["qd"], run["tau"], GAIN)
    run["qdd_ref"] = ref[2]
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--margin", type=float, default=2.0)
    parser.add_argument("--floor", type=float, default=0.05)
    parser.add_argument("--damping", choices=["demo", "shipped"], default="demo")
    args = parser.parse_args()
    global DAMPING
    if args.damping == "shipped":
        DAMPING = SHIPPED
    model = load_robot("arm7")
    started = time.process_time()
    runs = [observe(model, concat(demo_motions(model, 0))),
            observe(model, sines(model, 20.0, 0.35))]
    r = np.concatenate([x["r"] for x in runs])
    qd = np.concatenate([x["qd"] for x in runs])
    fast = np.abs(qd) > 0.1
    ratio = np.where(fast, np.abs(r) / np.maximum(np.abs(qd), 1e-9), 0.0)
    velocity = 1.2 * ratio.max(axis=0) if DAMPING.any() else np.zeros(model.nv)
    thresholds = propose_thresholds(r, args.margin, floor=args.floor, qd=qd,
                                    velocity=velocity)
    print(f"calibration over {sum(len(x['t']) for x in runs) * DT:.0f} s (demo motions, "
          f"seed 0, and 20 s of sines at the velocity limits); worst |r| "
          f"{np.abs(r).max(axis=0).round(3)} N m")
    print(f"  contact.velocity_gain: {velocity.round(3).tolist()}")
    print(f"  contact.thresholds:    {thresholds.round(3).tolist()}  (margin {args.margin})")
    settings = DetectionSettings(thresholds, velocity, np.zeros(model.nv), 0.5, 0.002)
    checks = [(f"demo motions, seed {s}", concat(demo_motions(model, s))) for s in (1, 2, 3)]
    chunk = 60.0
    phases = np.linspace(1.3, 5.9, max(1, round(args.minutes * 60 / chunk)))
    checks += [(f"{chunk:.0f} s of sines at the velocity limits, phase {p:.2f}",
                sines(model, chunk, float(p))) for p in phases]
    total, flagged = 0.0, 0
    for name, ref in checks:
        run = observe(model, ref)
        flag, _ = detect(model, settings, run["t"], run["r"], run["qd"])
        th = thresholds + velocity * np.abs(run["qd"])
        worst = float((np.abs(run["r"]) / th).max())
        peak_speed = float((np.abs(run["qd"]) / model.velocity_limit).max())
        total += len(run["t"]) * DT
        flagged += int(flag.sum())
        print(f"  {name}: {int(flag.sum())} samples in contact, worst |r|/th {worst:.2f}, "
              f"peak |qd| {100 * peak_speed:.0f} % of the limit")
    print(f"validation: {total:.0f} s contact-free, {flagged} samples flagged; "
          f"{time.process_time() - started:.0f} s CPU")


if __name__ == "__main__":
    main()
