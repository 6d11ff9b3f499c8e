"""The inertia of a floating base given apart from its tree (Khalil 2010 §7.2).

A fixed-base :class:`~rnea_ros.core.model.robot_model.RobotModel` has no inertia
for its base; for :func:`~rnea_ros.core.dynamics.floating_base.free_floating_rnea`
the base body's is a :class:`BodyInertia`, which :func:`urdf_base_inertia` reads
from the URDF's root link (and the links welded to it). A model loaded with
``root_joint="free-flyer"`` carries its base instead (its root body).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.errors import ModelError, URDFError
from rnea_ros.core.model.robot_model import check_inertia
from rnea_ros.core.model.urdf import _link, parse_urdf

Array = NDArray[np.float64]


@dataclass(frozen=True)
class BodyInertia:
    """A rigid body's inertia: ``mass`` [kg], ``com`` (3,) [m] and ``inertia`` (3, 3)
    about the COM [kg m^2], both in the body's frame. Checked physical
    (:func:`~rnea_ros.core.model.robot_model.check_inertia`, ``inertia_check`` mode)."""

    mass: float
    com: Array = field(default_factory=lambda: np.zeros(3))
    inertia: Array = field(default_factory=lambda: np.zeros((3, 3)))
    inertia_check: str = "strict"
    packed: Array = field(init=False, repr=False)

    def __post_init__(self) -> None:
        com = np.array(self.com, dtype=np.float64, copy=True).reshape(-1)
        inertia = np.array(self.inertia, dtype=np.float64, copy=True)
        if com.shape != (3,) or inertia.shape != (3, 3):
            raise ModelError(f"body inertia: com must be (3,) and inertia (3, 3), got "
                             f"{com.shape} and {inertia.shape}")
        check_inertia("base body", float(self.mass), com, inertia, self.inertia_check)
        com.setflags(write=False)
        inertia.setflags(write=False)
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "com", com)
        object.__setattr__(self, "inertia", inertia)
        # For the kernel: [m, h = m c, I_o (xx yy zz xy xz yz)] (10,), about the origin.
        Io = spatial.inertia_about_origin(self.mass, com, inertia)
        packed = np.array([self.mass, *(self.mass * com), Io[0, 0], Io[1, 1], Io[2, 2],
                           Io[0, 1], Io[0, 2], Io[1, 2]])
        packed.setflags(write=False)
        object.__setattr__(self, "packed", packed)


def urdf_base_inertia(source: str | Path, *, inertia_check: str = "strict") -> BodyInertia:
    """The inertia of a URDF's root link and every link welded to it by fixed joints,
    in the root link's frame: the free-floating base that :func:`~rnea_ros.core.load_urdf`
    drops into the fixed base (``source``: a file path or the XML text).

    Arguments as in Conventions: ``inertia_check`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    source : str or Path
        A URDF file path or its XML text.

    Returns
    -------
    BodyInertia
        Root link inertia (with its fixed children), root frame.
    """
    if isinstance(source, Path) or not str(source).lstrip().startswith("<"):
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise URDFError(f"cannot read URDF file '{source}': {exc.strerror}") from None
        origin = str(source)
    else:
        text, origin = str(source), "robot_description"
    model = parse_urdf(text, origin=origin, inertia_check=inertia_check)
    total: tuple[float, Array, Array] = (0.0, np.zeros(3), np.zeros((3, 3)))
    for elem in ET.fromstring(text).findall("link"):
        link = _link(elem)
        frame = model.frames[link.name]
        if frame.body < 0:
            part = spatial.express_inertia(link.mass, link.com, link.inertia,
                                           frame.rotation, frame.translation)
            total = spatial.add_inertias(total, part)
    return BodyInertia(total[0], total[1], total[2], inertia_check=inertia_check)


__all__ = ["BodyInertia", "urdf_base_inertia"]
