"""Gazebo (gz sim) + gz_ros2_control + the RNEA controller.

Starts gz sim through ros_gz_sim, robot_state_publisher with
``urdf/<robot>.gazebo.urdf.xacro`` (the plain URDF plus the ``<ros2_control>``
block, expanded by xacro with the chosen ros2_controllers YAML and namespace),
spawns it, bridges ``/clock``, then in order (each when the previous step has
exited): ``joint_state_broadcaster``, then our controller and
``effort_controller`` (forward_command_controller, effort interface)::

    ros2 launch rnea_ros gazebo.launch.py
    ros2 launch rnea_ros gazebo.launch.py robot:=stanford_arm
    ros2 launch rnea_ros gazebo.launch.py mode:=inverse_dynamics gz_args:="-r -v 3 empty.sdf"

No fall at start-up: gz_ros2_control holds the joints still (``hold_joints``)
at the start pose until ``effort_controller`` is active, then applies each
joint's initial effort, g(q0) at that pose, until our first command (see the
xacro files and docs/design.md). When our controller exits, the launch shuts
down, with exit status 1 when it failed (a bad parameter, killed), as when the
robot cannot be spawned or a controller spawner fails.

Needs ROS 2 Jazzy/Kilted with the xacro command, ros_gz_sim, ros_gz_bridge,
gz_ros2_control, controller_manager, joint_state_broadcaster and
forward_command_controller (not dependencies of the package: a missing one
ends the launch with one line naming the apt packages). Elastic-joint robots
run on the embedded simulator only.
"""

from rnea_ros.launching import LIFECYCLE_ARGUMENTS

PACKAGE = "rnea_ros"

ARGUMENTS = {
    "robot": ("arm7", "robot shipped in rnea_ros/urdf with a Gazebo description "
              "(urdf/<robot>.gazebo.urdf.xacro): arm7, arm7_gripper, stanford_arm, two_link_pr, "
              "two_link_rr"),
    "namespace": ("", "ROS namespace of the controller manager, controllers and our node"),
    "mode": ("", "controller mode: 'gravity' or 'inverse_dynamics' ('elastic' robots run "
             "on sim.launch.py only); empty: the controller file's"),
    "controller_config": ("", "controller parameter file in rnea_ros/config; "
                          "empty: <robot>_controller.yaml"),
    "ros2_controllers": ("", "ros2_control controllers file in rnea_ros/config (loaded by "
                         "gz_ros2_control and the spawners); empty: "
                         "<robot>_ros2_controllers.yaml"),
    "gz_args": ("-r empty.sdf", "arguments of gz sim: world file and flags"),
    "use_sim_time": ("true", "run the nodes on Gazebo's /clock"),
    **LIFECYCLE_ARGUMENTS,  # start_inactive:=
}

# ros2_control controllers spawned in this order, after the robot is in the world.
CONTROLLERS = ("joint_state_broadcaster", "effort_controller")
# Packages this launch needs beyond rnea_ros (package name, apt package stem); xacro is
# only run as a command (FindExecutable), its ROS package need not be in the ament index.
GAZEBO_PACKAGES = ("ros_gz_sim", "ros_gz_bridge", "gz_ros2_control", "controller_manager",
                   "joint_state_broadcaster", "forward_command_controller",
                   "robot_state_publisher")
EXECUTABLES = (
    ("robot_state_publisher", "robot_state_publisher"),
    ("ros_gz_sim", "create"),
    ("ros_gz_bridge", "parameter_bridge"),
    ("controller_manager", "spawner"),
    ("rnea_ros", "controller"),
)
INCLUDED_LAUNCH_FILES = (("ros_gz_sim", "launch/gz_sim.launch.py"),)
NODES = (("rnea_ros", "controller", "rnea_controller", "controller"),)


def check_requirements(which=None, installed=None) -> None:
    """One-line RuntimeError when xacro or a Gazebo package is missing."""
    import shutil

    which = which or shutil.which
    if which("xacro") is None:
        raise RuntimeError("gazebo.launch.py: the 'xacro' executable is not on PATH (it expands "
                           "urdf/<robot>.gazebo.urdf.xacro): sudo apt install "
                           "ros-$ROS_DISTRO-xacro, then source the ROS setup file")
    if installed is None:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        def installed(package):
            try:
                get_package_share_directory(package)
            except (PackageNotFoundError, OSError, ValueError, LookupError):
                return False
            return True
    missing = [p for p in GAZEBO_PACKAGES if not installed(p)]
    if missing:
        apt = " ".join("ros-$ROS_DISTRO-" + p.replace("_", "-") for p in missing)
        raise RuntimeError(f"gazebo.launch.py needs {', '.join(missing)}: sudo apt install {apt}")


