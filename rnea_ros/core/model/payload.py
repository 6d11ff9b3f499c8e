"""Payloads: a rigid body attached to a link, merged into that link's body.

``with_payload(model, link, mass, com, inertia)`` returns a new model whose
body carrying ``link`` has the payload's inertia added (parallel-axis
theorem). ``com`` [m] and ``inertia`` [kg m^2, about the payload's COM] are
expressed in the ``link`` frame; ``inertia`` takes 3 (principal), 6 (xx, yy,
zz, xy, xz, yz) or 9 numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnea_ros.core import spatial
from rnea_ros.core.errors import ModelParameterError
from rnea_ros.core.model.robot_model import RobotModel, check_inertia
from rnea_ros.core.model.tree import as_inertia, as_vector3


@dataclass(frozen=True)
class Payload:
    """A payload on ``link``: mass [kg], COM (3,) [m] and inertia about the COM
    (3, 3) [kg m^2], both in the link frame."""

    link: str
    mass: float
    com: Sequence[float] = (0.0, 0.0, 0.0)
    inertia: Sequence[float] = (0.0, 0.0, 0.0)


def with_payload(model: RobotModel, payload: Payload) -> RobotModel:
    """A copy of ``model`` carrying ``payload`` (validated: known link, physical inertia).

    Arguments as in Conventions: ``model`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    payload : Payload
        The payload (link, mass, centre of mass, inertia).

    Returns
    -------
    RobotModel
        A copy carrying the payload.
    """
    if payload.link not in model.frames:
        raise ModelParameterError(
            f"payload link '{payload.link}' is not a link of '{model.name}'; links: "
            + ", ".join(repr(n) for n in list(model.frames)[:12])
        )
    com = as_vector3(payload.com, "payload com", ModelParameterError)
    inertia = as_inertia(payload.inertia, "payload", ModelParameterError)
    check_inertia(f"payload on '{payload.link}'", float(payload.mass), com, inertia)
    if payload.mass == 0.0 and not np.any(inertia):
        return model
    frame = model.frames[payload.link]
    if frame.body < 0:
        raise ModelParameterError(f"payload link '{payload.link}' is fixed to the base: it has no "
                             "effect on the joint torques")
    part = spatial.express_inertia(float(payload.mass), com, inertia,
                                   frame.rotation, frame.translation)
    i = frame.body
    m, c, I = spatial.add_inertias((float(model.mass[i]), model.com[i], model.inertia[i]), part)
    mass, coms, inertias = model.mass.copy(), model.com.copy(), model.inertia.copy()
    mass[i], coms[i], inertias[i] = m, c, I
    return model.replace(mass=mass, com=coms, inertia=inertias)

