"""Embedded simulator + RNEA controller (+ robot_state_publisher when installed).

For machines without Gazebo. ``robot:=NAME`` selects a complete configuration
of a robot shipped in ``urdf/``: ``urdf/NAME.urdf`` (plain URDF, no xacro),
``config/NAME_controller.yaml`` and ``config/NAME_simulator.yaml`` (joints,
gains, initial pose, mode)::

    ros2 launch rnea_ros sim.launch.py                      # arm7, held against gravity
    ros2 launch rnea_ros sim.launch.py robot:=stanford_arm
    ros2 launch rnea_ros sim.launch.py mode:=inverse_dynamics
    ros2 launch rnea_ros sim.launch.py robot:=mixed_3dof     # elastic joint (hua-2024)
    ros2 launch rnea_ros sim.launch.py robot:=five_bar       # closed loop (loop file)
    ros2 launch rnea_ros sim.launch.py robot:=delta          # parallel robot (platform + legs)
    ros2 launch rnea_ros sim.launch.py namespace:=left       # topics under /left
    ros2 launch rnea_ros sim.launch.py namespace:=right robot:=two_link_pr publish_clock:=false
    ros2 launch rnea_ros sim.launch.py rocking:=true imu:=true  # a rocking base, IMU-compensated
    ros2 launch rnea_ros sim.launch.py rocking:=true            # ... and without the IMU: drifts
    ros2 launch rnea_ros sim.launch.py engine:=mujoco world:=table  # MuJoCo: contacts, a table
    ros2 launch rnea_ros sim.launch.py engine:=mujoco viewer:=true  # ... with its viewer
    rnea-config --urdf my_arm.urdf --out my_arm.yaml         # your own robot: a start file,
    ros2 launch rnea_ros sim.launch.py urdf:=my_arm.urdf controller_config:=my_arm.yaml
    ros2 launch rnea_ros sim.launch.py urdf:=my_arm.urdf controller_config:=my_arm.yaml \
        robot_description_source:=topic   # both nodes take it from robot_state_publisher

With ``engine:=mujoco`` a push is one message on ``rnea_simulator/apply_wrench``
(``geometry_msgs/WrenchStamped``: the link in ``header.frame_id``, force and torque in
the world frame, acting for the simulator's ``wrench_duration``).

An unknown robot ends the launch with one line listing the available ones.
When the simulator or the controller exits, the whole launch shuts down, with exit
status 1 when that node failed (e.g. a bad parameter, or killed).
Topic names are relative (``<namespace>/joint_states``,
``<namespace>/effort_controller/commands``); ``/clock`` and ``/diagnostics``
are global, so with several simulated robots exactly one should publish
``/clock`` (``publish_clock:=false`` on the others).

The module-level tables are what the launch description is built from; the
test suite checks them without ``launch`` installed.
"""

from rnea_ros.launching import LIFECYCLE_ARGUMENTS, USER_ROBOT_ARGUMENTS

PACKAGE = "rnea_ros"

# name: (default, description)
ARGUMENTS = {
    "robot": ("arm7", "robot shipped in rnea_ros/urdf (arm7, arm7_gripper, delta, five_bar, "
              "four_bar, gough_stewart, mixed_3dof, palletizer, stanford_arm, two_link_pr, "
              "two_link_rr): selects "
              "urdf/<robot>.urdf, config/<robot>_controller.yaml and "
              "config/<robot>_simulator.yaml (closed-loop robots: their files name "
              "urdf/<robot>.loops.yaml)"),
    "namespace": ("", "ROS namespace of every node and topic (several robots side by side)"),
    "mode": ("", "controller mode: 'gravity', 'inverse_dynamics' or 'elastic'; "
             "empty: the robot's controller file's"),
    **USER_ROBOT_ARGUMENTS,  # urdf:=, controller_config:=
    **LIFECYCLE_ARGUMENTS,  # start_inactive:=
    "simulator_config": ("", "simulator parameter file: a path, package://pkg/file.yaml or a "
                         "name in rnea_ros/config; empty: <robot>_simulator.yaml (with "
                         "urdf:=: the simulator's defaults, every joint at 0)"),
    "use_sim_time": ("true", "run the controller on the simulator's /clock"),
    "publish_clock": ("true", "the simulator publishes /clock (false on all but one "
                      "of several simulated robots)"),
    "rocking": ("false", "the simulated base rocks and heaves (ROCKING: 5 deg roll at 0.5 Hz, "
                "3 deg pitch at 0.3 Hz, 2 cm heave at 0.5 Hz) instead of the simulator "
                "file's base_motion"),
    "imu": ("false", "the simulator publishes an IMU on the root link on 'imu' and the "
            "controller compensates the base's motion with it (imu.topic: imu)"),
    "engine": ("", "the simulator's physics engine: 'pinocchio' or 'mujoco' (contacts, "
               "world:=, pushes on rnea_simulator/apply_wrench); empty: the simulator "
               "file's (pinocchio)"),
    "world": ("", "engine mujoco: an MJCF world merged into the scene, a file or a name in "
              "rnea_ros/config/worlds ('table': a table and a box); empty: none"),
    "viewer": ("false", "engine mujoco: open MuJoCo's passive viewer (needs a display)"),
}

