"""MuJoCo as the simulator's second engine: soft contacts, a world, pushes.

:class:`MujocoSimulator` has the interface of :class:`~rnea_ros.simulation.Simulator`
(``q``, ``qd``, ``qdd``, ``effort``, ``t``, ``step``, ``reset``, ``stops``,
``diverged``, ``follower_state``) so the simulator node and the tests run either
engine. The model is built from the same URDF by MuJoCo's URDF compiler
(``mujoco.MjSpec``), with what a URDF cannot say added in code:

- ``<compiler discardvisual fusestatic="false" boundmass boundinertia>``: collision
  geoms only, every URDF link (a flange too) stays a body, so a wrench can name it;
  a massless link (a universal joint's cross) gets 1 ug and 1e-14 kg m^2;
- a ``motor`` actuator (gear 1, no control range: the node clamps to the URDF's
  effort limits) on each joint of our model (closed loops: the active joints);
- per joint: ``armature`` from our model (URDF + drives file), ``damping`` and
  ``frictionloss`` from the simulator's ``damping``/``friction`` (MuJoCo's dry
  friction is a constraint with stiction, Pinocchio backend's ``sign(qd)`` has none);
- mimic followers (URDF ``<mimic>``, which MuJoCo's URDF compiler ignores): an
  equality ``joint`` constraint ``q_f = offset + multiplier q_leader``;
- closed loops (our loop file): each cut joint as equality constraints between two
  sites at the cut frames -- ``connect`` at the frame origin (revolute and
  spherical cuts; a spatial revolute cut a second ``connect`` on its axis, as the
  Pinocchio backend does; a weld cut three, see :func:`cut_points`);
- contacts: the robot's geoms collide with the world, not with each other
  (``contype 2, conaffinity 1``; the world's defaults ``1, 1``); ``contacts=False``
  disables contact altogether (``limits=False`` the joint limits);
- a world (``world=``: an MJCF file) attached to the scene under the prefix
  ``world/`` (its bodies, geoms, assets, defaults);
- gravity from the model (base frame = MuJoCo's world), time step ``dt``, and
  the integrator: ``semi_implicit`` -> MuJoCo's ``Euler`` (semi-implicit Euler,
  damping implicit), ``rk4`` -> ``RK4``.

Joint limits are MuJoCo's own soft limit constraints (a step with one active is
counted in ``stops``). Equality constraints are soft too; ours are made stiff
(time constant ``2 dt``, impedance 0.9999): a held five-bar's loop stays closed to
~4e-9 m and drifts ~3e-6 rad in 3 s (MuJoCo's defaults: 3e-4 m and 0.2 rad).
Instability. MuJoCo checks each step for a position, velocity or acceleration that is
not finite or beyond ``mjMAXVAL`` (1e10) and then *resets itself* (``mj_resetData``:
q = 0 in one step, one line on stderr) and counts it in ``mjData.warning``
(``mjWARN_BADQPOS``/``BADQVEL``/``BADQACC``/``BADCTRL``). A step after which one of
those counters is set, whose result is not finite, or whose joint speed exceeds
:data:`MAX_SPEED` is not taken: the state before it is restored, at rest, the pushes
are cancelled (a push is what drives a held arm there), the counters cleared; it is
counted in ``diverged`` and described in ``instability``. The commanded effort is
held, not zeroed: the plant restarts at rest from a physical state, and zero effort
would drop a gravity-loaded arm, a motion nobody commanded.

Pushes: :meth:`MujocoSimulator.apply_wrench` (world frame, at the link's centre of
mass: MuJoCo's ``xfrc_applied``) for a duration; beyond the caller's bounds (the node:
``wrench_max_force``/``wrench_max_torque``) refused. The world file
(:mod:`rnea_ros.simulation.mujoco_world`) may not add actuators; a world that
intersects the robot at :meth:`MujocoSimulator.reset` is listed in
``start_penetrations`` (the geoms, the depth) for the node to warn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loop_kinematics import loop_residual
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.errors import JointNameError, ModelError, StateError, options
from rnea_ros.core.model.payload import Payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.simulation.mujoco_world import WORLD_PREFIX, attach_world, penetrations, world_path
from rnea_ros.simulation.plant import (
    Capabilities,
    Index,
    JointStateOut,
    Plant,
    rigid_joint_state,
)
from rnea_ros.simulation.rigid import INTEGRATORS, drive_coefficients

Array = NDArray[np.float64]
AXIS_POINT = 0.1  # [m] second point on a spatial revolute cut's axis (as the Pinocchio
# backend), and on a weld cut's x and y axes
ROBOT_CONTYPE, ROBOT_CONAFFINITY = 2, 1  # robot geoms: touch the world, not each other
EQUALITY_TIMECONST_STEPS, EQUALITY_IMPEDANCE = 2.0, 0.9999  # loops and mimic couplings
MASS_FLOOR, INERTIA_FLOOR = 1e-9, 1e-14  # [kg], [kg m^2]: MuJoCo refuses massless moving links
# [rad/s or m/s] a joint speed no drive or mechanism reaches (95,000 rpm): a step past it
# has blown up before MuJoCo's own check (1e10) sees it (a 1e6 N push: 6e8 rad/s, q
# +6e5 rad in one step, MuJoCo's reset only at the next one).
MAX_SPEED = 1e4


@dataclass
class Push:
    """A wrench held on a body for ``steps`` more steps: ``[f (3), torque (3)]`` [N, N m]
    in the world frame, at the body's centre of mass."""

    body: int
    wrench: Array
    steps: int


