"""A lockstep MuJoCo run for the contact tests: arm7 tracking a sinusoidal trajectory
in inverse-dynamics (computed-torque) control with our RNEA, optional pushes on links,
recording what a controller sees (``t, q, qd, tau``) and the true external joint
torques ``J^T F`` (F at the link's centre of mass, world frame: MuJoCo's
``xfrc_applied``). Lockstep: the controller runs between MuJoCo steps, so the result
does not depend on scheduling."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import rnea_ros.core as rc
from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.simulation.mujoco_backend import MujocoSimulator

DT = 1e-3
VISCOUS = 0.3  # [N m s/rad] on every joint, in the plant (MuJoCo damping) and the model


@dataclass
class Push:
    link: str
    start: float  # [s]
    duration: float  # [s]
    force: float  # [N]


@dataclass
class Run:
    model: rc.RobotModel
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd_ref: np.ndarray
    tau: np.ndarray
    tau_ext: np.ndarray  # the true J^T F applied over [t_k, t_k+1)


def arm7() -> rc.RobotModel:
    model = load_robot("arm7")
    return model.replace(viscous=np.full(model.nv, VISCOUS))


def reference(model: rc.RobotModel, t: float, speed: float, phase: float = 0.0
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``q, qd, qdd`` of the trajectory: sines about the middle of the joint range,
    peak speed ``speed`` times each joint's velocity limit (capped at 40 % of the range);
    ``phase`` [rad] shifts joint ``j``'s sine by ``j * phase``."""
    mid = 0.5 * (model.lower_limit + model.upper_limit)
    w = np.linspace(2.0, 3.3, model.nv)  # [rad/s]
    amp = np.minimum(speed * model.velocity_limit / w,
                     0.4 * (model.upper_limit - model.lower_limit))
    arg = w * t + phase * np.arange(model.nv)
    s, c = np.sin(arg), np.cos(arg)
    return mid + amp * s, amp * w * c, -amp * w * w * s


def push_direction(model: rc.RobotModel, q: np.ndarray, link: str) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """A unit force direction (world) with the largest moment about the link's own joint
    axis at its centre of mass, and the COM's offset from the link origin (world)."""
    body = model.body_names.index(link)
    R, _ = rc.body_poses(model, q)
    axis = R[body] @ model.axis[body]
    offset = R[body] @ model.com[body]
    d = np.cross(axis, offset)
    return d / np.linalg.norm(d), offset


def simulate(duration: float, pushes: list[Push], speed: float = 1.0, phase: float = 0.0
             ) -> Run:
    model = arm7()
    sim = MujocoSimulator(sample_urdf("arm7"), model, dt=DT, damping=model.viscous,
                          contacts=False)
    q0, qd0, _ = reference(model, 0.0, speed, phase)
    sim.reset(q0, qd0)
    n = round(duration / DT)
    kp, kd = 400.0, 40.0
    out = {k: np.empty((n, model.nv)) for k in ("q", "qd", "qdd", "tau", "ext")}
    t = np.arange(n) * DT
    forces: dict[int, np.ndarray] = {}  # per push, its world force (held, as MuJoCo's)
    for k in range(n):
        q, qd = sim.q.copy(), sim.qd.copy()
        qr, qdr, qddr = reference(model, t[k], speed, phase)
        tau = rc.rnea(model, q, qd, qddr + kp * (qr - q) + kd * (qdr - qd))
        ext = np.zeros(model.nv)
        for i, push in enumerate(pushes):
            if push.start <= t[k] < push.start + push.duration:
                d, offset = push_direction(model, q, push.link)
                if i not in forces:
                    forces[i] = push.force * d
                    sim.apply_wrench(push.link, forces[i], np.zeros(3), push.duration)
                J = rc.frame_jacobian(model, q, push.link, "LOCAL_WORLD_ALIGNED")
                ext += J.T @ np.r_[forces[i], np.cross(offset, forces[i])]
        out["q"][k], out["qd"][k], out["qdd"][k] = q, qd, qddr
        out["tau"][k], out["ext"][k] = tau, ext
        sim.step(tau)
    return Run(model, t, out["q"], out["qd"], out["qdd"], out["tau"], out["ext"])
