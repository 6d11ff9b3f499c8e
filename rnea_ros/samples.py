"""Where the sample robots live: our ``urdf/`` and example-robot-data's URDFs.

No ROS needed: ``urdf/`` is found through the ament index when the package
was built with colcon, else next to the installed data files
(``<prefix>/share/rnea_ros``), else in the source tree.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from rnea_ros.core.coupling.loop_file import load_loops, loop_file_path
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.elastic.model import ElasticModel, elastic_model
from rnea_ros.core.errors import ModelError, options
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.parameter_errors import ParameterError

PACKAGE = "rnea_ros"

# example-robot-data URDFs used by the demo, tests and benchmarks (short name -> path).
EXAMPLE_ROBOTS = {
    "panda": "panda_description/urdf/panda.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "ur10": "ur_description/urdf/ur10_robot.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "baxter": "baxter_description/urdf/baxter.urdf",
    "talos_left_arm": "talos_data/robots/talos_left_arm.urdf",
    "double_pendulum_continuous":
        "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "so100": "so_arm_description/urdf/so100.urdf",
    "tiago": "tiago_description/robots/tiago.urdf",
    "pr2": "pr2_description/urdf/pr2.urdf",
    "romeo": "romeo_description/urdf/romeo.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
}

# Legged robots and humanoids for a free-flyer root (load_robot(name, root_joint="free-flyer")).
FLOATING_ROBOTS = {
    "talos": "talos_data/robots/talos_reduced.urdf",
    "talos_full": "talos_data/robots/talos_full_v2.urdf",  # with mimic grippers
    "solo12": "solo_description/robots/solo12.urdf",
    "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",
    "hyq": "hyq_description/robots/hyq_no_sensors.urdf",
    "go2": "go2_description/urdf/go2.urdf",
}

SAMPLE_ROBOTS = ("two_link_rr", "two_link_pr", "stanford_arm", "arm7")

# Sample robots with mimic joints (URDF <mimic>): urdf/<name>.urdf (load_urdf makes the
# followers followers by default; load_robot keeps them independent unless mimic=True).
MIMIC_ROBOTS = ("arm7_gripper",)

# Mixed rigid/elastic sample robots: urdf/<name>.urdf + config/<name>_elastic.yaml.
ELASTIC_ROBOTS = ("mixed_3dof",)

# Closed-loop sample robots: urdf/<name>.urdf (the spanning tree) + urdf/<name>.loops.yaml
# (the active joints and cut joints); the nodes run them (config/<name>_*.yaml name the loop
# file: the launch files pass robot_description, which has no location).
LOOP_ROBOTS = ("four_bar", "five_bar", "palletizer")

# Parallel robots (platform + legs, Khalil §5; urdf/<name>.urdf + <name>.loops.yaml): the
# nodes run them as closed-loop robots, the controller as a platform and legs
# (config/<name>_controller.yaml: loops.parallel, rnea_ros/control/parallel.py).
PARALLEL_ROBOTS = ("delta", "gough_stewart")

# Robots whose URDF has non-physical link inertias (load with inertia_check="warn"):
# example robots (mixed_3dof.urdf's are consistent: see its comment).
NONPHYSICAL_INERTIA = ("tiago", "pr2", "anymal_c", "hyq")


def share_directory() -> Path:
    """The package's share directory (``urdf/``, ``config/``, ``launch/``)."""
    try:
        from ament_index_python.packages import (  # type: ignore[import-not-found,unused-ignore]
            PackageNotFoundError,
            get_package_share_directory,
        )
        try:
            return Path(get_package_share_directory(PACKAGE))
        except (PackageNotFoundError, ValueError, LookupError, OSError):
            pass
    except ImportError:
        pass
    installed = Path(sys.prefix) / "share" / PACKAGE
    if (installed / "urdf").is_dir():
        return installed
    return Path(__file__).resolve().parent.parent


def sample_urdf(name: str) -> Path:
    """Path of one of our sample URDFs (``SAMPLE_ROBOTS``, ``MIMIC_ROBOTS``,
    ``ELASTIC_ROBOTS``, ``LOOP_ROBOTS``)."""
    samples = SAMPLE_ROBOTS + MIMIC_ROBOTS + ELASTIC_ROBOTS + LOOP_ROBOTS
    path = share_directory() / "urdf" / f"{name}.urdf"
    if name not in samples or not path.is_file():
        raise ModelError(f"no sample robot '{name}'; samples: {options(samples)}")
    return path


