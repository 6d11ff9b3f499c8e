"""rnea_ros: builds with colcon (ament_python) and installs with pip."""

import re
from glob import glob
from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "rnea_ros"
# The version has one source, rnea_ros/__init__.py (read as text: no import at build time).
VERSION = re.search(r'^__version__ = "([^"]+)"', Path(__file__).with_name(PACKAGE).joinpath(
    "__init__.py").read_text(encoding="utf-8"), re.M).group(1)

ROS_WHEELS = [  # ROS 2 from PyPI, for machines without a ROS install
    "ros-rclpy[fastrtps]", "ros-sensor-msgs", "ros-std-msgs", "ros-trajectory-msgs",
    "ros-diagnostic-msgs", "ros-builtin-interfaces", "ros-geometry-msgs",
]
TOOLS = ["rosbags", "mcap", "orjson", "scipy", "matplotlib", "tqdm"]
IDENTIFICATION = [*TOOLS, "cvxpy", "threadpoolctl"]
FLEET = [*TOOLS, "dask[distributed]", "distributed", "pyarrow", "duckdb"]  # rnea-fleet
PLANNING = ["scipy>=1.11", "matplotlib", "toppra"]  # rnea-plan; toppra only for bench_plan
DOCS = ["mkdocs>=1.6", "mkdocs-material>=9.5", "mkdocstrings[python]>=0.26"]  # make docs
SIMULATOR = ["mujoco>=3.3,<3.4"]  # the simulator's engine: mujoco (3.x wheels are self-contained)
TEST = ["pytest>=7", "ruff", "mypy", "types-PyYAML", "example-robot-data", "pin"]
PLANNING = [*PLANNING, "casadi>=3.6"]  # rnea-plan's NLP solver: IPOPT, bundled in the wheel

setup(
    name=PACKAGE,
    version=VERSION,
    packages=find_packages(exclude=["test", "test.*"]),
    package_data={PACKAGE: ["params/*.yaml"]},  # the nodes' parameter tables
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/urdf",
         glob("urdf/*.urdf") + glob("urdf/*.urdf.xacro") + glob("urdf/*.loops.yaml")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/config/worlds", glob("config/worlds/*.xml")),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
    ],
    python_requires=">=3.10",
    install_requires=["setuptools", "numpy>=1.24", "numba>=0.59", "PyYAML"],
    # rnea-bag (rosbag analysis) needs rosbags, mcap, orjson, scipy, matplotlib, tqdm: the
    # "tools" extra; rnea-identify also cvxpy (its LMI solver Clarabel) and threadpoolctl:
    # "identification".
    extras_require={
        "oracle": ["pin"],
        "examples": ["example-robot-data"],
        "ros": ROS_WHEELS,
        "tools": TOOLS,
        "identification": IDENTIFICATION,
        "planning": PLANNING,
        "fleet": FLEET,
        "simulator": SIMULATOR,
        "test": TEST,
        "docs": DOCS,
        "all": sorted(set(ROS_WHEELS + TEST + TOOLS + IDENTIFICATION + PLANNING + FLEET
                          + SIMULATOR + DOCS)),
    },
    zip_safe=False,
    maintainer="rnea_ros developers",
    maintainer_email="dev@rnea-ros.invalid",
    description="Joint torques from joint states with our own recursive Newton-Euler algorithm",
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "demo = rnea_ros.demo:main",
            "controller = rnea_ros.nodes.controller:main",
            "simulator = rnea_ros.nodes.simulator:main",
            "rate_limiter = rnea_ros.nodes.rate_limiter:main",
            "rnea_bag = rnea_ros.tools.bag.cli:main",
            "rnea-bag = rnea_ros.tools.bag.cli:main",
            "rnea_fleet = rnea_ros.tools.fleet.cli:main",
            "rnea-fleet = rnea_ros.tools.fleet.cli:main",
            "rnea_identify = rnea_ros.identification.cli:main",
            "rnea-identify = rnea_ros.identification.cli:main",
            "rnea_plan = rnea_ros.planning.cli:main",
            "rnea-plan = rnea_ros.planning.cli:main",
            "precompile = rnea_ros.nodes.precompile:main",
            "rnea-precompile = rnea_ros.nodes.precompile:main",
        ],
    },
)
