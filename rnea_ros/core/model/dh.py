"""Models from standard Denavit-Hartenberg tables (Barman 2020, chapter II).

Frame ``j`` sits at the distal end of link ``j``; relative to frame ``j-1``
(Barman eq. 2.3, 2.8)::

    ^{j-1}T_j = Rot(z, theta_j) Tran(z, d_j) Tran(x, a_j) Rot(x, alpha_j)

Joint ``j`` moves about/along ``z_{j-1}``: ``theta_j = theta + q_j``
(revolute) or ``d_j = d + q_j`` (prismatic); the table's value of the moving
parameter is its offset. The link's COM and inertia are given in frame ``j``
(Barman's ``^j r_j``, e.g. ``(-L/2, 0, 0)`` for a uniform link).

In the model, body ``j`` is the joint frame after the motion,
``Rot(z, theta_j) Tran(z, d_j)`` from frame ``j-1``; DH frame ``j`` is kept as
the fixed frame ``"<link>_frame"`` (``Tran(x, a_j) Rot(x, alpha_j)`` from it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnea_ros.core import spatial
from rnea_ros.core.errors import DHError
from rnea_ros.core.model.robot_model import STANDARD_GRAVITY, RobotModel, check_inertia
from rnea_ros.core.model.tree import JointSpec, LinkSpec, TableRow, build_model


@dataclass(frozen=True)
class DHLink(TableRow):
    """One row of a standard DH table plus the link's inertial and drive data
    (:class:`~rnea_ros.core.model.tree.TableRow`'s keywords: ``mass``, ``com``,
    ``inertia``, names, limits, drive parameters; COM and inertia in frame ``j``).
    Units: m, rad.
    """

    theta: float = 0.0
    d: float = 0.0
    a: float = 0.0
    alpha: float = 0.0
    joint: str = "revolute"


def from_dh(links: Sequence[DHLink], *, name: str = "dh_robot", base: str = "base_link",
            gravity: Sequence[float] = STANDARD_GRAVITY, inertia_check: str = "strict"
            ) -> RobotModel:
    """Serial-chain model from a standard DH table (rows from the base outwards).

    :class:`~rnea_ros.core.errors.DHError` naming the row for an empty table, a joint
    neither revolute nor prismatic or a non-finite ``theta, d, a, alpha``; a link's
    inertia is checked as ``inertia_check`` says.

    Arguments as in Conventions: ``name``, ``base`` ([loading models](core.md#loading-models));
    ``gravity``, ``inertia_check`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    links : sequence of DHLink
        Standard DH rows from the base outwards.

    Returns
    -------
    RobotModel
        The serial chain.
    """
    if not links:
        raise DHError("a DH table needs at least one row")
    link_specs = [LinkSpec(base)]
    joint_specs: list[JointSpec] = []
    previous = base
    for j, row in enumerate(links, start=1):
        joint_name = row.name or f"joint{j}"
        link_name = row.link_name or f"link{j}"
        where = f"DH row {j} (joint '{joint_name}')"
        if row.joint not in ("revolute", "prismatic"):
            raise DHError(f"{where}: joint '{row.joint}' is not 'revolute' or 'prismatic'")
        values = (row.theta, row.d, row.a, row.alpha)
        if not all(np.isfinite(v) for v in values):
            raise DHError(f"{where}: theta, d, a, alpha must be finite, got {values}")
        frame_name = f"{link_name}_frame"
        frame = row.link_spec(frame_name, where, DHError)
        check_inertia(f"DH row {j}, link '{link_name}'", frame.mass, frame.com, frame.inertia,
                      inertia_check)
        link_specs += [LinkSpec(link_name), frame]
        origin = spatial.compose(spatial.rotation(spatial.rot_z(row.theta)),
                                 spatial.translation(0.0, 0.0, row.d))
        joint_specs += [
            row.joint_spec(joint_name, row.joint, previous, link_name, origin),
            JointSpec(f"{link_name}_frame_joint", "fixed", link_name, frame_name,
                      spatial.compose(spatial.translation(row.a, 0.0, 0.0),
                                      spatial.rotation(spatial.rot_x(row.alpha)))),
        ]
        previous = frame_name
    return build_model(name, link_specs, joint_specs, gravity=gravity, error=DHError,
                       inertia_check=inertia_check)
