"""A ``sensor_msgs/JointState``'s names mapped onto the controller's merged state,
and the words for what the compiled intake found: the per-message Python of
:class:`~rnea_ros.control.controller.TorqueController` that is not the merge
itself (:mod:`rnea_ros.control.joint_state`) nor the command
(:mod:`rnea_ros.control.command`).

* :func:`name_map` -- once per distinct name list (the controller caches it): which
  message entries are model joints, where they go, whether a model joint is named
  twice, and the mimic followers that can be checked against their leaders;
* :func:`rejection` -- the ``(reason, message)`` of a message the intake refused,
  naming the joints and stamps involved;
* :func:`mimic_mismatch` -- the worst follower off its coupling ``multiplier *
  q_leader + offset`` in an accepted message, and :func:`mimic_warning` its text.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.errors import IntakeStatusError
from rnea_ros.control.joint_state import (
    BACKWARDS,
    BAD_STAMP,
    DUPLICATE,
    DUPLICATE_NAMES,
    FUTURE,
    LENGTH_MISMATCH,
    MAX_STATE,
    MISSING_VELOCITY,
    NO_MODEL_JOINT,
    NON_FINITE,
    OUT_OF_RANGE,
)
from rnea_ros.core.errors import options
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.mimic import follower_check

# (message index, model index, multiplier, offset, follower name): mimic.FollowerCheck.rows
Followers = tuple[tuple[int, int, float, float, str], ...]
# [message index; model index] (2, k), the intake's screen, the joints named twice, followers
NameMap = tuple[NDArray[np.int64], int, tuple[str, ...], Followers]

# The intake statuses :func:`rejection` words, by name (joint_state.py's codes).
REJECTIONS = {"NO_MODEL_JOINT": NO_MODEL_JOINT, "LENGTH_MISMATCH": LENGTH_MISMATCH,
              "BAD_STAMP": BAD_STAMP,
              "DUPLICATE_NAMES": DUPLICATE_NAMES, "MISSING_VELOCITY": MISSING_VELOCITY,
              "BACKWARDS": BACKWARDS, "DUPLICATE": DUPLICATE, "FUTURE": FUTURE,
              "OUT_OF_RANGE": OUT_OF_RANGE, "NON_FINITE": NON_FINITE}


def name_map(names: Sequence[str], state_names: Sequence[str],
             state_index: Mapping[str, int], model: RobotModel) -> NameMap:
    """``[message index; model index]`` (2, k) of the joints of ``state_names`` (the
    merged state's order; ``state_index`` its name -> index) found in ``names``, the
    intake's screen (``NO_MODEL_JOINT`` when k = 0, ``DUPLICATE_NAMES`` when a model
    joint is named twice, else 0), those joints, and the mimic followers of ``model``
    to check (:func:`rnea_ros.mimic.follower_check`). A name given twice maps its
    first occurrence."""
    position: dict[str, int] = {}
    duplicates: list[str] = []
    for k, name in enumerate(names):
        if name in position and name in state_index:
            duplicates.append(name)
        position.setdefault(name, k)
    model_idx = [i for i, j in enumerate(state_names) if j in position]
    msg_idx = [position[state_names[i]] for i in model_idx]
    screen = NO_MODEL_JOINT if not model_idx else DUPLICATE_NAMES if duplicates else 0
    followers = follower_check(model, names).rows if model_idx else ()
    return (np.array([msg_idx, model_idx], dtype=np.int64).reshape(2, -1), screen,
            tuple(dict.fromkeys(duplicates)), followers)


def rejection(status: int, mode: str, names: Sequence[str], state_names: Sequence[str],
              p: array[float], v: array[float], idx: NDArray[np.int64],
              duplicates: tuple[str, ...], stamp: float, last_stamp: float,
              newest: float, since_newest: float) -> tuple[str, str] | None:
    """``(reason, message)`` for a message the intake refused with ``status``; None
    for ``NO_MODEL_JOINT`` (nothing for this robot: ignored, not an error).

    ``p``, ``v``: the message's positions and velocities; ``idx`` its name map;
    ``stamp`` [s] its stamp, ``last_stamp`` the newest merged stamp of its joints
    (``BACKWARDS``; ``DUPLICATE``: one of them equals ``stamp``),
    ``newest`` the newest accepted stamp and ``since_newest`` [s] the steady time
    since it was accepted."""
    if status == NO_MODEL_JOINT:
        return None
    if status == LENGTH_MISMATCH:
        return "length_mismatch", f"{len(names)} names, {len(p)} positions, " \
                                  f"{len(v)} velocities"
    if status == BAD_STAMP:  # (builtin_interfaces/Time.sec is an int32: it can be < 0)
        why = "is negative (before the epoch: no clock gives it)" if stamp < 0 else \
            "is not finite"
        return "bad_stamp", f"stamp {stamp} s {why}"
    if status == DUPLICATE_NAMES:
        return "duplicate_names", f"joints {options(duplicates)} are named more than once"
    if status == MISSING_VELOCITY:
        return "missing_velocity", f"message has no velocities, {mode} mode needs them"
    if status == BACKWARDS:
        return "time_backwards", (f"stamp {stamp:.6f} s is older than the last one "
                                  f"({last_stamp:.6f} s)")
    if status == DUPLICATE:
        return "duplicate_stamp", (f"stamp {stamp:.6f} s repeats the last one of its joints: "
                                   "not a new sample (the sender's clock stopped?)")
    if status == FUTURE:
        return "time_future", (f"stamp {stamp:.6f} s is {stamp - newest:.3f} s after the "
                               f"last one, {since_newest:.3f} s ago")
    if status == OUT_OF_RANGE:
        return "out_of_range", f"a position or velocity is beyond {MAX_STATE:g} in magnitude"
    if status != NON_FINITE:
        valid = [f"{name} ({code})" for name, code in REJECTIONS.items()]
        raise IntakeStatusError(f"intake status {status} is not a rejection; valid: "
                                f"{options(valid)}")
    has_velocity = len(v) > 0
    bad = [state_names[i] for k, i in zip(idx[0], idx[1], strict=True)
           if not (math.isfinite(p[k]) and (not has_velocity or math.isfinite(v[k])))]
    return "non_finite", f"non-finite position or velocity for joints {options(bad)}"


def mimic_mismatch(rows: Followers, p: array[float], tolerance: float
                   ) -> tuple[str, float]:
    """The follower deviating most from ``multiplier * p[leader] + offset`` beyond
    ``tolerance`` (a non-finite deviation counts), and its deviation; ``("", 0.0)``
    when every follower of ``rows`` is within it."""
    bad, worst = "", 0.0
    for follower, leader, multiplier, offset, name in rows:
        d = float(p[follower]) - (multiplier * float(p[leader]) + offset)
        if not abs(d) <= tolerance:  # NaN too
            if bad == "" or not abs(d) <= abs(worst):
                bad, worst = name, d
    return bad, worst


def mimic_warning(model: RobotModel, follower: str, deviation: float,
                  tolerance: float) -> str:
    """The warning for ``follower`` of ``model`` off its coupling by ``deviation``."""
    m = model.mimic_joints[follower]
    return (f"mimic follower '{follower}' is {deviation:+.6g} off its coupling "
            f"{m.multiplier:g} * '{m.leader}' + {m.offset:g} (tolerance {tolerance:g}); "
            "check the URDF's <mimic> or the driver (the command uses the leader only)")
