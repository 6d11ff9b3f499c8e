"""Generator of the parallel-robot samples ``urdf/gough_stewart.*`` and ``urdf/delta.*``.

The URDF spanning trees and loop files are derived here from a few design
numbers (radii, lengths, masses), so their geometry is documented and
reproducible; ``test_parallel_errors.py`` checks the shipped files are what
this module writes. Run ``python test/core/coupling/parallel_samples.py`` to
rewrite them after changing a number.

URDF has no universal or spherical joint: each is a chain of two or three
revolute joints whose axes meet at the joint centre, on massless intermediate
links. Loops are cut at a passive joint and described in ``<robot>.loops.yaml``
(the format of ``core/coupling/loop_file.py``).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import yaml

import rnea_ros.core as rc

ROOT = Path(__file__).resolve().parents[3]


def rpy(R: np.ndarray) -> tuple[float, float, float]:
    """URDF roll-pitch-yaw of rotation ``R`` (``Rz(yaw) Ry(pitch) Rx(roll)``)."""
    return (math.atan2(R[2, 1], R[2, 2]), math.atan2(-R[2, 0], math.hypot(R[2, 1], R[2, 2])),
            math.atan2(R[1, 0], R[0, 0]))


def num(x: float) -> str:
    text = f"{x:.15g}"
    return "0" if text in ("-0", "0") else text


def vec(v) -> str:
    return " ".join(num(float(x)) for x in v)


def link(name: str, mass: float = 0.0, com=(0, 0, 0), inertia=None, note: str = "") -> str:
    comment = f"  <!-- {note} -->\n" if note else ""
    if mass == 0.0:
        return f"{comment}  <link name=\"{name}\"/>\n"
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    return (f"{comment}  <link name=\"{name}\">\n    <inertial>\n"
            f"      <origin xyz=\"{vec(com)}\" rpy=\"0 0 0\"/>\n"
            f"      <mass value=\"{num(mass)}\"/>\n"
            f"      <inertia ixx=\"{num(ixx)}\" ixy=\"{num(ixy)}\" ixz=\"{num(ixz)}\" "
            f"iyy=\"{num(iyy)}\" iyz=\"{num(iyz)}\" izz=\"{num(izz)}\"/>\n"
            "    </inertial>\n  </link>\n")


def joint(name: str, kind: str, parent: str, child: str, xyz=(0, 0, 0), rpy_=(0, 0, 0),
          axis=None, limit=None) -> str:
    text = (f"  <joint name=\"{name}\" type=\"{kind}\">\n    <parent link=\"{parent}\"/>\n"
            f"    <child link=\"{child}\"/>\n"
            f"    <origin xyz=\"{vec(xyz)}\" rpy=\"{vec(rpy_)}\"/>\n")
    if axis is not None:
        text += f"    <axis xyz=\"{vec(axis)}\"/>\n"
    if limit is not None:
        effort, velocity, lower, upper = limit
        text += (f"    <limit effort=\"{num(effort)}\" velocity=\"{num(velocity)}\" "
                 f"lower=\"{num(lower)}\" upper=\"{num(upper)}\"/>\n")
    return text + "  </joint>\n"


def rod_inertia(mass: float, length: float, radius: float) -> tuple[float, ...]:
    """Solid cylinder along z about its COM: (ixx, iyy, izz, ixy, ixz, iyz)."""
    side = mass * (3.0 * radius**2 + length**2) / 12.0
    return side, side, 0.5 * mass * radius**2, 0.0, 0.0, 0.0


def loop_yaml(header: str, active: list[str], loops: list[dict],
              reference: dict[str, float] | None = None, note: str = "") -> str:
    text = header + "active: [" + ", ".join(active) + "]\nloops:\n"
    for lp in loops:
        text += (f"  - name: {lp['name']}\n    type: {lp['type']}\n"
                 f"    link1: {lp['link1']}\n"
                 f"    frame1: {{xyz: [{', '.join(num(x) for x in lp['xyz1'])}], rpy: [0, 0, 0]}}\n"
                 f"    link2: {lp['link2']}\n"
                 f"    frame2: {{xyz: [{', '.join(num(x) for x in lp['xyz2'])}], "
                 f"rpy: [{', '.join(num(x) for x in lp['rpy2'])}]}}\n")
    if reference:
        text += f"{note}reference:\n" + "".join(f"  {name}: {num(value)}\n"
                                                for name, value in reference.items())
    return text


# Decimals of a written reference [rad, m]: rounded, it stays ~1e-9 from closed, well
# inside loops.CLOSURE_TOLERANCE (1e-6) that loading checks before Newton polishes it.
REFERENCE_DECIMALS = 9


def closed_reference(robot_class, urdf: str, loops: str, pose: np.ndarray) -> dict[str, float]:
    """The tree joints' values (rounded, zeros left out) that close every loop with the
    platform at ``pose``: the parallel robot's own inverse geometry
    (``rc.platform_tree_state``) on the files written so far."""
    robot = robot_class.from_model(rc.parse_urdf(urdf), yaml.safe_load(loops))
    q = rc.platform_tree_state(robot, pose)[0]
    rounded = (round(float(v), REFERENCE_DECIMALS) for v in q)
    return {name: v for name, v in zip(robot.tree.joint_names, rounded, strict=True) if v != 0.0}


# ----------------------------------------------------------------- Gough-Stewart
GS = dict(base_radius=0.5, platform_radius=0.3, height=0.45, base_half_angle=15.0,
          platform_offset=30.0, cylinder=(2.0, 0.30, 0.03), rod=(1.0, 0.30, 0.015),
          stroke=0.12, platform_mass=4.0, platform_com=(0.005, -0.004, 0.02),
          platform_inertia=(0.09, 0.085, 0.17, 0.001, -0.0005, 0.0008))


def gough_stewart_geometry() -> tuple[np.ndarray, np.ndarray]:
    """Base anchors ``b`` (6, 3) in the base frame, platform anchors ``p`` (6, 3) in
    the platform frame: pairs 15 deg either side of 0, 120, 240 deg on the base,
    each leg turned 30 deg further on the platform (the classic 6-6 layout)."""
    b, p = np.zeros((6, 3)), np.zeros((6, 3))
    for k in range(6):
        side = -1.0 if k % 2 == 0 else 1.0
        beta = math.radians(120.0 * (k // 2) + side * GS["base_half_angle"])
        pi_ = beta + math.radians(side * GS["platform_offset"])
        b[k] = GS["base_radius"] * np.array([math.cos(beta), math.sin(beta), 0.0])
        p[k] = GS["platform_radius"] * np.array([math.cos(pi_), math.sin(pi_), 0.0])
    return b, p


def gough_stewart() -> tuple[str, str]:
    b, p = gough_stewart_geometry()
    home = np.array([0.0, 0.0, GS["height"]])
    lengths = np.linalg.norm(home + p - b, axis=1)
    L0 = float(lengths[0])
    assert np.allclose(lengths, L0, atol=1e-14)
    mc, lc, rc_ = GS["cylinder"]
    mr, lr, rr = GS["rod"]
    stroke = GS["stroke"]
    rb, hb, rp = num(GS["base_radius"]), num(GS["base_half_angle"]), num(GS["platform_radius"])
    turn, height = num(GS["platform_offset"]), num(GS["height"])
    text = f"""<?xml version="1.0"?>