def example_robots_directory() -> Path:
    """The ``robots`` directory of the example-robot-data wheel."""
    try:
        dist = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        raise ModelError("example-robot-data is not installed (pip install example-robot-data)"
                         ) from None
    return Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))


def example_robot_urdf(name: str) -> Path:
    """Path of an example-robot-data URDF by short name (``EXAMPLE_ROBOTS``,
    ``FLOATING_ROBOTS``)."""
    known = {**FLOATING_ROBOTS, **EXAMPLE_ROBOTS}
    if name not in known:
        raise ModelError(f"no example robot '{name}'; known: {options(known)}")
    return example_robots_directory() / known[name]


def robot_urdf(name: str) -> Path:
    """A sample or example robot's URDF path by name."""
    if name in SAMPLE_ROBOTS + MIMIC_ROBOTS + ELASTIC_ROBOTS + LOOP_ROBOTS:
        return sample_urdf(name)
    return example_robot_urdf(name)


def load_robot(name: str, *, root_joint: str | None = None, mimic: bool = False) -> RobotModel:
    """Model of a sample or example robot by name (inertia check relaxed where needed).

    ``mimic=False`` (unlike :func:`~rnea_ros.core.model.urdf.load_urdf`'s default)
    keeps ``<mimic>`` joints independent, as Pinocchio's default parser does, which
    the oracle comparisons and benchmarks built on these robots assume;
    ``root_joint`` as in ``load_urdf``.
    """
    check = "warn" if name in NONPHYSICAL_INERTIA else "strict"
    return load_urdf(robot_urdf(name), inertia_check=check, root_joint=root_joint, mimic=mimic)


def load_loop_robot(name: str) -> ClosedLoopModel:
    """:class:`ClosedLoopModel` of a closed-loop sample robot (``LOOP_ROBOTS``): its URDF
    (the spanning tree) closed by ``urdf/<name>.loops.yaml``."""
    if name not in LOOP_ROBOTS:
        raise ModelError(f"no closed-loop sample robot '{name}'; known: {options(LOOP_ROBOTS)}")
    urdf = sample_urdf(name)
    return load_loops(load_urdf(urdf), loop_file_path(urdf))


def elastic_robot_drives(name: str) -> Path:
    """Path of an elastic sample robot's side file (``config/<name>_elastic.yaml``)."""
    if name not in ELASTIC_ROBOTS:
        raise ModelError(f"no elastic sample robot '{name}'; known: {options(ELASTIC_ROBOTS)}")
    return share_directory() / "config" / f"{name}_elastic.yaml"


def load_elastic_robot(name: str) -> ElasticModel:
    """:class:`ElasticModel` of an elastic sample robot by name."""
    return elastic_model(load_robot(name), elastic_robot_drives(name))


# ---------------------------------------------------------------- launch files
@dataclass(frozen=True)
class RobotFiles:
    """Everything ``robot:=<name>`` selects in the launch files (share-directory paths).

    ``gazebo`` (``urdf/<name>.gazebo.urdf.xacro``) is ``None`` for robots Gazebo
    cannot run (elastic joints, closed loops); ``ros2_controllers``
    (``config/<name>_ros2_controllers.yaml``) is ``None`` when there is no such file
    (elastic robots; closed-loop robots have one, for a real ros2_control stack).
    ``loops`` is ``urdf/<name>.loops.yaml`` for a closed-loop robot, else ``None``.
    """

    name: str
    urdf: Path
    controller: Path
    simulator: Path | None  # None: the simulator's defaults (a robot of the user's)
    ros2_controllers: Path | None
    gazebo: Path | None
    loops: Path | None = None


def shipped_robots(share: Path | None = None) -> tuple[str, ...]:
    """Names of the robots in ``urdf/`` with a complete node configuration (plain
    ``<name>.urdf`` files, closed-loop and parallel ones with their
    ``<name>.loops.yaml``), sorted."""
    folder = (share or share_directory()) / "urdf"
    return tuple(sorted(p.name[:-len(".urdf")] for p in folder.glob("*.urdf")))


def resolve_path(path: str) -> Path:
    """A file path, or ``package://pkg/rel`` resolved through the ament index
    (``rnea_ros`` also without ROS, through :func:`share_directory`)."""
    if not path.startswith("package://"):
        return Path(path)
    package, _, rel = path[len("package://"):].partition("/")
    if package == PACKAGE:
        return share_directory() / rel
    try:
        from ament_index_python.packages import (  # type: ignore[import-not-found,unused-ignore]
            get_package_share_directory,
        )
        return Path(get_package_share_directory(package)) / rel
    except Exception:
        raise ParameterError(f"cannot resolve '{path}': package '{package}' not found") from None


