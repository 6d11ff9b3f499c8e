"""Our own URDF reader (Pinocchio is the oracle, so it must not also be the parser).

Reads links (``<inertial>``) and joints (``revolute``, ``continuous``,
``prismatic``, ``fixed``, ``floating`` (a free-flyer), ``planar``; ``<origin>``,
``<axis>``, ``<limit>``, ``<dynamics damping friction>``, ``<mimic>``) and
ignores everything else (visuals, collisions, ``<gazebo>``, ``<ros2_control>``,
``<transmission>``). A ``planar`` joint moves in its frame's xy plane (as in
Pinocchio, which ignores its axis; an axis other than ``0 0 1`` is an error).
``<mimic>`` joints are followers of their leader (``mimic=True``, Pinocchio's
``buildModelFromUrdf(path, mimic=True)``) or independent joints
(``mimic=False``, Pinocchio's default).

URDF has no rotor-inertia field: pass a drive side file (see
:mod:`rnea_ros.core.model.drives`) for armature, gear ratio and friction overrides.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.errors import URDFError
from rnea_ros.core.model.drives import apply_drive_parameters
from rnea_ros.core.model.robot_model import STANDARD_GRAVITY, RobotModel
from rnea_ros.core.model.tree import INF, JointSpec, LinkSpec, build_model

Array = NDArray[np.float64]


def load_urdf(
    source: str | Path,
    *,
    drives: str | Path | Mapping[str, Any] | None = None,
    gravity: Sequence[float] = STANDARD_GRAVITY,
    inertia_check: str = "strict",
    root_joint: str | None = None,
    mimic: bool = True,
) -> RobotModel:
    """Model from a URDF file path or a ``robot_description`` XML string.

    ``drives`` is an optional side file (path or already-loaded mapping) with
    per-joint armature, gear ratio and friction, see :mod:`rnea_ros.core.model.drives`.
    ``inertia_check="warn"`` accepts non-physical (not positive definite,
    triangle-inequality violating) link inertias with an ``InertiaWarning``.
    ``root_joint="free-flyer"`` (or ``"planar"``) moves the root link on a
    joint named ``root_joint``, like ``pin.buildModelFromUrdf(path,
    pin.JointModelFreeFlyer())``; a URDF whose root already floats (a
    ``floating`` joint from it) is then a :class:`URDFError`. ``mimic=False``
    keeps ``<mimic>`` joints as independent joints.

    Arguments as in Conventions: ``gravity``, ``root_joint``, ``mimic``
    ([loading models](core.md#loading-models)); ``inertia_check``
    ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    source : str or Path
        A URDF file path or a ``robot_description`` XML string.
    drives : str, Path or Mapping, optional
        Drive side file (path or loaded mapping): per-joint armature, gear ratio, friction
        (:func:`load_drive_file`).

    Returns
    -------
    RobotModel
        The model.

    Examples
    --------
    >>> import rnea_ros.core as rc
    >>> model = rc.load_urdf("urdf/arm7.urdf")
    >>> model.nq, model.nv
    (7, 7)
    """
    text: str
    origin: str
    if isinstance(source, Path) or not str(source).lstrip().startswith("<"):
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise URDFError(f"cannot read URDF file '{path}': {exc.strerror}") from None
        origin = str(path)
    else:
        text, origin = str(source), "robot_description"
    model = parse_urdf(text, origin=origin, gravity=gravity, inertia_check=inertia_check,
                       root_joint=root_joint, mimic=mimic)
    if drives is not None:
        model = apply_drive_parameters(model, drives)
    return model


def _floats(elem: ET.Element | None, attr: str, count: int, default: Sequence[float],
            where: str) -> Array:
    if elem is None or elem.get(attr) is None:
        return np.array(default, dtype=np.float64)
    raw = elem.get(attr, "")
    try:
        values = [float(x) for x in raw.split()]
    except ValueError:
        raise URDFError(f"{where}: {elem.tag} {attr}='{raw}' is not a list of numbers") from None
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise URDFError(f"{where}: {elem.tag} {attr}='{raw}' must be {count} finite numbers")
    return np.array(values, dtype=np.float64)


def _float(elem: ET.Element | None, attr: str, default: float, where: str) -> float:
    return float(_floats(elem, attr, 1, [default], where)[0])


def _origin(elem: ET.Element, where: str) -> tuple[Array, Array]:
    o = elem.find("origin")
    xyz = _floats(o, "xyz", 3, (0.0, 0.0, 0.0), where)
    rpy = _floats(o, "rpy", 3, (0.0, 0.0, 0.0), where)
    return spatial.rpy_matrix(*rpy), xyz


def _link(elem: ET.Element) -> LinkSpec:
    name = elem.get("name")
    if not name:
        raise URDFError("a <link> has no name")
    where = f"link '{name}'"
    inertial = elem.find("inertial")
    if inertial is None:
        return LinkSpec(name)
    R, com = _origin(inertial, where)
    mass_elem = inertial.find("mass")
    if mass_elem is None:
        raise URDFError(f"{where}: <inertial> has no <mass>")
    mass = _float(mass_elem, "value", math.nan, where)
    if math.isnan(mass):
        raise URDFError(f"{where}: <mass> has no value")
    i = inertial.find("inertia")
    if i is None:
        raise URDFError(f"{where}: <inertial> has no <inertia>")
    c = {k: _float(i, k, 0.0, where) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    inertia = np.array([[c["ixx"], c["ixy"], c["ixz"]],
                        [c["ixy"], c["iyy"], c["iyz"]],
                        [c["ixz"], c["iyz"], c["izz"]]])
    return LinkSpec(name, mass, com, R @ inertia @ R.T)


def _joint(elem: ET.Element) -> JointSpec:
    name = elem.get("name")
    if not name:
        raise URDFError("a <joint> has no name")
    where = f"joint '{name}'"
    jtype = elem.get("type", "")
    links = {}
    for role in ("parent", "child"):
        e = elem.find(role)
        if e is None or not e.get("link"):
            raise URDFError(f"{where} has no <{role} link=...>")
        links[role] = e.get("link", "")
    limit = elem.find("limit")
    dynamics = elem.find("dynamics")
    axis = _floats(elem.find("axis"), "xyz", 3, (1.0, 0.0, 0.0), where)
    if jtype == "floating":
        jtype = "free-flyer"
    elif jtype == "planar":
        if elem.find("axis") is not None and not np.array_equal(axis, (0.0, 0.0, 1.0)):
            raise URDFError(f"{where}: planar joint with axis {axis.tolist()}; only motion in "
                            "the joint frame's xy plane (axis 0 0 1) is supported")
    mimic = None
    m = elem.find("mimic")
    if m is not None:
        if not m.get("joint"):
            raise URDFError(f"{where}: <mimic> has no joint attribute")
        mimic = (m.get("joint", ""), _float(m, "multiplier", 1.0, where),
                 _float(m, "offset", 0.0, where))
    return JointSpec(
        name=name,
        type=jtype,
        parent=links["parent"],
        child=links["child"],
        origin=_origin(elem, where),
        axis=axis,
        effort_limit=_float(limit, "effort", INF, where) or INF,
        velocity_limit=_float(limit, "velocity", INF, where) or INF,
        lower_limit=_float(limit, "lower", -INF, where),
        upper_limit=_float(limit, "upper", INF, where),
        coulomb=_float(dynamics, "friction", 0.0, where),
        viscous=_float(dynamics, "damping", 0.0, where),
        mimic=mimic,
    )


def parse_urdf(text: str, *, origin: str = "robot_description",
               gravity: Sequence[float] = STANDARD_GRAVITY,
               inertia_check: str = "strict", root_joint: str | None = None,
               mimic: bool = True) -> RobotModel:
    """Model from URDF XML text; ``origin`` names the source in error messages
    (``root_joint``, ``mimic``: see :func:`load_urdf`).

    Arguments as in Conventions: ``gravity``, ``root_joint``, ``mimic``
    ([loading models](core.md#loading-models)); ``inertia_check``
    ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    text : str
        URDF XML text.
    origin : str, default 'robot_description'
        Names the source in error messages.

    Returns
    -------
    RobotModel
        The model.
    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"{origin}: not well-formed XML ({exc})") from None
    if root.tag != "robot":
        raise URDFError(f"{origin}: root element is <{root.tag}>, expected <robot>")
    if any(str(e.tag).startswith("{http://www.ros.org/wiki/xacro}") for e in root.iter()):
        raise URDFError(f"{origin}: contains xacro macros; expand it first (xacro file.urdf.xacro)")
    links = [_link(e) for e in root.findall("link")]
    joints = [_joint(e) for e in root.findall("joint")]
    for joint in joints:
        if joint.type in ("revolute", "prismatic") and joint.lower_limit > joint.upper_limit:
            raise URDFError(
                f"joint '{joint.name}': lower limit {joint.lower_limit:g} > "
                f"upper limit {joint.upper_limit:g}"
            )
        if joint.coulomb < 0.0 or joint.viscous < 0.0:
            raise URDFError(f"joint '{joint.name}': <dynamics> damping and friction must be >= 0")
    name = root.get("name") or "robot"
    return build_model(name, links, joints, gravity=gravity, error=URDFError,
                       inertia_check=inertia_check, root_joint=root_joint, mimic=mimic)