<!--
  Gough-Stewart platform: 6 UPS legs (universal joint on the base, actuated
  prismatic joint, spherical joint on the platform). Written by
  test/core/coupling/parallel_samples.py (design numbers there).
  Base anchors on a circle of radius {rb} m (pairs +-{hb} deg about 0, 120,
  240 deg), platform anchors on a circle of radius {rp} m (each leg turned
  {turn} deg further), platform origin {height} m above the base at home, where
  every leg is {num(L0)} m long (prismatic joint at 0, stroke +-{num(stroke)} m).
  Legs: cylinder {num(mc)} kg (from the universal joint), piston rod {num(mr)} kg (to the
  spherical joint); platform {num(GS['platform_mass'])} kg, centre of mass off-centre.
  Spanning tree: leg1 carries the platform through its spherical joint (three
  revolute joints on massless links, axes meeting at the joint centre); the
  spherical joints of legs 2-6 are cut (gough_stewart.loops.yaml). Universal
  joints: two revolute joints on a massless cross, first axis horizontal,
  second perpendicular, the prismatic axis along the leg (z of the leg frames).
  The tree at q = 0 is the home pose (platform frame parallel to the base).
-->
<robot name="gough_stewart">
  <link name="world"/>
  <joint name="world_joint" type="fixed">
    <parent link="world"/>
    <child link="base_link"/>
    <origin xyz="0 0 0" rpy="0 0 0"/>
  </joint>
  <link name="base_link"/>
