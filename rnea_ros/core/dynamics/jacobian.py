"""Frame Jacobians ``J(q)`` (6, nv) of any link, as Pinocchio's ``computeFrameJacobian``.

``[v; w] = J(q) qd``: ``v`` the velocity of the link frame's origin, ``w`` its angular
velocity, linear rows first (Pinocchio's order), in one of Pinocchio's
``ReferenceFrame`` conventions:

* ``"LOCAL"``: the link frame's own axes (``v`` of its origin);
* ``"LOCAL_WORLD_ALIGNED"``: world (base) axes, ``v`` of the link frame's origin;
* ``"WORLD"``: world axes, the spatial velocity at the world origin (``v`` of the point
  of the body that passes through the world origin: ``v_origin - w x p_origin``).

Column of joint ``k`` (an ancestor of the link; zero otherwise), with ``u_k`` its
axis and ``p_k`` a point on it, in the world: revolute ``[u_k x (o - p_k); u_k]``,
prismatic ``[u_k; 0]`` (Khalil & Dombre 2002 §5.3; Featherstone 2008 §4.1), ``o`` the
frame's origin (``0`` for ``WORLD``); ``LOCAL`` rotates both halves by ``R_frame^T``.
Multi-DoF joints: one column per velocity coordinate, from the kernel tree's sub-rows
(body-fixed unit twists, so a free-flyer's columns are its ``LOCAL`` velocity);
mimic followers add ``multiplier x`` their column to their leader's.

The link may be merged into a body by fixed joints (``model.frames``); a link on the
fixed base gives zeros. The transpose maps a wrench on the link to joint torques:
``tau = J^T [f; m]`` with ``f, m`` the force and the moment about the frame's origin
in the same axes (``WORLD``: moment about the world origin).

Kernel: :mod:`~rnea_ros.core.dynamics._jacobian_jit` (``jacobian_pass``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics._jacobian_jit import LOCAL, LOCAL_WORLD_ALIGNED, WORLD, jacobian_pass
from rnea_ros.core.dynamics.momentum_bias import require_tree
from rnea_ros.core.errors import ModelError, options
from rnea_ros.core.inputs import joint_vector, raise_non_finite
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

REFERENCES = {"LOCAL": LOCAL, "WORLD": WORLD, "LOCAL_WORLD_ALIGNED": LOCAL_WORLD_ALIGNED}


def frame_jacobian(model: RobotModel, q: object, frame: str,
                   reference: str = "LOCAL") -> Array:
    """Jacobian (6, nv) ``[linear; angular]`` of link ``frame`` at ``q`` (nq,), in
    ``reference`` ("LOCAL", "WORLD" or "LOCAL_WORLD_ALIGNED", Pinocchio's default
    ``LOCAL``); see the module docstring.

    Arguments as in Conventions: ``model``, ``q`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    frame : str
        Link name (merged links too).
    reference : {'LOCAL', 'WORLD', 'LOCAL_WORLD_ALIGNED'}, default 'LOCAL'
        Frame of the rows: the link's frame, the base frame at the base origin, or the base
        axes at the link origin (Pinocchio's reference frames).

    Returns
    -------
    J : ndarray of shape (6, nv)
        ``[linear; angular]`` rows in ``reference``: twist = J qd [m/s, rad/s].

    Examples
    --------
    >>> import numpy as np
    >>> import rnea_ros.core as rc
    >>> model = rc.load_urdf("urdf/arm7.urdf")
    >>> J = rc.frame_jacobian(model, np.full(model.nq, 0.3), "link7", reference="WORLD")
    >>> J.shape
    (6, 7)
    """
    model = require_tree(model, "frame_jacobian")
    if reference not in REFERENCES:
        raise ModelError(f"unknown reference frame '{reference}'; valid: {options(REFERENCES)}")
    link = model.link_frame(frame)
    q = joint_vector(model, q, "q")
    row = int(link.body)
    if row >= 0 and model.expanded:
        row = int(model.kernel_last_row[row])
    J = np.empty((6, model.nv))
    R_frame = np.ascontiguousarray(link.rotation, dtype=np.float64).reshape(1, 9)
    t_frame = np.ascontiguousarray(link.translation, dtype=np.float64).reshape(1, 3)
    if not jacobian_pass(model.kernel_floats, model.kernel_map, bool(model.expanded), q, row,
                         R_frame, t_frame, REFERENCES[reference], J):
        raise_non_finite(model, q=q)
    return J


__all__ = ["REFERENCES", "frame_jacobian"]
