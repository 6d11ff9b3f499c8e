"""Closed-loop test helpers: random spatial mechanisms and random consistent states
(the Pinocchio oracle is :mod:`rnea_ros.loop_oracle`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from trees import random_inertia, random_rotation

import rnea_ros.core as rc
from rnea_ros.core.coupling.loops import rpy_from_matrix
from rnea_ros.loop_oracle import LoopOracle

__all__ = ["LoopOracle", "Mechanism", "random_closed_states", "random_mechanism"]


# ------------------------------------------------------------------ mechanisms
@dataclass
class Mechanism:
    """A closed-loop mechanism: its URDF text (for Pinocchio) and model."""

    urdf: str
    model: rc.ClosedLoopModel


def _urdf(name: str, joints: list[tuple[str, str, str, np.ndarray, np.ndarray, np.ndarray]],
          rng: np.random.Generator, kinds: list[str]) -> str:
    """URDF text: ``joints`` = (name, parent, child, R, p, axis)."""
    links = ['<link name="base"/>']
    body = []
    for (jname, parent, child, R, p, axis), kind in zip(joints, kinds, strict=True):
        inertia = random_inertia(rng)
        com = rng.normal(0.0, 0.1, 3)
        mass = float(rng.uniform(0.3, 2.0))
        moments = " ".join(f'{k}="{float(inertia[r, c])!r}"' for k, (r, c) in (
            ("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyy", (1, 1)), ("iyz", (1, 2)),
            ("izz", (2, 2))))
        links.append(
            f'<link name="{child}"><inertial><origin xyz="{_v(com)}" rpy="0 0 0"/>'
            f'<mass value="{mass!r}"/><inertia {moments}/></inertial></link>')
        body.append(
            f'<joint name="{jname}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{_v(p)}" rpy="{_v(np.array(rpy_from_matrix(R)))}"/>'
            f'<axis xyz="{_v(axis)}"/><limit lower="-3" upper="3" effort="100" velocity="10"/>'
            f'<dynamics damping="{float(rng.uniform(0, 0.3))!r}" '
            f'friction="{float(rng.uniform(0, 0.3))!r}"/>'
            '</joint>')
    return f'<robot name="{name}">' + "".join(links + body) + "</robot>"


def _v(x: np.ndarray) -> str:
    return " ".join(repr(float(v)) for v in x)


def random_mechanism(seed: int, cut: str) -> Mechanism:
    """A random spatial single-loop mechanism of mobility 1, closed at q = 0.

    Two revolute branches leave the base (``weld``: 4 + 3 joints; ``revolute``,
    ``prismatic``: 3 + 3; ``spherical``: 1 + 3, a crank and a rocker joined by a
    universal joint and the spherical cut). Frame 2 is placed where frame 1 is at q = 0.
    Active: the first joint of branch A.
    """
    rng = np.random.default_rng(seed)
    split = {"weld": (4, 3), "revolute": (3, 3), "prismatic": (3, 3), "spherical": (1, 3)}[cut]
    joints = []
    kinds = []
    tips = []
    for branch, count in zip("ab", split, strict=True):
        parent = "base"
        for k in range(count):
            child = f"{branch}{k + 1}"
            axis = rng.normal(size=3)
            if cut == "spherical" and branch == "b" and k == 2:
                axis = np.cross(joints[-1][5], rng.normal(size=3))  # universal: 2nd axis normal
            axis /= np.linalg.norm(axis)
            joints.append((f"j{child}", parent, child, random_rotation(rng),
                           rng.normal(0.0, 0.35, 3), axis))
            kinds.append("revolute")
            parent = child
        tips.append(parent)
    if cut == "spherical":  # the universal joint's two axes meet at the U point
        joints[-1] = (*joints[-1][:4], np.zeros(3), joints[-1][5])
    text = _urdf(f"{cut}_loop_{seed}", joints, rng, kinds)
    tree = rc.load_urdf(text)
    q0 = np.zeros(tree.nv)
    Ra, pa = rc.link_pose(tree, q0, tips[0])
    Rb, pb = rc.link_pose(tree, q0, tips[1])
    if cut == "spherical":  # the cut at the end of a 0.3 m arm of the rocker (branch A)
        pa = pa + Ra @ np.array([0.3, 0.0, 0.0])
        R2, p2 = Rb.T @ Ra, Rb.T @ (pa - pb)
        loop = rc.Loop("cut", cut, tips[0], tips[1], xyz1=(0.3, 0.0, 0.0),
                       xyz2=tuple(p2), rpy2=rpy_from_matrix(R2))
    else:
        R2, p2 = Rb.T @ Ra, Rb.T @ (pa - pb)
        loop = rc.Loop("cut", cut, tips[0], tips[1], xyz2=tuple(p2), rpy2=rpy_from_matrix(R2))
    return Mechanism(text, rc.build_loops(tree, (loop,), (joints[0][0],)))


# ---------------------------------------------------------------- states
def random_closed_states(model: rc.ClosedLoopModel, count: int, seed: int, spread: float = 1.0,
                         conditioning: float = 0.0
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q (S, n), qd_a (S, N), qdd_a (S, N))``: actives uniform within the joint limits
    (``spread`` of the range around the reference, +-pi where unlimited), passives
    solved from the reference; samples that do not close, or whose passive constraint
    Jacobian has ``sigma_min / sigma_max < conditioning`` (near-singular), are skipped."""
    rng = np.random.default_rng(seed)
    tree, a = model.tree, model.active_index
    ref = model.q_reference[a]
    lo = np.where(np.isfinite(tree.lower_limit[a]), tree.lower_limit[a], ref - np.pi)
    hi = np.where(np.isfinite(tree.upper_limit[a]), tree.upper_limit[a], ref + np.pi)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo) * spread
    qs: list[np.ndarray] = []
    tries = 0
    while len(qs) < count and tries < 5 * count:
        tries += 1
        qa = mid + half * rng.uniform(-1.0, 1.0, a.size)
        try:
            q = rc.solve_loops(model, qa)
        except rc.LoopClosureError:
            continue
        if conditioning > 0.0:
            sv = np.linalg.svd(rc.loop_constraint_jacobian(model, q)[:, model.passive_index],
                               compute_uv=False)
            if sv[-1] < conditioning * sv[0]:
                continue
        qs.append(q)
    if len(qs) < count:
        raise RuntimeError(f"only {len(qs)} of {count} random states close '{model.name}'")
    Q = np.array(qs)
    return Q, rng.normal(0.0, 1.5, (count, a.size)), rng.normal(0.0, 4.0, (count, a.size))