def cut_points(cut: str, planar: bool) -> list[Array]:
    """Points (cut frame, shape (3,) each [m]) at which a cut joint of type ``cut`` is
    closed by MuJoCo ``connect`` equalities (3 rows each): the frame origin (spherical, planar
    revolute); also a point on the axis (spatial revolute: 6 rows, rank 5); also a point on
    the frame's x and on its y axis (weld: 9 rows, rank 6, three non-collinear points
    pinned). A weld is not closed by MuJoCo's ``weld``: its angular rows are regularised
    by the bodies' angular inverse weights (their mean over the axes, at ``qpos0``), which
    for a small link (Delta's bracket, 1e-7 kg m^2 about one axis: 3.4e6) is ~170x the
    loop's real angular inverse inertia (2e4), so those rows are that much softer than
    the translational ones and the held Delta drifted (docs/simulation.md)."""
    if cut == "weld":
        return [np.zeros(3), np.array([AXIS_POINT, 0.0, 0.0]), np.array([0.0, AXIS_POINT, 0.0])]
    if cut == "revolute" and not planar:
        return [np.zeros(3), np.array([0.0, 0.0, AXIS_POINT])]
    return [np.zeros(3)]


def _import_mujoco() -> Any:
    try:
        import mujoco
    except ImportError as exc:  # optional dependency (the 'simulator' extra)
        raise ParameterError(f"engine 'mujoco' needs the mujoco package (pip install "
                             f"'rnea_ros[simulator]'): {exc}") from None
    return mujoco


def urdf_text(urdf: str | Path) -> str:
    """The URDF's XML (``urdf``: a path or the XML itself)."""
    text = str(urdf)
    if text.lstrip().startswith("<"):
        return text
    return Path(text).read_text()


