"""Models from modified Denavit-Hartenberg tables (Khalil & Kleinfinger; Khalil 2010 section 2).

Frame ``R_j`` is attached to link ``j`` with ``z_j`` along joint ``j``;
relative to the frame of its antecedent link ``a(j)`` (Khalil 2010 eq. 1)::

    ^{a(j)}T_j = Rot(z, gamma_j) Tran(z, b_j) Rot(x, alpha_j) Tran(x, d_j)
                 Rot(z, theta_j) Tran(z, r_j)

with ``q_j = sigma_bar_j theta_j + sigma_j r_j``: ``sigma = 0`` revolute
(``theta_j = theta + q_j``), ``1`` prismatic (``r_j = r + q_j``), ``2`` a frame
fixed to ``a(j)``. ``gamma_j = b_j = 0`` and ``a(j) = j - 1`` give a serial
chain in Craig's notation (``alpha_{i-1} = alpha_j``, ``a_{i-1} = d_j``,
``d_i = r_j``) as used by Guarino Lo Bianco 2009. The link's COM and inertia
(about the COM) are given in frame ``R_j``, which is body ``j``'s frame.

``joint_type="spherical"`` makes row ``j`` a ball joint at the origin of the
frame the row's ``(gamma, b, alpha, d, theta, r)`` place (``theta`` and ``r``
constant): Khalil's three concurrent revolute axes as one joint, ``q_j`` a unit
quaternion ``[x y z w]`` and ``v_j`` the angular velocity in ``R_j``
(:mod:`rnea_ros.core.model.joints`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnea_ros.core import spatial
from rnea_ros.core.errors import DHError
from rnea_ros.core.model.robot_model import STANDARD_GRAVITY, RobotModel
from rnea_ros.core.model.tree import JointSpec, LinkSpec, TableRow, build_model

SIGMA_TYPES = {0: "revolute", 1: "prismatic", 2: "fixed"}
ROW_TYPES = ("spherical",)  # joint_type values besides sigma's


@dataclass(frozen=True)
class MDHLink(TableRow):
    """One row ``j`` of a Khalil-Kleinfinger table plus inertial and drive data.

    ``antecedent`` is ``a(j)``, the 1-based row of the antecedent link (0 = the
    base; ``None`` = the previous row). ``inertia`` is about the COM in frame
    ``R_j`` axes (:class:`~rnea_ros.core.model.tree.TableRow`'s keywords: ``mass``,
    ``com``, ``inertia``, names, limits, drive parameters). Units: m, rad.
    ``joint_type="spherical"`` (with ``sigma = 0``)
    makes the row a spherical joint (see the module docstring).
    """

    sigma: int = 0
    gamma: float = 0.0
    b: float = 0.0
    alpha: float = 0.0
    d: float = 0.0
    theta: float = 0.0
    r: float = 0.0
    antecedent: int | None = None
    joint_type: str | None = None


def from_mdh(links: Sequence[MDHLink], *, name: str = "mdh_robot", base: str = "link0",
             gravity: Sequence[float] = STANDARD_GRAVITY, inertia_check: str = "strict"
             ) -> RobotModel:
    """Tree model from a modified-DH table (rows ``j = 1..n``, antecedents first).

    :class:`~rnea_ros.core.errors.DHError` naming the row for an empty table, a
    ``sigma`` or ``joint_type`` out of range, an antecedent not before the row or a
    non-finite ``gamma, b, alpha, d, theta, r``; a link's inertia is checked as
    ``inertia_check`` says.

    Arguments as in Conventions: ``name``, ``base`` ([loading models](core.md#loading-models));
    ``gravity``, ``inertia_check`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    links : sequence of MDHLink
        Modified-DH rows ``j = 1..n``, antecedents first.

    Returns
    -------
    RobotModel
        The tree.
    """
    if not links:
        raise DHError("a modified-DH table needs at least one row")
    link_names = [base] + [row.link_name or f"link{j}" for j, row in enumerate(links, start=1)]
    link_specs = [LinkSpec(base)]
    joint_specs: list[JointSpec] = []
    for j, row in enumerate(links, start=1):
        joint_name = row.name or f"joint{j}"
        where = f"MDH row {j} (joint '{joint_name}')"
        if row.sigma not in SIGMA_TYPES:
            raise DHError(f"{where}: sigma = {row.sigma!r} must be 0 (revolute), 1 (prismatic) "
                          "or 2 (fixed)")
        if row.joint_type is not None and (row.joint_type not in ROW_TYPES or row.sigma != 0):
            raise DHError(f"{where}: joint_type = {row.joint_type!r} must be None or one of "
                          f"{', '.join(map(repr, ROW_TYPES))} (with sigma = 0)")
        antecedent = j - 1 if row.antecedent is None else row.antecedent
        if not 0 <= antecedent < j:
            raise DHError(f"{where}: antecedent a(j) = {antecedent} must be in 0..{j - 1} "
                          "(rows are numbered from the base, antecedents first)")
        values = (row.gamma, row.b, row.alpha, row.d, row.theta, row.r)
        if not all(np.isfinite(v) for v in values):
            raise DHError(f"{where}: gamma, b, alpha, d, theta, r must be finite, got {values}")
        origin = spatial.identity()
        for step in (
            spatial.rotation(spatial.rot_z(row.gamma)), spatial.translation(0.0, 0.0, row.b),
            spatial.rotation(spatial.rot_x(row.alpha)), spatial.translation(row.d, 0.0, 0.0),
            spatial.rotation(spatial.rot_z(row.theta)), spatial.translation(0.0, 0.0, row.r),
        ):
            origin = spatial.compose(origin, step)
        link_specs.append(row.link_spec(link_names[j], where, DHError))
        joint_specs.append(row.joint_spec(joint_name, row.joint_type or SIGMA_TYPES[row.sigma],
                                          link_names[antecedent], link_names[j], origin))
    return build_model(name, link_specs, joint_specs, gravity=gravity, error=DHError,
                       inertia_check=inertia_check)
