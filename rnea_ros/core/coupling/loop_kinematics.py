"""Kinematics of closed loops: passive joints from active ones (Khalil 2010 §2.2, §4).

* :func:`solve_loops` -- positions: the passive joints ``q_p`` that close every
  loop for given active ``q_a`` (the geometric constraint eq. 3), by damped
  Newton (Levenberg-Marquardt) from a warm start; a clear
  :class:`~rnea_ros.core.errors.LoopClosureError` naming the loop when it
  cannot close, or when it closes at a singular configuration.
* :func:`loop_velocities` -- ``qd = G qd_a`` from the kinematic constraint
  eq. 4 (``K qd = 0``); :func:`loop_jacobian` -- ``G = dq_tr/dq_a`` (eq. 56),
  (n, N); :func:`loop_constraint_jacobian` -- ``K`` (m, n).
* :func:`loop_accelerations` -- ``qdd = G qdd_a + Gdot qd_a`` from the
  derivative of eq. 4; :func:`loop_bias_acceleration` -- ``Gdot qd_a``.

Vectors over the tree (``q``, ``qd``, ``qdd``) are in the tree's joint order
(n,); active ones (``q_a``, ``qd_a``, ``qdd_a``) in the order of
``model.active`` (N,). ``K``'s rows: loop after loop, the blocked components
of the relative twist of frame 2 w.r.t. frame 1 in frame 2 (see
:mod:`._loop_jit`). Plain numpy wrappers around compiled kernels; the 1 kHz
path is :func:`~rnea_ros.core.coupling.loop_dynamics.loop_rnea`.
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core.coupling import _loop_jit as kj
from rnea_ros.core.coupling import _loop_kinematics_jit as kk
from rnea_ros.core.coupling.loops import CLOSURE_TOLERANCE, ClosedLoopModel
from rnea_ros.core.errors import LoopBudgetError, LoopClosureError, StateError, options

Array = NDArray[np.float64]

NEWTON_TOLERANCE = 1e-12  # [m], [rad]: largest constraint error of a solution
NEWTON_ITERATIONS = 50
MAX_STEP = 0.5  # [rad] or [m]: largest passive-joint change per Newton step
ACTIVE_STEP = 0.25  # [rad] or [m]: largest active-joint move per continuation step
CONTINUATION_REFINEMENT = (8, 64)  # finer walks when a step fails
CHUNK = 200  # Newton iterations between looks at the clock (solve_loops(seconds=...))
UNBOUNDED = 2**62  # the budget of solve_loops(budget=None)
_REFINEMENTS = np.array(CONTINUATION_REFINEMENT, dtype=np.int64)

_solve_fast = FastCall(kk.solve_call)
_asc, _f64 = np.ascontiguousarray, np.float64


# ----------------------------------------------------------------- inputs
def tree_vector(model: ClosedLoopModel, x: object, name: str) -> Array:
    """``x`` as a finite float64 (n,) tree vector, else :class:`StateError`."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.shape != (model.n,):
        raise StateError(f"{name} has shape {a.shape}, expected ({model.n},): one value per "
                         f"tree joint of '{model.name}' ({options(model.tree.joint_names)})")
    if not np.all(np.isfinite(a)):
        joint = model.tree.joint_names[int(np.flatnonzero(~np.isfinite(a))[0])]
        raise StateError(f"{name} of joint '{joint}' is not finite")
    return a