# ------------------------------------------- closed-loop controllers on the simulator
def names(loops: rc.ClosedLoopModel, passive: bool = False) -> list[str]:
    """The joint names a closed-loop robot publishes: its active joints, then (with
    ``passive``) its passive ones."""
    return list(loops.active_names) + (list(loops.passive_names) if passive else [])


def run(ctl: Any, sim: Any, seconds: float, publish_passive: bool = True,
        on_step: Callable[[Any], None] | None = None) -> list[np.ndarray]:
    """Closed loop at the simulator's rate: its joint states in, the commands out
    (``ctl`` a ClosedLoopController or ParallelController, ``sim`` a LoopSimulator)."""
    loops, out = ctl.loops, []
    index = np.concatenate([loops.active_index, loops.passive_index if publish_passive
                            else np.zeros(0, dtype=np.int64)])
    for _ in range(round(seconds / sim.dt)):
        result = ctl.joint_state(names(loops, publish_passive), sim.q[index], sim.qd[index],
                                 stamp=sim.t, now=sim.t)
        assert result.command is not None, result
        tau = np.zeros(loops.n)
        tau[loops.active_index[ctl.config.command_index]] = result.command
        sim.step(tau)
        if on_step is not None:
            on_step(sim)
        out.append(result.command)
    return out
