"""Shared cases of the mixed rigid/elastic tests (test/core/elastic): the robots and
random states of the Pinocchio comparisons, and the paper's 3-DoF arm with geared
motors."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import yaml
from elastic_oracle import random_drives

from rnea_ros.core.elastic.model import ElasticModel, elastic_model
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.samples import elastic_robot_drives, load_robot

# hua-2024 section V's arm with table I's link inertias as printed (not physical: the
# shipped urdf/mixed_3dof.urdf has the nearest consistent ones); the paper-number tests.
PAPER_URDF = Path(__file__).resolve().parent / "data" / "hua_2024_table1.urdf"

ELASTIC_ROBOTS = ("two_link_rr", "two_link_pr", "stanford_arm", "arm7", "panda", "ur5", "kinova",
                  "baxter", "talos_left_arm")
TOL = 1e-9


def setup_model(name: str, seed: int, on_parent: bool):
    rng = np.random.default_rng(seed)
    links = load_robot(name).without_friction()
    model = elastic_model(links, random_drives(links, rng, on_parent=on_parent))
    return model, rng


def random_state(model, rng):
    """Random state; the springs deflect by ~0.05 rad (a few hundred N m at most)."""
    n, ne = model.n, model.n_elastic
    q = rng.uniform(-np.pi, np.pi, n)
    theta = q[model.elastic_joints] + rng.normal(0, 0.05, ne)
    return (q, theta, rng.normal(0, 2, n), rng.normal(0, 2, ne), rng.normal(0, 5, n),
            rng.normal(0, 5, ne))


def scaled_error(ours, reference, *terms) -> float:
    """Error relative to the largest term that entered the sum (springs can dominate)."""
    scale = max(float(np.abs(x).max(initial=0.0)) for x in (reference, *terms))
    return float(np.abs(np.asarray(ours) - reference).max()) / max(scale, 1e-12)


def paper_model(drives: object = None) -> ElasticModel:
    """The paper's arm (``PAPER_URDF``, table I's inertias, their InertiaWarnings
    silenced) with ``drives`` (default: the shipped config/mixed_3dof_elastic.yaml)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # table I's inertias (see PAPER_URDF)
        links = load_urdf(PAPER_URDF, inertia_check="warn")
    return elastic_model(links, elastic_robot_drives("mixed_3dof") if drives is None else drives)


def geared_hua(ratio: float):
    drives = yaml.safe_load(elastic_robot_drives("mixed_3dof").read_text())
    for joint in drives["joints"].values():
        joint["motor"]["gear_ratio"] = ratio
    return paper_model(drives)
