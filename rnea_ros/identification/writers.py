"""Writing identified parameters back: the URDF's ``<inertial>`` elements and a drive file.

The URDF is edited as text: each moving body's own link (the child link of
its joint) gets a new ``<inertial>`` in place of the old one, and nothing
else of the file changes (comments, formatting, ``<gazebo>``,
``<ros2_control>``...). A link welded to a body by fixed joints keeps its
own ``<inertial>``: the identified body minus those links is what the body's
own link carries (:mod:`~rnea_ros.identification.consistency` keeps that part
physically consistent).

The drive file has the format of :mod:`rnea_ros.core.model.drives` (which
the controller reads: ``armature``, ``coulomb``, ``viscous`` per joint) and,
under ``identified:``, what that format has no key for: the friction offset
and the asymmetric Coulomb values.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping

import numpy as np
import yaml
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.identification import parameters
from rnea_ros.identification.errors import IdentificationError

Array = NDArray[np.float64]
Inertial = tuple[float, Array, Array]  # mass, com (3,), inertia about the com (3, 3)


def link_inertials(urdf: str) -> dict[str, Inertial]:
    """``{link: (mass, com, inertia about com)}`` in the link frame, links with ``<inertial>``."""
    out: dict[str, Inertial] = {}
    for link in ET.fromstring(urdf).findall("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        origin = inertial.find("origin")
        xyz = [float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None
                                  else "0 0 0").split()]
        rpy = [float(v) for v in (origin.get("rpy", "0 0 0") if origin is not None
                                  else "0 0 0").split()]
        mass_elem, i = inertial.find("mass"), inertial.find("inertia")
        mass = float(mass_elem.get("value", "0")) if mass_elem is not None else 0.0
        c = {k: float(i.get(k, "0")) if i is not None else 0.0
             for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        inertia = np.array([[c["ixx"], c["ixy"], c["ixz"]], [c["ixy"], c["iyy"], c["iyz"]],
                            [c["ixz"], c["iyz"], c["izz"]]])
        R = spatial.rpy_matrix(*rpy)
        out[str(link.get("name"))] = (mass, np.array(xyz), R @ inertia @ R.T)
    return out


def fixed_links(model: RobotModel) -> dict[int, list[str]]:
    """Links welded to each body by fixed joints (not the body's own link)."""
    out: dict[int, list[str]] = {}
    for name, frame in model.frames.items():
        if frame.body >= 0 and name != model.body_names[frame.body]:
            out.setdefault(frame.body, []).append(name)
    return out


def fixed_parts(model: RobotModel, urdf: str) -> dict[int, tuple[float, Array, Array]]:
    """Per body, ``(m, h, I_o)`` of its welded links (body frame, about the body origin)."""
    inertials = link_inertials(urdf)
    out = {}
    for body, links in fixed_links(model).items():
        m, h, Io = 0.0, np.zeros(3), np.zeros((3, 3))
        for name in links:
            if name not in inertials:
                continue
            frame = model.frames[name]
            mass, com, inertia = spatial.express_inertia(*inertials[name], frame.rotation,
                                                         frame.translation)
            m += mass
            h = h + mass * com
            Io = Io + inertia + mass * (float(com @ com) * np.eye(3) - np.outer(com, com))
        if m > 0.0 or np.any(Io):
            out[body] = (m, h, Io)
    return out


def own_link_inertials(model: RobotModel, theta: Array,
                       fixed: Mapping[int, tuple[float, Array, Array]]) -> dict[str, Inertial]:
    """What each body's own link carries: identified body minus welded links."""
    out = {}
    for j, link in enumerate(model.body_names):
        m, h, Io = parameters.body_parameters(theta, j)
        if j in fixed:
            fm, fh, fI = fixed[j]
            m, h, Io = m - fm, h - fh, Io - fI
        if not m > 0.0:
            raise IdentificationError(f"link '{link}': identified mass {m:g} kg is not positive")
        c, Ic = parameters.to_com(m, h, Io)
        out[link] = (m, c, 0.5 * (Ic + Ic.T))
    return out


def _number(x: float) -> str:
    return f"{x:.10g}"


def inertial_xml(value: Inertial, indent: str, step: str = "  ") -> str:
    """An ``<inertial>`` element (origin at the COM, axes of the link frame)."""
    m, c, I = value
    return (f"<inertial>\n{indent}{step}<origin xyz=\"{' '.join(_number(v) for v in c)}\" "
            f"rpy=\"0 0 0\"/>\n{indent}{step}<mass value=\"{_number(m)}\"/>\n"
            f"{indent}{step}<inertia ixx=\"{_number(I[0, 0])}\" ixy=\"{_number(I[0, 1])}\" "
            f"ixz=\"{_number(I[0, 2])}\" iyy=\"{_number(I[1, 1])}\" iyz=\"{_number(I[1, 2])}\" "
            f"izz=\"{_number(I[2, 2])}\"/>\n{indent}</inertial>")


def replace_inertials(urdf: str, inertials: Mapping[str, Inertial]) -> str:
    """``urdf`` with the ``<inertial>`` of each named link replaced (or added)."""
    text = urdf
    for link, value in inertials.items():
        name = re.escape(link)
        opening = re.search(rf"<link\b[^>]*\bname\s*=\s*([\"']){name}\1[^>]*?(/?)>", text)
        if opening is None:
            raise IdentificationError(f"link '{link}' is not in the URDF text")
        line_start = text.rfind("\n", 0, opening.start()) + 1
        outer = re.match(r"[ \t]*", text[line_start:]).group(0)  # type: ignore[union-attr]
        inner = outer + "  "
        if opening.group(2) == "/":  # <link name="x"/>: open it
            body = f"<link{opening.group(0)[5:-2].rstrip()}>\n{inner}" \
                   f"{inertial_xml(value, inner)}\n{outer}</link>"
            text = text[:opening.start()] + body + text[opening.end():]
            continue
        close = text.find("</link>", opening.end())
        block = text[opening.end():close]
        found = re.search(r"<inertial\b.*?</inertial>|<inertial\b[^>]*/>", block, re.S)
        if found is not None:
            start = opening.end() + found.start()
            line = text.rfind("\n", 0, start) + 1
            indent = text[line:start] if not text[line:start].strip() else inner
            text = text[:start] + inertial_xml(value, indent) + text[opening.end() + found.end():]
        else:
            text = (text[:opening.end()] + f"\n{inner}{inertial_xml(value, inner)}"
                    + text[opening.end():])
    return text


def drives_yaml(model: RobotModel, theta: Array, header: str = "") -> str:
    """The drive file of identified ``theta`` (armature, Coulomb, viscous; offsets aside)."""
    joints: dict[str, dict[str, float]] = {}
    extra: dict[str, dict[str, float]] = {}
    for i, name in enumerate(model.joint_names):
        get = {k: float(theta[parameters.drive_index(model, i, k)])
               for k in parameters.DRIVE_NAMES}
        joints[name] = {"armature": max(get["Ia"], 0.0), "coulomb": max(get["Fc"], 0.0),
                        "viscous": max(get["Fv"], 0.0)}
        extra[name] = {"offset": get["off"], "coulomb_positive": get["Fc"] + get["off"],
                       "coulomb_negative": get["Fc"] - get["off"]}
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    body = yaml.safe_dump({"joints": joints}, sort_keys=False)
    note = yaml.safe_dump({"identified": {
        "comment": "not read by the controller: tau_friction = Fv qd + Fc sgn(qd) + offset; "
                   "asymmetric Coulomb Fc+ = Fc + offset (qd > 0), Fc- = Fc - offset (qd < 0)",
        "joints": extra}}, sort_keys=False)
    return "\n".join([*lines, body, note]) if lines else body + "\n" + note