def robot_files(name: str, share: Path | None = None, *, controller: str = "",
                simulator: str = "", ros2_controllers: str = "", urdf: str = "") -> RobotFiles:
    """The complete configuration of shipped robot ``name``: its URDF and
    ``config/<name>_{controller,simulator,ros2_controllers}.yaml``; a non-empty
    ``controller``/``simulator``/``ros2_controllers`` names a file (a path, absolute or
    from the working directory, or a name in ``config/``).

    ``urdf`` (a path or ``package://`` URI; the launch files' ``urdf:=``) selects a robot
    of the user's instead of ``name``: :func:`user_robot_files`. One-line
    :class:`ModelError` for an unknown robot or a missing file."""
    share = share or share_directory()
    if urdf:
        return user_robot_files(urdf, share, controller=controller, simulator=simulator)
    robots = shipped_robots(share)
    if name not in robots:
        raise ModelError(f"unknown robot '{name}'; available robots: {', '.join(robots)} "
                         "(or urdf:=<your URDF> with controller_config:=<file>)")
    config = share / "config"

    def pick(given: str, default: str) -> Path:
        path = config_file(given, share) if given else config / default
        if not path.is_file():
            raise ModelError(f"robot '{name}': no parameter file {path}")
        return path

    gazebo = share / "urdf" / f"{name}.gazebo.urdf.xacro"
    has_gazebo = gazebo.is_file()
    urdf_path = share / "urdf" / f"{name}.urdf"
    loops = loop_file_path(urdf_path)
    default_controllers = f"{name}_ros2_controllers.yaml"
    return RobotFiles(
        name=name, urdf=urdf_path,
        controller=pick(controller, f"{name}_controller.yaml"),
        simulator=pick(simulator, f"{name}_simulator.yaml"),
        ros2_controllers=pick(ros2_controllers, default_controllers)
        if has_gazebo or (config / default_controllers).is_file() else None,
        gazebo=gazebo if has_gazebo else None,
        loops=loops if loops.is_file() else None)


def config_file(given: str, share: Path | None = None) -> Path:
    """A parameter file named on a launch line: a ``package://`` URI, a path (absolute,
    or from the working directory) when it exists, else a name in ``config/``."""
    if given.startswith("package://"):
        return resolve_path(given)
    path = Path(given).expanduser()
    if path.is_absolute() or path.is_file():
        return path.resolve()
    return (share or share_directory()) / "config" / given


def user_robot_files(urdf: str, share: Path | None = None, *, controller: str,
                     simulator: str = "") -> RobotFiles:
    """A robot of the user's: ``urdf`` (path or ``package://``), its controller file
    (required: ``rnea-config --urdf URDF --out FILE`` writes a starting one) and, when
    given, a simulator file (else ``None``: the simulator's defaults, joints at 0). Its
    loop file, when one sits
    beside the URDF (``<stem>.loops.yaml``). No Gazebo description, no ros2_controllers."""
    path = resolve_path(urdf).expanduser()
    if not path.is_file():
        raise ModelError(f"urdf:='{urdf}': no such file ({path})")
    if not controller:
        raise ModelError(f"urdf:='{urdf}' needs controller_config:=<file> (joints, limits, "
                         f"gains): 'rnea-config --urdf {path} --out my_controller.yaml' "
                         "writes a starting one")

    def pick(given: str, what: str) -> Path:
        file = config_file(given, share)
        if not file.is_file():
            raise ModelError(f"{what}:='{given}': no such parameter file ({file})")
        return file

    loops = loop_file_path(path)
    return RobotFiles(name=path.name.removesuffix(".urdf"), urdf=path.resolve(),
                      controller=pick(controller, "controller_config"),
                      simulator=pick(simulator, "simulator_config") if simulator else None,
                      ros2_controllers=None, gazebo=None,
                      loops=loops if loops.is_file() else None)


def launch_flag(name: str, text: str) -> bool:
    """A boolean launch argument (``true``/``false``, any case) as a bool; one-line
    :class:`ParameterError` otherwise."""
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ParameterError(f"launch argument '{name}' is '{text}'; valid: true, false")
    return value == "true"