"""
    for k in range(6):
        leg = f"leg{k + 1}"
        s = (home + p[k] - b[k]) / L0
        x = np.cross([0.0, 0.0, 1.0], s)
        x /= np.linalg.norm(x)
        R = np.column_stack([x, np.cross(s, x), s])
        text += joint(f"{leg}_u1", "revolute", "base_link", f"{leg}_cross", b[k], rpy(R),
                      (1, 0, 0), (200, 3, -0.7, 0.7))
        text += link(f"{leg}_cross", note=f"{leg}: universal joint on the base")
        text += joint(f"{leg}_u2", "revolute", f"{leg}_cross", f"{leg}_cylinder",
                      axis=(0, 1, 0), limit=(200, 3, -0.7, 0.7))
        text += link(f"{leg}_cylinder", mc, (0, 0, 0.5 * lc), rod_inertia(mc, lc, rc_))
        text += joint(f"{leg}_slide", "prismatic", f"{leg}_cylinder", f"{leg}_rod", (0, 0, L0),
                      axis=(0, 0, 1), limit=(2000, 0.5, -stroke, stroke))
        text += link(f"{leg}_rod", mr, (0, 0, -0.4 * lr), rod_inertia(mr, lr, rr),
                     note=f"{leg}: piston rod, frame at the spherical joint's centre")
        if k == 0:
            text += joint(f"{leg}_s1", "revolute", f"{leg}_rod", f"{leg}_ball1", (0, 0, 0),
                          rpy(R.T), (1, 0, 0), (200, 3, -1.5, 1.5))
            text += link(f"{leg}_ball1", note=f"{leg}: spherical joint on the platform")
            text += joint(f"{leg}_s2", "revolute", f"{leg}_ball1", f"{leg}_ball2",
                          axis=(0, 1, 0), limit=(200, 3, -1.5, 1.5))
            text += link(f"{leg}_ball2")
            text += joint(f"{leg}_s3", "revolute", f"{leg}_ball2", f"{leg}_ball3",
                          axis=(0, 0, 1), limit=(200, 3, -1.5, 1.5))
            text += link(f"{leg}_ball3")
            text += joint(f"{leg}_mount", "fixed", f"{leg}_ball3", "platform", -p[k])
    text += link("platform", GS["platform_mass"], GS["platform_com"], GS["platform_inertia"],
                 note="platform frame: centre of the anchor circle")
    text += "</robot>\n"
    header = ("# Closed loops of gough_stewart.urdf (format: "
              "rnea_ros/core/coupling/loop_file.py).\n"
              "# Written by test/core/coupling/parallel_samples.py. The spherical joints of\n"
              "# legs 2-6 on the platform are cut; frame1 is the joint centre on the piston\n"
              "# rod, frame2 the same point on the platform.\n")
    loops = [dict(name=f"leg{k + 1}_sphere", type="spherical", link1=f"leg{k + 1}_rod",
                  xyz1=(0, 0, 0), link2="platform", xyz2=p[k], rpy2=(0, 0, 0))
             for k in range(1, 6)]
    return text, loop_yaml(header, [f"leg{k + 1}_slide" for k in range(6)], loops)


# ------------------------------------------------------------------------- Delta
DELTA = dict(base_radius=0.2, arm_length=0.25, forearm_length=0.55, platform_radius=0.05,
             arm=(0.35, 0.11), rod_mass=0.1, rod_radius=0.006, bracket=(0.02, 0.06),
             platform_mass=0.25, platform_com=(0.002, 0.001, -0.02),
             platform_inertia=(2.0e-4, 2.2e-4, 3.5e-4, 1.0e-5, 0.0, 0.0))


def delta() -> tuple[str, str]:
    d = DELTA
    La, Lb, Rp = d["arm_length"], d["forearm_length"], d["platform_radius"]
    ma, ca = d["arm"]
    mrod = 2.0 * d["rod_mass"]
    mb, wb = d["bracket"]
    rod_i = rod_inertia(mrod, Lb, d["rod_radius"])
    text = f"""<?xml version="1.0"?>
<!--
  Delta robot (Clavel): three actuated revolute arms on the base, each driving
  a parallelogram forearm to the translating platform. Written by
  test/core/coupling/parallel_samples.py (design numbers there).
  Arm joints on a circle of radius {num(d['base_radius'])} m at 0, 120, 240 deg, axes tangent to
  it (positive angle lowers the arm); arms {num(La)} m, forearms {num(Lb)} m, platform
  anchors on a circle of radius {num(Rp)} m. The base frame is at the centre of the
  arm-joint circle, z up; the platform hangs below it.
  Simplification: each parallelogram is modelled by its centre line, one rod with
  a universal joint at each end whose axes are parallel to the arm's joint axis
  (first axis at the elbow, second at the wrist) and to the parallelogram's normal.
  This keeps the platform's orientation fixed as the parallelogram does, and the
  rod carries both bars' mass ({num(mrod)} kg) and rotational inertia: the two bars
  of a parallelogram move as translated copies of its centre line, so their kinetic
  and potential energies are the centre line's with twice a bar's mass and inertia
  (the bars' spin about their own axes, through ball joints in the real robot, is
  left out). Each forearm ends in a bracket ({num(mb)} kg) bolted to the platform.
  Spanning tree: leg1's bracket is fixed to the platform; the brackets of legs 2
  and 3 are welded to it by the loops of delta.loops.yaml.
