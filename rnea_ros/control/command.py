"""The controller's compiled command path: from torques, or from the raw joint-state
message, to the published command in one call.

Every command the controller outputs goes through :func:`finish`: the
commanded joints' torques clipped to the effort limits, then moved at most
``rate * dt`` from the previous command (slew limiting; ``dt`` from
:func:`output_dt`: the stamp interval, but never more than the receipt interval
on the node's clock), checked finite, and written into the caller's output array
(the node passes the command message's own array) and the controller's copy of
the last command.

:func:`gravity_command` is the whole step of gravity mode (``tau = g(q)``,
no friction compensation, no oracle, fixed base): check and merge the message
(:func:`~rnea_ros.control.joint_state.intake`), ``g(q)``
(the compiled entry of :func:`~rnea_ros.core.dynamics.rnea.gravity_torques`,
called), then :func:`finish`.
:func:`inverse_dynamics_command` fuses inverse-dynamics mode's law
``tau = ID(q_d, qd_d, qdd_d) + Kp (q_d - q) + Kd (qd_d - qd)`` with
:func:`finish`. Why: in the running node at 1 kHz the caches are cold and each
Python operation, numpy temporary or compiled call costs three to four times its
warm-loop time; one call from the message's arrays to the command message's
array replaces three calls, their numpy temporaries and the Python between them
(README, node bench).

Status codes, returned first: the intake's (:mod:`~rnea_ros.control.joint_state`;
nothing is output unless the merge succeeds), then :data:`OUTPUT` (a command was
computed), :data:`HELD` (no time has passed since the previous command: it is
repeated) and :data:`BAD_TORQUE` (a commanded torque is not finite: the previous
command or zeros are output).
"""

from __future__ import annotations

import math
from array import array

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control._rate_limit_jit import bounded_dt
from rnea_ros.control._rate_limit_jit import slew as slew_toward
from rnea_ros.control.joint_state import MERGED, NO_MODEL_JOINT, intake, intake_fast, merge_fast
from rnea_ros.core.kernels import (
    RW_COLS,
    FastCall,
    gravity_call,
    jit,
    jit_entry,
    rnea_drive_pass,
    scratch,
)

Array = NDArray[np.float64]
Index = NDArray[np.int64]

OUTPUT, HELD, BAD_TORQUE = 20, 21, 22  # above every intake status (joint_state: 0-14)


@jit
def output_dt(stamp: float, now: float, output_stamp: float, output_wall: float,
              receipt_dt: float) -> float:
    """The slew limiter's time step [s] for an output at ``stamp`` (NaN: a watchdog
    output) and steady time ``now``: when both this output and the previous one are
    state-driven (``output_stamp`` NaN otherwise), the smaller of their stamp
    difference and ``receipt_dt``, the time between their receipts on the node's
    clock (so that a sender's stamps cannot loosen the limit: the hardware's time
    is the receiver's; a NaN ``receipt_dt`` holds); else the steady time since the
    previous output (``output_wall``); 0 before the first output (``output_wall``
    NaN)."""
    if np.isnan(output_wall):
        return 0.0
    if not (np.isnan(stamp) or np.isnan(output_stamp)):
        return bounded_dt(stamp - output_stamp, receipt_dt)
    return now - output_wall


@jit
def finish(tau: Array, index: Index, bounds: Array, last: Array, slew: bool, dt: float,
           out: Array) -> tuple[int, int, int]:
    """The command (m,) for model-order torques ``tau`` (n,), into ``out`` (m,).

    ``out[i] = tau[index[i]]`` clipped to ``+-bounds[0, i]``, then, with ``slew``
    (slew limiting on and ``last`` holding the previous command), moved at most
    ``bounds[1, i] * dt`` from ``last[i]``. Returns ``(OUTPUT, clipped,
    rate-limited)`` and copies the command into ``last``; ``(HELD, 0, 0)``, ``out =
    last``, when ``slew`` and ``dt`` is not a positive number (no time has passed);
    ``(BAD_TORQUE, 0, 0)`` when some ``tau[index[i]]`` is not finite: ``out`` is then
    ``last`` with ``slew``, else zeros -- never a non-finite value. ``last`` is only
    written on ``OUTPUT``.
    """
    m = index.shape[0]
    if slew and not (np.isfinite(dt) and dt > 0.0):
        for i in range(m):
            out[i] = last[i]
        return HELD, 0, 0
    for i in range(m):
        if not np.isfinite(tau[index[i]]):
            for j in range(m):
                out[j] = last[j] if slew else 0.0
            return BAD_TORQUE, 0, 0
    clipped = 0
    limited = 0
    for i in range(m):
        x = tau[index[i]]
        c = min(max(x, -bounds[0, i]), bounds[0, i])
        clipped += c != x
        if slew:
            c, bound = slew_toward(last[i], c, bounds[1, i] * dt)
            limited += bound
        out[i] = c
        last[i] = c
    return OUTPUT, clipped, limited


@jit_entry
def finish_entry(index: Index, bounds: Array, last: Array, tau: Array, slew: bool,
                 stamp: float, now: float, output_stamp: float, output_wall: float,
                 receipt_dt: float, out: Array) -> tuple[int, int, int]:
    """:func:`finish` with :func:`output_dt`, as a per-call entry point (the modes
    without a fused kernel, the watchdog)."""
    return finish(tau, index, bounds, last, slew,
                  output_dt(stamp, now, output_stamp, output_wall, receipt_dt), out)