# rocking:=true (simulator parameters; the units of config/arm7_simulator.yaml)
ROCKING = {"base_motion.roll_amplitude": 0.0873, "base_motion.roll_frequency": 0.5,
           "base_motion.pitch_amplitude": 0.0524, "base_motion.pitch_frequency": 0.3,
           "base_motion.heave_amplitude": 0.02, "base_motion.heave_frequency": 0.5}
# imu:=true
IMU = {"rnea_simulator": {"imu.enable": True}, "rnea_controller": {"imu.topic": "imu"}}

# The nodes: package, executable, node name, which of the robot's files it loads.
NODES = (
    ("rnea_ros", "simulator", "rnea_simulator", "simulator"),
    ("rnea_ros", "controller", "rnea_controller", "controller"),
)
OPTIONAL_NODES = (("robot_state_publisher", "robot_state_publisher", "robot_state_publisher"),)


def installed(package: str) -> bool:
    """Whether ``package`` is in the ament index."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    try:
        get_package_share_directory(package)
    except (PackageNotFoundError, OSError, ValueError, LookupError):
        return False
    return True


def launch_robot(context, *args, **kwargs):
    """The nodes of the chosen robot (an OpaqueFunction: file names depend on robot:=)."""
    from pathlib import Path

    from ament_index_python.packages import get_package_share_directory
    from launch.actions import LogInfo, RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue

    from rnea_ros.launching import autostart, description_parameters, on_exit_shutdown
    from rnea_ros.samples import launch_flag, robot_files

    def arg(name):
        return LaunchConfiguration(name).perform(context)

    def flag(name):
        return launch_flag(name, arg(name))

    files = robot_files(arg("robot"), Path(get_package_share_directory(PACKAGE)),
                        controller=arg("controller_config"),
                        simulator=arg("simulator_config"), urdf=arg("urdf"))
    namespace = arg("namespace")
    text = files.urdf.read_text()
    robot_description = {"robot_description": ParameterValue(text, value_type=str)}
    # the URDF (and its file: a loop file beside it is found from urdf_path), or
    # robot_description_source: topic -- robot_state_publisher's, below, or the user's
    description = [{key: ParameterValue(value, value_type=str)} for part in
                   description_parameters(arg("robot_description_source"), text,
                                          str(files.urdf)) for key, value in part.items()]
    use_sim_time = {"use_sim_time": flag("use_sim_time")}
    per_node = {
        "rnea_simulator": [{"publish_clock": flag("publish_clock")}],
        "rnea_controller": [use_sim_time, autostart(flag("start_inactive"))]
        + ([{"mode": arg("mode")}] if arg("mode") else []),
    }
    for name in ("engine", "world"):
        if arg(name):
            per_node["rnea_simulator"].append({name: arg(name)})
    if flag("viewer"):
        per_node["rnea_simulator"].append({"viewer": True})
    if flag("rocking"):
        per_node["rnea_simulator"].append(ROCKING)
    if flag("imu"):
        for name, values in IMU.items():
            per_node[name].append(values)
    actions = []
    for package, executable, name, which in NODES:
        file = getattr(files, which)  # None: a user's robot without a simulator file
        node = Node(package=package, executable=executable, name=name, namespace=namespace,
                    output="screen", parameters=[*([str(file)] if file else []),
                                                 *description, *per_node[name]])
        # A dead simulator or controller must not leave the rest running, and a failed
        # one (a bad parameter, killed) ends the launch with exit status 1.
        actions.append(RegisterEventHandler(OnProcessExit(target_action=node,
                                                          on_exit=on_exit_shutdown(name))))
        actions.append(node)
    for package, executable, name in OPTIONAL_NODES:
        if installed(package):
            actions.append(Node(package=package, executable=executable, name=name,
                                namespace=namespace, output="screen",
                                parameters=[robot_description, use_sim_time]))
        else:
            topic = (" and nothing publishes robot_description for robot_description_source:="
                     "topic: publish it yourself" if arg("robot_description_source") == "topic"
                     else "")
            actions.append(LogInfo(msg=f"{package} is not installed: not started (no TF "
                                   f"for RViz{topic}; sudo apt install ros-$ROS_DISTRO-"
                                   f"{package.replace('_', '-')})"))
    return actions


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