-->
<robot name="delta">
  <link name="world"/>
  <joint name="world_joint" type="fixed">
    <parent link="world"/>
    <child link="base_link"/>
    <origin xyz="0 0 0" rpy="0 0 0"/>
  </joint>
  <link name="base_link"/>
"""
    anchors = []
    for i in range(3):
        leg = f"leg{i + 1}"
        phi = math.radians(120.0 * i)
        radial = np.array([math.cos(phi), math.sin(phi), 0.0])
        anchors.append((Rp * radial, phi))
        text += joint(f"{leg}_arm", "revolute", "base_link", f"{leg}_arm",
                      d["base_radius"] * radial, (0, 0, phi), (0, 1, 0), (60, 10, -1.0, 1.4))
        text += link(f"{leg}_arm", ma, (ca, 0, 0),
                     (2.0e-5, ma * La**2 / 12.0, ma * La**2 / 12.0, 0.0, 0.0, 0.0),
                     note=f"{leg}: actuated arm along x")
        text += joint(f"{leg}_elbow1", "revolute", f"{leg}_arm", f"{leg}_elbow_cross", (La, 0, 0),
                      axis=(0, 1, 0), limit=(60, 10, -1.6, 1.6))
        text += link(f"{leg}_elbow_cross", note=f"{leg}: universal joint at the elbow")
        text += joint(f"{leg}_elbow2", "revolute", f"{leg}_elbow_cross", f"{leg}_rod",
                      axis=(1, 0, 0), limit=(60, 10, -0.8, 0.8))
        text += link(f"{leg}_rod", mrod, (0, 0, -0.5 * Lb), rod_i,
                     note=f"{leg}: parallelogram centre line, down -z")
        text += joint(f"{leg}_wrist1", "revolute", f"{leg}_rod", f"{leg}_wrist_cross", (0, 0, -Lb),
                      axis=(1, 0, 0), limit=(60, 10, -0.8, 0.8))
        text += link(f"{leg}_wrist_cross", note=f"{leg}: universal joint at the platform")
        text += joint(f"{leg}_wrist2", "revolute", f"{leg}_wrist_cross", f"{leg}_bracket",
                      axis=(0, 1, 0), limit=(60, 10, -2.4, 2.4))
        text += link(f"{leg}_bracket", mb, (0, 0, 0),
                     (mb * wb**2 / 12.0, 1.0e-7, mb * wb**2 / 12.0, 0.0, 0.0, 0.0))
        if i == 0:
            text += joint(f"{leg}_mount", "fixed", f"{leg}_bracket", "platform", (-Rp, 0, 0),
                          (0, 0, -phi))
    text += link("platform", d["platform_mass"], d["platform_com"], d["platform_inertia"],
                 note="platform frame: centre of the anchor circle, parallel to the base frame")
    text += "</robot>\n"
    header = ("# Closed loops of delta.urdf (format: rnea_ros/core/coupling/loop_file.py).\n"
              "# Written by test/core/coupling/parallel_samples.py. The brackets of legs 2\n"
              "# and 3 are welded to the platform: frame1 is the bracket frame (the wrist's\n"
              "# universal-joint centre), frame2 the same frame on the platform.\n")
    loops = [dict(name=f"leg{i + 1}_weld", type="weld", link1=f"leg{i + 1}_bracket",
                  xyz1=(0, 0, 0), link2="platform", xyz2=anchors[i][0], rpy2=(0, 0, anchors[i][1]))
             for i in range(1, 3)]
    active = [f"leg{i + 1}_arm" for i in range(3)]
    reach = d["base_radius"] + La - Rp
    home = np.array([0.0, 0.0, -math.sqrt(Lb**2 - reach**2)])
    reference = closed_reference(rc.DeltaRobot, text, loop_yaml(header, active, loops), home)
    note = ("# A closed configuration (the tree does not close at q = 0): the home pose, arms\n"
            f"# horizontal, platform at z = {num(round(float(home[2]), 6))} m. Other joints 0.\n")
    return text, loop_yaml(header, active, loops, reference, note)


SAMPLES = {"gough_stewart": gough_stewart, "delta": delta}


def write(folder: Path = ROOT / "urdf") -> None:
    for name, make in SAMPLES.items():
        urdf, loops = make()
        (folder / f"{name}.urdf").write_text(urdf)
        (folder / f"{name}.loops.yaml").write_text(loops)


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "urdf")