def launch_robot(context, *args, **kwargs):
    """Gazebo, the robot and the controllers (an OpaqueFunction: files depend on robot:=)."""
    from pathlib import Path

    from ament_index_python.packages import get_package_share_directory
    from launch.actions import IncludeLaunchDescription, RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch.substitutions import Command, FindExecutable, LaunchConfiguration
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue

    from rnea_ros.launching import autostart, on_exit_shutdown, on_exit_then
    from rnea_ros.samples import launch_flag, robot_files, shipped_robots

    def arg(name):
        return LaunchConfiguration(name).perform(context)

    def flag(name):
        return launch_flag(name, arg(name))

    share = Path(get_package_share_directory(PACKAGE))
    files = robot_files(arg("robot"), share, controller=arg("controller_config"),
                        ros2_controllers=arg("ros2_controllers"))
    if files.gazebo is None or files.ros2_controllers is None:
        ready = [r for r in shipped_robots(share)
                 if (share / "urdf" / f"{r}.gazebo.urdf.xacro").is_file()]
        raise RuntimeError(f"robot '{files.name}' has no Gazebo description (elastic joints "
                           f"and closed loops run on sim.launch.py); Gazebo robots: "
                           f"{', '.join(ready)}")
    check_requirements()
    namespace = arg("namespace")
    controllers_file = str(files.ros2_controllers)
    robot_description = {"robot_description": ParameterValue(Command([
        FindExecutable(name="xacro"), " ", str(files.gazebo),
        " controllers_file:=", controllers_file, " namespace:=", namespace]), value_type=str)}
    use_sim_time = {"use_sim_time": flag("use_sim_time")}

    package, launch_file = INCLUDED_LAUNCH_FILES[0]
    gz_sim = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(Path(get_package_share_directory(package))
                                          / launch_file)),
        launch_arguments={"gz_args": arg("gz_args")}.items())
    state_publisher = Node(package="robot_state_publisher", executable="robot_state_publisher",
                           namespace=namespace, output="screen",
                           parameters=[robot_description, use_sim_time])
    spawn = Node(package="ros_gz_sim", executable="create", namespace=namespace, output="screen",
                 arguments=["-topic", "robot_description",
                            "-name", namespace.strip("/") or files.name,
                            "-allow_renaming", "true"])
    clock_bridge = Node(package="ros_gz_bridge", executable="parameter_bridge", output="screen",
                        arguments=["/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock"])
    broadcaster, effort = (
        Node(package="controller_manager", executable="spawner", namespace=namespace,
             output="screen", arguments=[name, "--param-file", controllers_file],
             parameters=[use_sim_time])
        for name in CONTROLLERS)
    package, executable, name, which = NODES[0]
    controller = Node(package=package, executable=executable, name=name, namespace=namespace,
                      output="screen", parameters=[
                          str(getattr(files, which)), robot_description, use_sim_time,
                          autostart(flag("start_inactive")),
                          *([{"mode": arg("mode")}] if arg("mode") else [])])
    return [
        gz_sim, state_publisher, spawn, clock_bridge,
        # Each step when the previous one succeeded; a failed one fails the launch.
        RegisterEventHandler(OnProcessExit(target_action=spawn,
                                           on_exit=on_exit_then("create", [broadcaster]))),
        RegisterEventHandler(OnProcessExit(target_action=broadcaster, on_exit=on_exit_then(
            f"spawner {CONTROLLERS[0]}", [controller, effort]))),
        # The robot must not stay under a controller that holds our last command.
        RegisterEventHandler(OnProcessExit(target_action=controller,
                                           on_exit=on_exit_shutdown(name))),
    ]


def generate_launch_description():
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    from launch import LaunchDescription

    return LaunchDescription([
        *(DeclareLaunchArgument(name, default_value=default, description=description)
          for name, (default, description) in ARGUMENTS.items()),
        OpaqueFunction(function=launch_robot),
    ])


if __name__ == "__main__":  # python <this file> name:=value ... (a pip install: no ros2)
    import sys

    from rnea_ros.launching import launch_main

    raise SystemExit(launch_main(__file__, sys.argv[1:]))
