"""Random states for models with multi-DoF joints (Pinocchio's layout), generated here
rather than by the model (configuration helpers are another module's job)."""

from __future__ import annotations

import numpy as np

from rnea_ros.core.model.robot_model import RobotModel


def unit_quaternions(rng: np.random.Generator, count: int) -> np.ndarray:
    """``(count, 4)`` uniformly random unit quaternions ``[x, y, z, w]``."""
    x = rng.normal(size=(count, 4))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def random_configurations(model: RobotModel, count: int, seed: int = 0) -> np.ndarray:
    """``(count, nq)``: 1-DoF joints within finite limits (else +-pi), free-flyer
    positions ~ N(0, 1) m, random unit quaternions, planar angles in [-pi, pi]."""
    rng = np.random.default_rng(seed)
    Q = np.empty((count, model.nq))
    for j, jtype in enumerate(model.joint_types):
        i = int(model.idx_q[j])
        if jtype == "free-flyer":
            Q[:, i:i + 3] = rng.normal(size=(count, 3))
            Q[:, i + 3:i + 7] = unit_quaternions(rng, count)
        elif jtype == "spherical":
            Q[:, i:i + 4] = unit_quaternions(rng, count)
        elif jtype == "planar":
            th = rng.uniform(-np.pi, np.pi, count)
            Q[:, i:i + 2] = rng.normal(size=(count, 2))
            Q[:, i + 2], Q[:, i + 3] = np.cos(th), np.sin(th)
        else:
            lo, hi = model.lower_limit[i], model.upper_limit[i]
            lo, hi = (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else (-np.pi, np.pi)
            Q[:, i] = rng.uniform(lo, hi, count)
    return Q


def random_states(model: RobotModel, count: int, seed: int = 0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q (count, nq), v (count, nv), a (count, nv))``: random configurations, base
    twists and joint rates ~ N(0, 2), accelerations ~ N(0, 5)."""
    rng = np.random.default_rng(seed + 1)
    return (random_configurations(model, count, seed), rng.normal(0.0, 2.0, (count, model.nv)),
            rng.normal(0.0, 5.0, (count, model.nv)))


def to_pinocchio(model: RobotModel):
    """The same tree built directly in Pinocchio (joint by joint, our placements and
    inertias; no URDF), in our body order: ``(pin.Model, joint ids per body)``.
    Revolute, prismatic, free-flyer, planar and spherical joints (no continuous, no
    mimic); armature and gravity copied."""
    import pinocchio as pin

    pm = pin.Model()
    makers = {
        "revolute": lambda u: pin.JointModelRevoluteUnaligned(*u),
        "prismatic": lambda u: pin.JointModelPrismaticUnaligned(*u),
        "free-flyer": lambda u: pin.JointModelFreeFlyer(),
        "planar": lambda u: pin.JointModelPlanar(),
        "spherical": lambda u: pin.JointModelSpherical(),
    }
    assert not model.mimic_joints
    jid = []
    for b in range(model.nbodies):
        parent = 0 if model.parent[b] < 0 else jid[model.parent[b]]
        placement = pin.SE3(model.placement_rotation[b], model.placement_translation[b])
        j = pm.addJoint(parent, makers[model.joint_types[b]](model.axis[b]), placement,
                        model.joint_names[b])
        pm.appendBodyToJoint(j, pin.Inertia(float(model.mass[b]), model.com[b],
                                            model.inertia[b]), pin.SE3.Identity())
        jid.append(j)
    pm.armature = np.array(model.armature)
    pm.gravity.linear = np.array(model.gravity)
    return pm, jid


def random_multidof_tree(seed: int, bodies: int | None = None, root: str | None = None,
                         floating: bool = False) -> RobotModel:
    """A random tree of revolute, prismatic, spherical and planar joints (``root``:
    the first joint's type, e.g. ``"free-flyer"``), random placements, inertias and
    armature, through the common builder. ``floating``: every later body descends from
    the first (one root: a free-floating robot on a free-flyer ``root``)."""
    from trees import random_inertia, random_rotation

    from rnea_ros.core.model.tree import JointSpec, LinkSpec, build_model

    rng = np.random.default_rng(seed)
    count = int(bodies if bodies is not None else rng.integers(3, 9))
    links = [LinkSpec("base")]
    joints = []
    for k in range(1, count + 1):
        parent = links[int(rng.integers(1 if floating and k > 1 else 0, k))].name
        kind = str(rng.choice(["revolute", "prismatic", "spherical", "planar"],
                              p=[0.35, 0.2, 0.3, 0.15]))
        if k == 1 and root is not None:
            kind, parent = root, "base"
        axis = rng.normal(size=3) if rng.random() < 0.5 else np.eye(3)[rng.integers(0, 3)]
        links.append(LinkSpec(f"l{k}", float(rng.uniform(0.2, 3.0)), rng.normal(0, 0.2, 3),
                              random_inertia(rng)))
        joints.append(JointSpec(f"j{k}", kind, parent, f"l{k}",
                                (random_rotation(rng), rng.normal(0, 0.4, 3)),
                                axis * rng.choice([-1.0, 1.0]),
                                armature=float(rng.uniform(0, 0.3))))
    return build_model(f"multidof{seed}", links, joints, gravity=rng.normal(0, 5, 3))


def free_flying_tree(seed: int, bodies: int = 7) -> RobotModel:
    """A free-flyer root at a random placement, then revolute and prismatic joints on
    random axes (some along +-x/y/z), armature and friction, a random gravity."""
    from trees import random_inertia, random_rotation

    from rnea_ros.core.model.tree import JointSpec, LinkSpec, build_model

    rng = np.random.default_rng(seed)
    links = [LinkSpec("base")]
    joints = []
    for k in range(1, bodies + 1):
        parent = "base" if k == 1 else links[int(rng.integers(1, k))].name
        kind = "free-flyer" if k == 1 else str(rng.choice(["revolute", "prismatic"]))
        axis = rng.normal(size=3) if rng.random() < 0.5 else np.eye(3)[rng.integers(0, 3)]
        links.append(LinkSpec(f"l{k}", float(rng.uniform(0.2, 3.0)), rng.normal(0, 0.2, 3),
                              random_inertia(rng)))
        joints.append(JointSpec(f"j{k}", kind, parent, f"l{k}",
                                (random_rotation(rng), rng.normal(0, 0.4, 3)),
                                axis * rng.choice([-1.0, 1.0])))
    model = build_model(f"free{seed}", links, joints, gravity=rng.normal(0, 5, 3))
    drive = np.r_[np.zeros(6), np.ones(model.nv - 6)]
    return model.replace(armature=drive * rng.uniform(0, 0.3, model.nv),
                         coulomb=drive * rng.uniform(0, 1, model.nv),
                         viscous=drive * rng.uniform(0, 1, model.nv))