def active_vector(model: ClosedLoopModel, x: object, name: str) -> Array:
    """``x`` as a finite float64 (N,) active vector, else :class:`StateError`."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.shape != (model.n_active,):
        raise StateError(f"{name} has shape {a.shape}, expected ({model.n_active},): one value "
                         f"per active joint of '{model.name}' ({options(model.active_names)})")
    if not np.all(np.isfinite(a)):
        joint = model.active_names[int(np.flatnonzero(~np.isfinite(a))[0])]
        raise StateError(f"{name} of active joint '{joint}' is not finite")
    return a


def check_closed(model: ClosedLoopModel, q: Array) -> None:
    """:class:`StateError` naming the loop if ``q`` does not close every loop."""
    e = np.empty(model.n_constraints)
    worst = int(kk.residual_call(model.tree.kernel_floats, model.loop_floats, q, e))
    err = float(np.abs(e).max())
    if not err <= CLOSURE_TOLERANCE:
        raise_not_closed(model, worst, err)


def raise_not_closed(model: ClosedLoopModel, loop: int, err: float) -> None:
    """The :class:`StateError` for a configuration that does not close loop ``loop``."""
    raise StateError(
        f"q does not close loop '{model.loops[loop].name}' of '{model.name}' (constraint "
        f"error {err:.3g} m or rad, tolerance {CLOSURE_TOLERANCE:g}): solve the passive joints "
        "from the active ones with rc.solve_loops")


# ------------------------------------------------------------- positions
def _solve(model: ClosedLoopModel, qa: Array, q0: Array, tol: float, max_iter: int,
           budget: int, seconds: float | None) -> tuple[Array, int, Array, Array]:
    """The kernel's Newton and continuation (see :func:`solve_loops`); with ``seconds``,
    the kernel pauses every :data:`CHUNK` iterations for a look at the clock.
    Returns ``q``, the status, ``info`` (4,) and ``[iterations spent, seconds]``."""
    info = np.empty(4)
    q = np.empty(model.n)
    progress = np.zeros(4)
    fp, lp, perm, _ = model.kernel_arrays
    started = time.perf_counter() if seconds is not None else 0.0
    chunk = budget if seconds is None else CHUNK
    args = (fp, lp, perm, qa, q0, q, tol, max_iter, MAX_STEP, ACTIVE_STEP, _REFINEMENTS,
            model.active_period, budget, chunk, progress, info)
    status = int(_solve_fast.call(*args))
    elapsed = 0.0
    while status == kj.PAUSED:
        elapsed = time.perf_counter() - started
        if seconds is not None and elapsed > seconds:
            status = kj.BUDGET
            break
        status = int(_solve_fast.call(*args))
    if status == kj.BUDGET and seconds is not None:
        elapsed = time.perf_counter() - started
    return q, status, info, np.array([float(progress[2]), elapsed])


def closure_failure(model: ClosedLoopModel, qa: Array, status: int, info: Array) -> str:
    """The message for a failed :func:`_solve`."""
    loop = model.loops[int(info[1])]
    at = ", ".join(f"{n}={v:.6g}" for n, v in zip(model.active_names, qa, strict=True))
    if status == kj.SINGULAR:
        joints = options([j for j in model.loop_joints(int(info[1])) if j in model.passive_names])
        return (f"the configuration of '{model.name}' at active positions ({at}) is singular: "
                f"the passive joints of loop '{loop.name}' ({joints}) "
                f"are not determined by the active joints (rank measure {info[3]:.2g})")
    if status == kj.REVERSED:
        return (f"loop '{loop.name}' of '{model.name}' closes only with its {loop.type} cut "
                f"joint's axis reversed near the guess, at active positions ({at}); "
                "start from a guess in the intended assembly mode")
    near = (f"; the passive joints are near a singular configuration there (rank measure "
            f"{info[3]:.2g})" if info[3] < 1e-6 else "")
    return (f"loop '{loop.name}' of '{model.name}' cannot be closed at active positions ({at}): "
            f"constraint error {info[2]:.3g} (m or rad) after {int(info[0])} Newton iterations "
            f"and continuation from the guess; the active positions may be outside the "
            f"mechanism's workspace{near}")


def budget_failure(model: ClosedLoopModel, qa: Array, budget: int, seconds: float | None,
                   spent: Array) -> str:
    """The message for a :func:`_solve` out of budget."""
    at = ", ".join(f"{n}={v:.6g}" for n, v in zip(model.active_names, qa, strict=True))
    wall = "" if seconds is None else f" or {seconds * 1e3:.3g} ms"
    return (f"the loops of '{model.name}' were not closed at active positions ({at}) within "
            f"the budget of {budget} Newton iterations{wall} for one solve (spent "
            f"{int(spent[0])}{'' if seconds is None else f' in {spent[1] * 1e3:.3g} ms'}): "
            "the active positions are far from the last solution or outside the workspace")


def solve_loops(model: ClosedLoopModel, q_active: object, guess: object | None = None, *,
                tol: float = NEWTON_TOLERANCE, max_iter: int = NEWTON_ITERATIONS,
                budget: int | None = None, seconds: float | None = None) -> Array:
    """Tree configuration ``q`` (n,) closing every loop with the active joints at
    ``q_active`` (N,): the passive joints solved from eq. 3.

    Damped Newton from ``guess`` (an (n,) tree configuration, default
    ``model.q_reference``; pass the previous solution along a trajectory);
    when the actives are far from the guess's (or Newton fails), continuation:
    the actives walk from the guess's to ``q_active`` in steps of at most
    :data:`ACTIVE_STEP`, so the passive joints stay in the guess's assembly
    mode. The result closes every loop to ``tol`` [m, rad].
    :class:`LoopClosureError` names the loop if it cannot close (outside the
    workspace) or closes at a singular configuration (passive joints
    undetermined).

    A continuous active joint's angle counts modulo a turn: the walk goes to the
    value of ``q_active`` nearest the guess's (at most half a turn away), and the
    result holds that value (``q_active``'s own when within half a turn).

    ``budget`` caps the work: at most that many Newton iterations (Jacobian
    evaluations) over the whole continuation, deterministic; ``seconds`` is a
    wall-time backstop, looked at every :data:`CHUNK` iterations. Out of either:
    :class:`~rnea_ros.core.errors.LoopBudgetError` (a :class:`LoopClosureError`).
    Default: unbounded.

    Arguments as in Conventions: ``model`` ([closed loops](core.md#closed-loops)); ``guess``,
    ``tol``, ``max_iter``, ``budget`` ([loop solver options](core.md#loop-solver-options)).

    Parameters
    ----------
    q_active : array_like of shape (N,)
        Active joint positions [rad, m].
    seconds : float, optional
        Wall-time limit [s] (``None``: none).

    Returns
    -------
    q : ndarray of shape (n,)
        Tree configuration closing every loop to ``tol``.
    """
    qa = _asc(q_active, _f64)
    q0 = model.q_reference if guess is None else _asc(guess, _f64)
    if qa.shape != (model.n_active,) or q0.shape != (model.n,):
        active_vector(model, qa, "q_active")
        tree_vector(model, q0, "guess")
    cap = UNBOUNDED if budget is None else int(budget)
    q, status, info, spent = _solve(model, qa, q0, float(tol), int(max_iter), cap, seconds)
    if status != kj.CLOSED:
        active_vector(model, qa, "q_active")  # name a non-finite input first
        tree_vector(model, q0, "guess")
        if status == kj.BUDGET:
            raise LoopBudgetError(budget_failure(model, qa, cap, seconds, spent))
        raise LoopClosureError(closure_failure(model, qa, status, info))
    return q


def polish_closure(model: ClosedLoopModel, q: object) -> Array:
    """``q`` (n,), closed to :data:`CLOSURE_TOLERANCE`, closed to :data:`NEWTON_TOLERANCE`
    by Newton on the passive joints (the active ones held): the builder's reference.

    Unlike :func:`solve_loops`, a closed but singular result is returned (the builder's
    mobility check then names the passive joints the active ones do not determine);
    :class:`LoopClosureError` if Newton cannot close the loops.
    """
    q0 = tree_vector(model, q, "q")
    qa = q0[model.active_index]
    q, status, info, _ = _solve(model, qa, q0, NEWTON_TOLERANCE, NEWTON_ITERATIONS, UNBOUNDED,
                                None)
    if status not in (kj.CLOSED, kj.SINGULAR):
        raise LoopClosureError(closure_failure(model, qa, status, info))
    return q


def solve_loops_batch(model: ClosedLoopModel, q_active: object, guess: object | None = None,
                      *, tol: float = NEWTON_TOLERANCE, max_iter: int = NEWTON_ITERATIONS,
                      budget: int | None = None) -> Array:
    """:func:`solve_loops` over N samples ``q_active`` (N, N_a) -> ``q`` (N, n), each
    sample warm-started from the previous one (a trajectory stays in one assembly mode);
    ``budget``: :func:`solve_loops`'s, per sample.

    Arguments as in Conventions: ``model`` ([closed loops](core.md#closed-loops)); ``guess``,
    ``tol``, ``max_iter``, ``budget`` ([loop solver options](core.md#loop-solver-options)).

    Parameters
    ----------
    q_active : array_like of shape (N, N_a)
        Active joint positions [rad, m].

    Returns
    -------
    q : ndarray of shape (N, n)
        Tree configurations, a row per sample.
    """
    QA = np.ascontiguousarray(q_active, dtype=np.float64)
    if QA.ndim != 2 or QA.shape[1] != model.n_active:
        raise StateError(f"q_active has shape {QA.shape}, expected (N, {model.n_active}) for "
                         f"'{model.name}' ({options(model.active_names)})")
    out = np.empty((QA.shape[0], model.n))
    q = model.q_reference if guess is None else tree_vector(model, guess, "guess")
    for k in range(QA.shape[0]):
        try:
            q = solve_loops(model, QA[k], q, tol=tol, max_iter=max_iter, budget=budget)
        except (LoopClosureError, StateError) as exc:
            raise type(exc)(f"sample {k}: {exc}") from None
        out[k] = q
    return out


def loop_residual(model: ClosedLoopModel, q: object) -> Array:
    """Constraint error (m,) of eq. 3 at the tree configuration ``q``: zero when closed.

    Per loop, its blocked rows: position ``R2^T (p2 - p1)`` [m]; orientation
    ``sin(angle) * axis`` of frame 2 relative to frame 1 (revolute: the two
    components of ``z1``'s misalignment in frame 2) [rad to first order].

    Arguments as in Conventions: ``model``, ``q`` ([closed loops](core.md#closed-loops)).

    Returns
    -------
    ndarray of shape (m,)
        Constraint error [m, rad]; zero when closed.
    """
    q = tree_vector(model, q, "q")
    e = np.empty(model.n_constraints)
    kk.residual_call(model.tree.kernel_floats, model.loop_floats, q, e)
    return e


# ----------------------------------------------------------------- rates
def _kinematics(model: ClosedLoopModel, q: object, qd_a: object | None, qdd_a: object | None,
                want_g: bool) -> tuple[Array, Array, Array, Array]:
    q = tree_vector(model, q, "q")
    qda = (np.zeros(model.n_active) if qd_a is None
           else active_vector(model, qd_a, "qd_active"))
    want_acc = qdd_a is not None
    qdda = active_vector(model, qdd_a, "qdd_active") if want_acc else np.zeros(model.n_active)
    qd = np.zeros(model.n)
    qdd = np.zeros(model.n)
    K = np.empty((model.n_constraints, model.n))
    G = np.zeros((model.n, model.n_active))
    rank = kk.kinematics_call(model.tree.kernel_floats, model.loop_floats, model.permutation,
                              q, qda, qdda, want_acc, CLOSURE_TOLERANCE, qd, qdd, K, G, want_g)
    check_rank(model, q, K, rank)
    return qd, qdd, K, G


def check_rank(model: ClosedLoopModel, q: Array, K: Array, rank: float) -> None:
    """Raise for a kernel's rank code: ``q`` not closed (:class:`StateError`) or
    singular (:class:`LoopClosureError`)."""
    if rank >= kj.SINGULAR_RATIO:
        return
    if rank < 0.0:
        check_closed(model, q)
    raise_singular(model, q, K)


def raise_singular(model: ClosedLoopModel, q: Array, K: Array) -> None:
    """:class:`LoopClosureError` for a singular ``K_p`` at ``q``, naming the loop and joints."""
    Kp = K[:, model.passive_index]
    _, s, vt = np.linalg.svd(Kp)
    free = np.abs(vt[-1]) > 1e-6 * np.abs(vt[-1]).max()
    joints = [model.tree.joint_names[j] for j in model.passive_index[free]]
    loops = [loop.name for l, loop in enumerate(model.loops)
             if set(model.loop_joints(l)) & set(joints)]
    raise LoopClosureError(
        f"'{model.name}' is at a singular configuration: the passive joints {options(joints)} "
        f"of loop(s) {options(loops)} are not determined by the active joints "
        f"(smallest/largest singular value of the passive constraint Jacobian "
        f"{s[-1] / max(float(s[0]), 1e-300):.2g})")


def loop_constraint_jacobian(model: ClosedLoopModel, q: object) -> Array:
    """``K`` (m, n) at ``q``: ``K qd`` = the blocked rows of each loop's relative twist
    (eq. 4, ``J_k qd_b1 = J_{k+B} qd_b2`` on the constrained directions), in frame 2.

    Does not require ``q`` to be closed (it is the Jacobian of
    :func:`loop_residual` there, to first order).

    Arguments as in Conventions: ``model``, ``q`` ([closed loops](core.md#closed-loops)).

    Returns
    -------
    K : ndarray of shape (m, n)
        Constraint Jacobian, frame 2 of each loop.
    """
    q = tree_vector(model, q, "q")
    K = np.empty((model.n_constraints, model.n))
    kk.jacobian_call(model.tree.kernel_floats, model.loop_floats, q, K)
    return K


def loop_jacobian(model: ClosedLoopModel, q: object) -> Array:
    """``G = dq_tr/dq_a = dqd_tr/dqd_a`` (n, N) at a closed ``q`` (eq. 56):
    identity rows for the active joints, ``-K_p^+ K_a`` for the passive ones.

    Arguments as in Conventions: ``model``, ``q`` ([closed loops](core.md#closed-loops)).

    Returns
    -------
    G : ndarray of shape (n, N)
        ``dq_tree / dq_active``.
    """
    return _kinematics(model, q, None, None, True)[3]


def loop_velocities(model: ClosedLoopModel, q: object, qd_active: object) -> Array:
    """Tree velocities ``qd = G qd_a`` (n,) at a closed ``q`` (eq. 4).

    Arguments as in Conventions: ``model``, ``q``, ``qd_active``
    ([closed loops](core.md#closed-loops)).

    Returns
    -------
    qd : ndarray of shape (n,)
        Tree joint velocities [rad/s, m/s].
    """
    return _kinematics(model, q, qd_active, None, False)[0]


def loop_accelerations(model: ClosedLoopModel, q: object, qd_active: object,
                       qdd_active: object) -> Array:
    """Tree accelerations ``qdd = G qdd_a + Gdot qd_a`` (n,) at a closed ``q``
    (the time derivative of eq. 4: ``K qdd + Kdot qd = 0``).

    Arguments as in Conventions: ``model``, ``q``, ``qd_active``, ``qdd_active``
    ([closed loops](core.md#closed-loops)).

    Returns
    -------
    qdd : ndarray of shape (n,)
        Tree joint accelerations [rad/s^2, m/s^2].
    """
    return _kinematics(model, q, qd_active, qdd_active, False)[1]


def loop_bias_acceleration(model: ClosedLoopModel, q: object, qd_active: object) -> Array:
    """``Gdot qd_a`` (n,): the tree accelerations at ``qdd_a = 0`` (velocity product terms).

    Arguments as in Conventions: ``model``, ``q``, ``qd_active``
    ([closed loops](core.md#closed-loops)).

    Returns
    -------
    ndarray of shape (n,)
        ``Gdot qd_a`` [rad/s^2, m/s^2].
    """
    return _kinematics(model, q, qd_active, np.zeros(model.n_active), False)[1]


__all__ = [
    "loop_accelerations",
    "loop_bias_acceleration",
    "loop_constraint_jacobian",
    "loop_jacobian",
    "loop_residual",
    "loop_velocities",
    "solve_loops",
    "solve_loops_batch",
]
