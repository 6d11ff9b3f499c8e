"""RNEA controller alone, against a running ros2_control stack (real hardware).

The stack must run ``joint_state_broadcaster`` and a
``forward_command_controller/ForwardCommandController`` with
``interface_name: effort`` (see config/arm7_ros2_controllers.yaml)::

    ros2 launch rnea_ros robot.launch.py robot:=arm7
    ros2 launch rnea_ros robot.launch.py robot:=stanford_arm namespace:=left
    ros2 launch rnea_ros robot.launch.py command_topic:=my_effort_controller/commands
    ros2 launch rnea_ros robot.launch.py urdf:=package://my_arm_description/urdf/arm.urdf \
        controller_config:=/path/my_arm_controller.yaml   # your robot (rnea-config writes one)
    ros2 launch rnea_ros robot.launch.py robot_description_source:=topic namespace:=left \
        controller_config:=/path/my_arm_controller.yaml   # URDF from robot_state_publisher

``robot:=NAME`` selects ``urdf/NAME.urdf`` (plain URDF, the model the
controller computes with) and ``config/NAME_controller.yaml``; an unknown name
ends the launch with one line listing the available robots. Topics are
relative to ``namespace`` and remappable. When the controller exits, the
launch shuts down: ``forward_command_controller`` would otherwise keep
applying the last command (see README, "When commands stop"); with exit status 1
when the controller failed (a bad parameter, killed).
"""

from rnea_ros.launching import LIFECYCLE_ARGUMENTS, USER_ROBOT_ARGUMENTS

PACKAGE = "rnea_ros"

ARGUMENTS = {
    "robot": ("arm7", "robot shipped in rnea_ros/urdf (arm7, arm7_gripper, delta, five_bar, "
              "four_bar, gough_stewart, mixed_3dof, palletizer, stanford_arm, two_link_pr, "
              "two_link_rr): selects "
              "urdf/<robot>.urdf and config/<robot>_controller.yaml"),
    "namespace": ("", "ROS namespace of the controller and its topics"),
    **USER_ROBOT_ARGUMENTS,  # urdf:=, controller_config:=
    **LIFECYCLE_ARGUMENTS,  # start_inactive:=
    "mode": ("", "controller mode: 'gravity', 'inverse_dynamics' or 'elastic' (robots "
             "with elastic joints); empty: the controller file's"),
    "state_topic": ("joint_states", "sensor_msgs/JointState input (relative: under namespace)"),
    "command_topic": ("effort_controller/commands",
                      "std_msgs/Float64MultiArray effort command output (relative)"),
    "use_sim_time": ("false", "use /clock instead of the system clock"),
}

NODES = (("rnea_ros", "controller", "rnea_controller", "controller"),)
REMAPPINGS = {"joint_states": "state_topic", "effort_controller/commands": "command_topic"}


def launch_robot(context, *args, **kwargs):
    """The controller for the chosen robot (an OpaqueFunction: files depend on robot:=)."""
    from pathlib import Path

    from ament_index_python.packages import get_package_share_directory
    from launch.actions import RegisterEventHandler
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
                        controller=arg("controller_config"), urdf=arg("urdf"))
    description = [{key: ParameterValue(value, value_type=str)} for part in
                   description_parameters(arg("robot_description_source"),
                                          files.urdf.read_text(), str(files.urdf))
                   for key, value in part.items()]
    actions = []
    for package, executable, name, which in NODES:
        node = Node(
            package=package, executable=executable, name=name, namespace=arg("namespace"),
            output="screen",
            parameters=[
                str(getattr(files, which)),
                *description,  # the URDF, or robot_description_source: topic
                {"use_sim_time": flag("use_sim_time")},
                autostart(flag("start_inactive")),
                *([{"mode": arg("mode")}] if arg("mode") else []),
            ],
            remappings=[(topic, arg(argument)) for topic, argument in REMAPPINGS.items()],
        )
        actions += [RegisterEventHandler(OnProcessExit(target_action=node,
                                                       on_exit=on_exit_shutdown(name))), node]
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