@jit_entry
def gravity_command(fp: Array, g: Array, state: Array, window: float, threshold: float,
                    index: Index, bounds: Array, last: Array, position: Array,
                    velocity: Array, n_names: int, idx: Index, screen: int, stamp: float,
                    now: float, newest: float, newest_wall: float, output_stamp: float,
                    output_wall: float, receipt_dt: float, slew: bool,
                    out: Array) -> tuple[int, int, int]:
    """Gravity mode from the message to the command: ``(status, clipped, limited)``.

    The arguments up to ``last`` stay with a configuration (the controller binds
    them once): the model ``fp``, gravity ``g`` (3,) in the base frame, ``state``
    (4, n) the controller's ``q, qd, stamps`` and ``tau`` rows, the intake's
    ``window`` and ``threshold``, :func:`finish`'s ``index, bounds, last``. Then
    the message and the clocks: :func:`~rnea_ros.control.joint_state.intake`
    checks and merges it (its status is returned unless ``MERGED``: nothing else
    is done), ``tau = g(q)``, then :func:`finish` into ``out`` with
    :func:`output_dt`.
    """
    status = intake(state, position, velocity, n_names, idx, screen, False, stamp, now, newest,
                    newest_wall, threshold, window)
    if status != MERGED:
        return status, 0, 0
    # g(q) by gravity_torques' own compiled entry (called, not inlined: its kernel is
    # compiled once for both, and the watchdog's hold needs that entry anyway).
    gravity_call(fp, state[0], g, state[3])
    return finish(state[3], index, bounds, last, slew,
                  output_dt(stamp, now, output_stamp, output_wall, receipt_dt), out)




@jit_entry
def inverse_dynamics_command(fp: Array, g: Array, gains: Array, state: Array, index: Index,
                             bounds: Array, last: Array, q_ref: Array, qd_ref: Array,
                             qdd_ref: Array, slew: bool, stamp: float, now: float,
                             output_stamp: float, output_wall: float, receipt_dt: float,
                             out: Array) -> tuple[int, int, int]:
    """Inverse-dynamics mode's law, then :func:`finish` into ``out``:
    ``(status, clipped, limited)``.

    ``tau = ID(q_ref, qd_ref, qdd_ref) + Kp (q_ref - q) + Kd (qd_ref - qd)`` into
    ``state[3]``, with ``q, qd = state[0], state[1]`` (the merged state),
    ``gains`` (2, n) = ``[Kp; Kd]`` and ID
    :func:`~rnea_ros.core.kernels.rnea_drive_pass` (``rc.rnea``'s kernel, with the
    model's armature and friction, if it has any), as
    :class:`~rnea_ros.control.laws.InverseDynamicsPD` computes it. The arguments
    up to ``last`` stay with a configuration (the controller binds them once);
    the output is at ``stamp`` (see :func:`output_dt`).

    Twin: :class:`rnea_ros.control.laws.InverseDynamicsPD` is the same law as a
    pipeline stage (also on a moving base); this is its fused form.
    ``test_fused_inverse_dynamics_equals_the_general_pipeline``
    (test/control/test_command.py) keeps the two equal: change both or neither.
    """
    n = fp.shape[0]
    work = scratch(n, RW_COLS)
    q, qd, tau = state[0], state[1], state[3]
    rnea_drive_pass(fp, q_ref, qd_ref, qdd_ref, g, tau, work)
    for i in range(n):
        tau[i] = tau[i] + gains[0, i] * (q_ref[i] - q[i]) + gains[1, i] * (qd_ref[i] - qd[i])
    return finish(tau, index, bounds, last, slew,
                  output_dt(stamp, now, output_stamp, output_wall, receipt_dt), out)


finish_fast = FastCall(finish_entry)
gravity_fast = FastCall(gravity_command)
inverse_dynamics_fast = FastCall(inverse_dynamics_command)


def warm_paths(state: Array, last: Array, index: Index, bounds: Array, fp: Array, g: Array,
               gains: Array, gravity_only: bool, fused_inverse_dynamics: bool) -> None:
    """The first calls of the controller's compiled paths (the intake, the merge,
    :func:`finish`, and :func:`gravity_command` or :func:`inverse_dynamics_command`
    when the controller uses them), which compile them or load them from numba's
    cache and fix their argument types (:class:`~rnea_ros.core.kernels.FastCall`):
    on copies of the merged ``state`` (4, n) and the last command ``last`` (m,),
    with no joint to merge. ``fp``, ``g``: the model's kernel floats and gravity;
    ``gains`` (2, n): ``kp``, ``kd``."""
    state, none = state.copy(), np.zeros((2, 0), dtype=np.int64)
    last, out = last.copy(), np.empty(len(index))
    nan, no = math.nan, array("d")
    if not gravity_only:  # (gravity mode's fused step has the intake inside)
        intake_fast.call(state, 1.0, 1.0, False, no, no, 0, none, NO_MODEL_JOINT, 0.0, 0.0,
                         nan, nan)
    merge_fast.call(state, no, no, False, none, 0.0, 1.0)
    finish_fast.call(index, bounds, last, state[3], False, 0.0, 0.0, nan, nan, nan, out)
    if gravity_only:
        gravity_fast.call(fp, g, state, 1.0, 1.0, index, bounds, last, no, no, 0, none,
                          NO_MODEL_JOINT, 0.0, 0.0, nan, nan, nan, nan, nan, False, out)
    if fused_inverse_dynamics:
        q = state[0].copy()
        inverse_dynamics_fast.call(fp, g, gains, state, index, bounds, last, q, q, q, False,
                                   0.0, 0.0, nan, nan, nan, out)