class MujocoSimulator(Plant):
    """The robot of ``urdf``/``model`` (and ``loops``) in MuJoCo; see the module."""

    capabilities = Capabilities(pushes=True, world=True, imu=True, viewer=True)

    def __init__(self, urdf: str | Path, model: RobotModel, *, dt: float = 1e-3,
                 integrator: str = "semi_implicit", damping: Array | None = None,
                 friction: Array | None = None, payload: Payload | None = None,
                 loops: ClosedLoopModel | None = None, world: str | Path | None = None,
                 contacts: bool = True, limits: bool = True) -> None:
        if integrator not in INTEGRATORS:
            raise ParameterError(f"integrator '{integrator}' is not one of {INTEGRATORS}")
        if not dt > 0.0:
            raise ParameterError(f"time step {dt} must be > 0")
        mj = _import_mujoco()
        self.mj = mj
        self.model = model
        self.loops = loops
        self.base = None  # a moving base is the Pinocchio backend's alone
        self.dt = dt
        self.integrator = integrator
        n = model.nv
        self.damping = drive_coefficients(damping, "damping", n)
        self.friction = drive_coefficients(friction, "friction", n)
        spec = self._spec(urdf, payload, world, contacts, limits)
        try:
            self.mjm = spec.compile()
        except Exception as exc:  # mujoco raises ValueError with the compiler's message
            raise ModelError(f"MuJoCo cannot compile the robot '{model.name}': {exc}") from None
        self.mjd = mj.MjData(self.mjm)
        # Views of MuJoCo's state (an attribute access builds a new array: 10 us a step).
        d = self.mjd
        self._qpos, self._qvel, self._qacc = d.qpos, d.qvel, d.qacc
        self._ctrl, self._xfrc = d.ctrl, d.xfrc_applied
        self._pushed = False
        self.qadr = np.array([self.mjm.joint(j).qposadr[0] for j in model.joint_names])
        self.dadr = np.array([self.mjm.joint(j).dofadr[0] for j in model.joint_names])
        self.followers = [(self.mjm.joint(f).qposadr[0], self.mjm.joint(f).dofadr[0],
                           model.joint_index(c.leader), c.multiplier, c.offset)
                          for f, c in model.mimic_joints.items()]
        # Joint limits (MuJoCo's soft ones: a step at or beyond one counts in ``stops``).
        jids = [self.mjm.joint(j).id for j in model.joint_names]
        self.limited = np.array([k for k, j in enumerate(jids) if self.mjm.jnt_limited[j]],
                                dtype=np.int64)
        self.lower = np.array([self.mjm.jnt_range[jids[k]][0] for k in self.limited])
        self.upper = np.array([self.mjm.jnt_range[jids[k]][1] for k in self.limited])
        self.q, self.qd, self.qdd = np.zeros(n), np.zeros(n), np.zeros(n)
        self.effort = np.zeros(n)
        self.t0, self.steps = 0.0, 0
        self.stops = 0
        self.diverged = 0
        self.instability = ""  # the last step not taken, and why
        self.start_penetrations: list[tuple[str, str, float]] = []
        self.pushes: dict[int, Push] = {}
        self._bad_warnings = np.array([int(w) for w in (mj.mjtWarning.mjWARN_BADQPOS,
                                                         mj.mjtWarning.mjWARN_BADQVEL,
                                                         mj.mjtWarning.mjWARN_BADQACC,
                                                         mj.mjtWarning.mjWARN_BADCTRL)])
        self._warnings = self.mjd.warning.number  # (a view: 2 us a step, 18 us by item)
        self.reset(loops.q_reference if loops is not None else np.zeros(n))

    # -- building -------------------------------------------------------------------------
    def _spec(self, urdf: str | Path, payload: Payload | None, world: str | Path | None,
              contacts: bool, limits: bool) -> Any:
        mj, model = self.mj, self.model
        try:
            spec = mj.MjSpec.from_string(urdf_text(urdf))
        except Exception as exc:
            raise ModelError(f"MuJoCo cannot read the URDF of '{model.name}': {exc}") from None
        spec.compiler.discardvisual = True
        spec.compiler.fusestatic = False
        # A massless link between two joints (a universal joint's cross: Delta's legs) is
        # fine for Pinocchio and us, not for MuJoCo ("mass and inertia of moving bodies
        # must be larger than mjMINVAL"): such links get these bounds (1 ug, 1e-14 kg m^2;
        # 1 mg made a held Gough-Stewart drift 60x more).
        spec.compiler.boundmass, spec.compiler.boundinertia = MASS_FLOOR, INERTIA_FLOOR
        spec.option.timestep = self.dt
        spec.option.gravity = [float(g) for g in model.gravity]
        spec.option.integrator = (mj.mjtIntegrator.mjINT_EULER if self.integrator ==
                                  "semi_implicit" else mj.mjtIntegrator.mjINT_RK4)
        if not contacts:
            spec.option.disableflags |= int(mj.mjtDisableBit.mjDSBL_CONTACT)
        for geom in spec.geoms:
            geom.contype, geom.conaffinity = ROBOT_CONTYPE, ROBOT_CONAFFINITY
        joints = {j.name: j for j in spec.joints}
        for k, name in enumerate(model.joint_names):
            if name not in joints:
                raise ModelError(f"joint '{name}' of '{model.name}' is not in MuJoCo's model of "
                                 f"the URDF; MuJoCo's joints: {options(joints)}")
            joint = joints[name]
            joint.armature = float(model.armature[k])
            joint.damping = float(self.damping[k])
            joint.frictionloss = float(self.friction[k])
        if not limits:  # (the agreement test: free motion through the URDF limits)
            for joint in spec.joints:
                joint.limited = mj.mjtLimited.mjLIMITED_FALSE
        actuated = (model.joint_names if self.loops is None else self.loops.active_names)
        for name in actuated:
            spec.add_actuator(name=f"{name}_motor", target=name,
                              trntype=mj.mjtTrn.mjTRN_JOINT, gear=[1.0, 0, 0, 0, 0, 0])
        self.actuated = np.array([model.joint_index(j) for j in actuated], dtype=np.int64)
        for follower, coupling in model.mimic_joints.items():
            self._stiff(spec.add_equality(type=mj.mjtEq.mjEQ_JOINT, name1=follower,
                                          name2=coupling.leader,
                                          data=[coupling.offset, coupling.multiplier] + [0.0] * 9))
        if self.loops is not None:
            self._close_loops(spec, self.loops)
        if payload is not None and payload.mass > 0.0:
            self._add_payload(spec, payload)
        if world is not None and str(world):
            attach_world(mj, spec, world_path(world))
        return spec

    def _body_link(self, body: int) -> str:
        """The link whose frame is body ``body``'s own (-1: the root link)."""
        model = self.model
        if body < 0:
            return model.root_link
        for name, frame in model.frames.items():
            if frame.body == body and np.allclose(frame.translation, 0.0) and \
                    np.allclose(frame.rotation, np.eye(3)):
                return name
        raise ModelError(f"body {body} of '{model.name}' has no link frame")

    def _close_loops(self, spec: Any, loops: ClosedLoopModel) -> None:
        from rnea_ros.loop_oracle import planar_loop

        mj = self.mj
        bodies = {b.name: b for b in spec.bodies}
        for l, loop in enumerate(loops.loops):
            if loop.type == "prismatic":
                raise ModelError(f"loop '{loop.name}': no MuJoCo equality for a prismatic cut")
            planar = loop.type == "revolute" and planar_loop(loops, l)
            for k, offset in enumerate(cut_points(loop.type, planar)):
                sites = []
                for side in (1, 2):
                    body, R, p = loops.cut_frame(l, side)
                    link = self._body_link(body)
                    site = bodies[link].add_site(name=f"cut_{loop.name}_{k}_{side}",
                                                 pos=list(p + R @ offset))
                    sites.append(site.name)
                self._stiff(spec.add_equality(type=mj.mjtEq.mjEQ_CONNECT,
                                              objtype=mj.mjtObj.mjOBJ_SITE,
                                              name1=sites[0], name2=sites[1],
                                              name=f"loop_{loop.name}_{k}"))

    def _stiff(self, equality: Any) -> None:
        """A stiff equality constraint: time constant ``2 dt`` (MuJoCo's stable minimum),
        impedance 0.9999 (MuJoCo's defaults, 0.02 s and 0.9, let a held five-bar drift
        0.2 rad in 3 s: the soft constraint's sag biases a neutral equilibrium)."""
        equality.solref = [EQUALITY_TIMECONST_STEPS * self.dt, 1.0]
        equality.solimp = [EQUALITY_IMPEDANCE, EQUALITY_IMPEDANCE, 0.001, 0.5, 2.0]

    def _add_payload(self, spec: Any, payload: Payload) -> None:
        bodies = {b.name: b for b in spec.bodies}
        frame = self.model.link_frame(payload.link)  # JointNameError for an unknown link
        link = self._body_link(frame.body)
        com = frame.rotation @ np.asarray(payload.com, float) + frame.translation
        xx, yy, zz, xy, xz, yz = (float(x) for x in payload.inertia)
        inertia = frame.rotation @ np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) @ \
            frame.rotation.T
        floor = 1e-9 * max(payload.mass, 1.0)  # MuJoCo wants a positive definite inertia
        full = [inertia[0, 0] + floor, inertia[1, 1] + floor, inertia[2, 2] + floor,
                inertia[0, 1], inertia[0, 2], inertia[1, 2]]
        body = bodies[link].add_body(name="payload", pos=list(com))
        body.mass = float(payload.mass)
        body.fullinertia = full
        body.explicitinertial = True

    # -- state ---------------------------------------------------------------------------
    @property
    def t(self) -> float:
        """Simulated time [s]."""
        return self.t0 + self.steps * self.dt

    def reset(self, q: Array, qd: Array | None = None, t: float = 0.0) -> None:
        """Set the state (our coordinates; mimic followers from their leaders)."""
        mj, d = self.mj, self.mjd
        mj.mj_resetData(self.mjm, d)
        q = np.array(q, dtype=np.float64)
        qd = np.zeros(self.model.nv) if qd is None else np.array(qd, dtype=np.float64)
        d.qpos[self.qadr], d.qvel[self.dadr] = q, qd
        for qa, da, leader, mult, off in self.followers:
            d.qpos[qa], d.qvel[da] = mult * q[leader] + off, mult * qd[leader]
        mj.mj_forward(self.mjm, d)
        self.q, self.qd = q, qd
        self.qdd = np.asarray(d.qacc[self.dadr], dtype=np.float64).copy()
        self.t0, self.steps = t, 0
        self.pushes.clear()
        self.start_penetrations = penetrations(self.mj, self.mjm, d)

    def joint_state(self, index: Index | None = None,
                    followers: bool = False) -> JointStateOut:
        """:meth:`Plant.joint_state`: coordinates ``index``, then the mimic followers."""
        return rigid_joint_state(list(self.model.joint_names), self.q, self.qd, self.effort,
                                 index, self.follower_state() if followers else None)

    def diagnostics(self) -> dict[str, str]:
        """Hard stops, diverged steps, contacts (now and at the start), the last step not
        taken, the loops' closure error."""
        values = {"steps at a joint limit": str(self.stops),
                  "diverged steps (not taken)": str(self.diverged),
                  "contacts": str(int(self.mjd.ncon)),
                  "contacts at start (penetrating)": str(len(self.start_penetrations))}
        if self.instability:
            values["last step not taken"] = self.instability
        if self.loops is not None:
            values["loop closure error [m or rad]"] = f"{self.closure_error():.3e}"
        return values

    def imu_state(self) -> tuple[Array, Array, Array]:
        return self.q, self.qd, self.qdd

    def viewer_handles(self) -> tuple[Any, Any]:
        return self.mjm, self.mjd

    def follower_state(self) -> tuple[list[str], Array, Array]:
        """Names, positions and velocities of the mimic followers (MuJoCo's own, held to
        their leaders by the equality constraints)."""
        d = self.mjd
        names = list(self.model.mimic_joints)
        return (names, np.array([d.qpos[f[0]] for f in self.followers]),
                np.array([d.qvel[f[1]] for f in self.followers]))

    def closure_error(self) -> float:
        """Largest loop constraint error (our residual of eq. 3) [m or rad]."""
        if self.loops is None:
            return 0.0
        return float(np.abs(loop_residual(self.loops, self.q)).max())

    def touching(self) -> list[tuple[str, str]]:
        """``(robot link, world body)`` of each contact between the robot and the world."""
        m, d = self.mjm, self.mjd
        pairs = []
        for c in d.contact[:d.ncon]:
            a, b = (m.body(m.geom_bodyid[g]).name for g in (c.geom1, c.geom2))
            if a.startswith(WORLD_PREFIX) != b.startswith(WORLD_PREFIX):
                pairs.append((b, a) if a.startswith(WORLD_PREFIX) else (a, b))
        return pairs

    # -- pushes --------------------------------------------------------------------------
    def link_body(self, link: str) -> int:
        """MuJoCo body id of URDF link ``link`` (:class:`JointNameError` listing the links)."""
        body = self.mjm.body(link).id if link in self._link_names() else -1
        if body < 0:
            raise JointNameError(f"unknown link '{link}' in model '{self.model.name}'; valid "
                                 f"links: {options(self._link_names())}")
        return int(body)

    def _link_names(self) -> list[str]:
        names = [self.mjm.body(b).name for b in range(1, self.mjm.nbody)]
        return [n for n in names if n and not n.startswith(WORLD_PREFIX) and n != "payload"]

    def apply_wrench(self, link: str, force: Array, torque: Array, duration: float, *,
                     max_force: float = math.inf, max_torque: float = math.inf) -> None:
        """Push link ``link`` with ``force`` [N] and ``torque`` [N m] (world frame, at the
        link's centre of mass) for ``duration`` [s] of simulated time (rounded to steps;
        replaces a push still acting on that link). :class:`StateError` for a non-finite
        wrench or duration, or a force or torque norm beyond ``max_force`` [N] or
        ``max_torque`` [N m]; :class:`JointNameError` for an unknown link."""
        body = self.link_body(link)
        wrench = np.r_[np.asarray(force, float), np.asarray(torque, float)]
        if wrench.shape != (6,) or not np.all(np.isfinite(wrench)):
            raise StateError(f"wrench on '{link}' must be 6 finite values, got {wrench!r}")
        for what, norm, bound, unit in (("force", float(np.linalg.norm(wrench[:3])),
                                         max_force, "N"),
                                        ("torque", float(np.linalg.norm(wrench[3:])),
                                         max_torque, "N m")):
            if norm > bound:
                raise StateError(
                    f"wrench on '{link}': {what} {norm:.3g} {unit} is beyond the bound "
                    f"{bound:g} {unit} (wrench_max_{what}): no push a robot meets, and "
                    "MuJoCo's integration blows up under such loads")
        if not (math.isfinite(duration) and duration >= 0.0):
            raise StateError(f"wrench duration must be finite and >= 0 s, got {duration}")
        self.pushes[body] = Push(body, wrench, round(duration / self.dt))

    # -- stepping ------------------------------------------------------------------------
    def step(self, tau: Array) -> None:
        """Advance by ``dt`` with the effort ``tau`` (our model order; closed loops: tree
        order, the passive entries ignored) held."""
        tau = np.asarray(tau, dtype=np.float64)
        if tau.shape != (self.model.nv,) or not math.isfinite(float(tau.sum())):
            raise StateError(f"effort must be {self.model.nv} finite values, got {tau!r}")
        qpos, qvel, d = self._qpos, self._qvel, self.mjd
        self._ctrl[:] = tau[self.actuated]
        if self.pushes or self._pushed:
            self._apply_pushes()
        before, time_before = qpos.copy(), d.time
        self.mj.mj_step(self.mjm, d)
        bad = self._unstable()
        if not bad:
            q = qpos[self.qadr]
            self.q, self.qd, self.qdd = q, qvel[self.dadr], self._qacc[self.dadr]
            if self.limited.size and (np.any(q[self.limited] <= self.lower) or
                                      np.any(q[self.limited] >= self.upper)):
                self.stops += 1
        else:  # not taken: the last state, at rest, the pushes cancelled
            self._restore(before, time_before)
            self.instability = f"t = {self.t + self.dt:.4f} s: {bad}"
        self.effort = tau
        self.steps += 1

    def _unstable(self) -> str:
        """Why the step just taken is not to be kept ('' when it is): MuJoCo flagged a
        bad position, velocity, acceleration or control (and reset itself), or the
        state is not finite, or a joint is faster than :data:`MAX_SPEED`."""
        if self._warnings[self._bad_warnings].any():
            warning = self.mjd.warning
            w = int(next(w for w in self._bad_warnings if warning[w].number))
            kind = self.mj.mjtWarning(w).name.removeprefix("mjWARN_BAD")
            return (f"MuJoCo found a bad {kind} value ({self._dof_name(warning[w], kind)}) "
                    "and reset its state")
        speed = float(np.abs(self._qvel).max(initial=0.0))
        if not math.isfinite(float(self._qpos.sum()) + speed):  # (a NaN or inf propagates)
            return "the state is not finite"
        if speed > MAX_SPEED:
            return f"a joint speed of {speed:.3g} (beyond {MAX_SPEED:g} rad/s or m/s)"
        return ""

    def _dof_name(self, stat: Any, kind: str) -> str:
        """The joint a MuJoCo warning's ``lastinfo`` (a dof; a qpos index for QPOS, an
        actuator for CTRL) points at."""
        m, index = self.mjm, int(stat.lastinfo)
        if kind == "CTRL":
            return f"actuator '{m.actuator(index).name}'" if index < m.nu else f"#{index}"
        if kind == "QPOS":
            joints = [j for j in range(m.njnt) if m.jnt_qposadr[j] <= index]
            return f"joint '{m.joint(max(joints)).name}'" if joints else f"#{index}"
        return f"joint '{m.joint(int(m.dof_jntid[index])).name}'" if index < m.nv else \
            f"#{index}"

    def _restore(self, qpos: Array, time: float) -> None:
        """The state ``qpos`` at ``time``, at rest; pushes and MuJoCo's counters cleared."""
        d = self.mjd
        self._qpos[:], self._qvel[:], d.time = qpos, 0.0, time
        self._xfrc[:] = 0.0
        self.pushes.clear()
        self._pushed = False
        self._warnings[self._bad_warnings] = 0
        self.mj.mj_forward(self.mjm, d)
        self.q = self._qpos[self.qadr].copy()
        self.qd = np.zeros(self.model.nv)
        self.qdd = np.asarray(self._qacc[self.dadr], dtype=np.float64).copy()
        self.diverged += 1

    def _apply_pushes(self) -> None:
        """This step's pushes into MuJoCo's ``xfrc_applied`` (ended ones dropped)."""
        xfrc = self._xfrc
        xfrc[:] = 0.0
        for body, push in list(self.pushes.items()):
            if push.steps <= 0:
                del self.pushes[body]
                continue
            xfrc[body] = push.wrench
            push.steps -= 1
        self._pushed = bool(self.pushes)
