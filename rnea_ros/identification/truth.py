"""The "true" robot of the closed-loop identification (demo phase 7,
``rnea_ros.nodes.identification_loop``): arm7 with other masses and centres of mass
than its URDF, and joint friction the URDF does not have. The simulator runs it, the
controller starts with the nominal URDF, ``rnea-identify`` should find it again."""

from __future__ import annotations

import re

import numpy as np

TRUE_COULOMB = [0.33, 0.51, 0.76, 0.42, 0.25, 0.61, 0.37]  # N m
TRUE_VISCOUS = [0.21, 0.35, 0.12, 0.28, 0.17, 0.39, 0.24]  # N m s/rad


def true_urdf(text: str, seed: int = 5) -> str:
    """``text`` with every ``<inertial>`` changed: mass x U(0.8, 1.2), COM moved by
    U(-3, 3) cm per axis (the rotational inertia about the COM kept)."""
    rng = np.random.default_rng(seed)

    def change(block: re.Match[str]) -> str:
        inner = block.group(0)
        mass = re.search(r'<mass value="([^"]+)"', inner)
        xyz = re.search(r'<origin xyz="([^"]+)"', inner)
        assert mass is not None and xyz is not None, "arm7's inertials have both"
        com = np.array(xyz.group(1).split(), dtype=float) + rng.uniform(-0.03, 0.03, 3)
        inner = re.sub(r'<mass value="[^"]+"',
                       f'<mass value="{float(mass.group(1)) * rng.uniform(0.8, 1.2):.6f}"', inner)
        return re.sub(r'<origin xyz="[^"]+"', '<origin xyz="{:.6f} {:.6f} {:.6f}"'.format(*com),
                      inner, count=1)

    return re.sub(r"<inertial>.*?</inertial>", change, text, flags=re.S)


__all__ = ["TRUE_COULOMB", "TRUE_VISCOUS", "true_urdf"]
