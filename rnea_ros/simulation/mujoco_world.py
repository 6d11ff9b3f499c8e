"""The MuJoCo backend's world file (:mod:`rnea_ros.simulation.mujoco_backend`): where
it is, what it may add to the scene, and whether it intersects the robot.

A world is an MJCF file (or a name in ``config/worlds/``) attached to the scene under
:data:`WORLD_PREFIX`: its bodies, geoms, assets, defaults. Its joints are its own
objects' (the table's free box), never the robot's (it is attached to the world body,
and its names are prefixed); it may not add actuators, nor constraints or contact pairs
naming the robot (:func:`attach_world`); its ``<option>`` is not used (the robot's time
step, gravity and integrator stay). A world
that intersects the robot at the initial state is reported by :func:`penetrations`
(MuJoCo's contacts would throw the robot out of it in the first steps).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rnea_ros.core.errors import options
from rnea_ros.parameter_errors import ParameterError

WORLD_PREFIX = "world/"
PENETRATION_TOLERANCE = 1e-4  # [m] deeper contacts at reset are reported (MuJoCo's margin: 0)


def world_path(world: str | Path) -> Path:
    """An MJCF world file: a path, or a name of ``config/worlds/`` (``table`` ->
    ``config/worlds/table.xml``); :class:`ParameterError` listing the shipped worlds."""
    from rnea_ros.samples import share_directory

    worlds = share_directory() / "config" / "worlds"
    text = str(world)
    path = Path(text)
    if path.is_file():
        return path
    named = worlds / (text if text.endswith(".xml") else f"{text}.xml")
    if named.is_file():
        return named
    shipped = sorted(p.stem for p in worlds.glob("*.xml")) if worlds.is_dir() else []
    raise ParameterError(f"world '{text}': no such file; shipped worlds: {options(shipped)}")


def attach_world(mj: Any, spec: Any, path: Path) -> None:
    """The world file ``path``'s bodies into ``spec`` (a ``mujoco.MjSpec``) under
    :data:`WORLD_PREFIX`; :class:`ParameterError` naming the file if MuJoCo cannot load
    it or it has actuators (the simulator commands the robot's motors alone, from
    ``effort_controller/commands``: a world's would stay at zero, and the control vector
    would no longer be the robot's: the first step failed, ``(7,) into (8,)``)."""
    try:
        child = mj.MjSpec.from_file(str(path))
    except Exception as exc:  # mujoco raises ValueError with the parser's message
        raise ParameterError(f"world '{path}': MuJoCo cannot load it: {exc}") from None
    actuators = [f"'{a.name}'" if a.name else f"(unnamed, on '{a.target}')"
                 for a in child.actuators]
    if actuators:
        raise ParameterError(
            f"world '{path}': <actuator> element(s) {', '.join(actuators)}: a world may "
            "not add actuators (the simulator drives only the robot's joints, from "
            "effort_controller/commands); remove its <actuator> section")
    foreign = foreign_references(child)
    if foreign:
        raise ParameterError(
            f"world '{path}': {'; '.join(foreign)}: a world's constraints and contact "
            "pairs may name only its own bodies, joints, geoms and sites (not the robot's)")
    try:
        spec.attach(child, prefix=WORLD_PREFIX, frame=spec.worldbody.add_frame())
    except Exception as exc:
        raise ParameterError(f"world '{path}': MuJoCo cannot load it: {exc}") from None


def foreign_references(child: Any) -> list[str]:
    """The world spec ``child``'s ``<equality>``, contact ``<pair>`` and ``<exclude>``
    elements that name something it does not define (the robot's links or joints: MuJoCo
    would drop or bind them silently), described as ``<weld> names 'link3'``."""
    own = {e.name for group in (child.bodies, child.joints, child.geoms, child.sites,
                                child.tendons) for e in group if e.name}
    found = []
    for kind, elements, fields in (
            ("equality", child.equalities, ("name1", "name2")),
            ("pair", child.pairs, ("geomname1", "geomname2")),
            ("exclude", child.excludes, ("bodyname1", "bodyname2"))):
        for element in elements:
            names = [str(getattr(element, f)) for f in fields]
            missing = [n for n in names if n and n not in own]
            if missing:
                tag = (str(element.type.name).removeprefix("mjEQ_").lower()
                       if kind == "equality" else kind)
                found.append(f"<{tag}> names {options(missing)}")
    return found


def geom_name(mj: Any, m: Any, g: int) -> str:
    """Geom ``g`` of model ``m`` (``mujoco.MjModel``): its name or (a URDF's collision
    geoms have none) its body's, its index there and its type: ``link3 geom 0
    (cylinder)``."""
    name = str(m.geom(g).name)
    if name:
        return name
    body = int(m.geom_bodyid[g])
    kind = mj.mjtGeom(int(m.geom_type[g])).name.removeprefix("mjGEOM_").lower()
    return f"{m.body(body).name} geom {g - int(m.body_geomadr[body])} ({kind})"


def penetrations(mj: Any, m: Any, d: Any, tolerance: float = PENETRATION_TOLERANCE
                 ) -> list[tuple[str, str, float]]:
    """``(robot geom, world geom, depth [m])`` of each contact between the robot and the
    world deeper than ``tolerance`` [m] in ``d`` (``mujoco.MjData``, after
    ``mj_forward``); world bodies are those named with :data:`WORLD_PREFIX`."""
    found = []
    for c in d.contact[:d.ncon]:
        if not c.dist < -tolerance:
            continue
        g1, g2 = int(c.geom1), int(c.geom2)
        world1, world2 = (str(m.body(m.geom_bodyid[g]).name).startswith(WORLD_PREFIX)
                          for g in (g1, g2))
        if world1 != world2:
            robot, world = (g2, g1) if world1 else (g1, g2)
            found.append((geom_name(mj, m, robot), geom_name(mj, m, world), float(-c.dist)))
    return found
