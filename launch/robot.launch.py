"""RNEA controller alone, against a running ros2_control stack (real hardware).

The stack must run ``joint_state_broadcaster`` and a
``forward_command_controller/ForwardCommandController`` with
``interface_name: effort`` (see config/arm7_ros2_controllers.yaml)::

    ros2 launch rnea_ros robot.launch.py robot:=arm7
    ros2 launch rnea_ros robot.launch.py command_topic:=/my_effort_controller/commands

The robot model is read from the URDF file (the same one the hardware stack
uses); topics are remappable.
"""

PACKAGE = "rnea_ros"

ARGUMENTS = {
    "robot": ("arm7", "robot model: a URDF file in rnea_ros/urdf, without the .urdf suffix"),
    "controller_config": ("controller.yaml",
                          "controller parameter file in rnea_ros/config (keyed rnea_controller)"),
    "mode": ("gravity", "controller mode: 'gravity' or 'inverse_dynamics'"),
    "state_topic": ("/joint_states", "sensor_msgs/JointState input"),
    "command_topic": ("/effort_controller/commands",
                      "std_msgs/Float64MultiArray effort command output"),
    "use_sim_time": ("false", "use /clock instead of the system clock"),
}

NODES = (("rnea_ros", "controller", "rnea_controller", "controller_config"),)
REMAPPINGS = {"/joint_states": "state_topic", "/effort_controller/commands": "command_topic"}


def generate_launch_description():
    from launch.actions import DeclareLaunchArgument
    from launch.substitutions import (
        Command,
        FindExecutable,
        LaunchConfiguration,
        PathJoinSubstitution,
    )
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue
    from launch_ros.substitutions import FindPackageShare

    from launch import LaunchDescription

    share = FindPackageShare(PACKAGE)
    urdf = [PathJoinSubstitution([share, "urdf", LaunchConfiguration("robot")]), ".urdf"]
    entities = [DeclareLaunchArgument(name, default_value=default, description=description)
                for name, (default, description) in ARGUMENTS.items()]
    for package, executable, name, config in NODES:
        entities.append(Node(
            package=package, executable=executable, name=name, output="screen",
            parameters=[
                PathJoinSubstitution([share, "config", LaunchConfiguration(config)]),
                {"robot_description": ParameterValue(
                    Command([FindExecutable(name="xacro"), " ", *urdf]), value_type=str)},
                {"mode": LaunchConfiguration("mode")},
                {"use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"),
                                                value_type=bool)},
            ],
            remappings=[(topic, LaunchConfiguration(arg)) for topic, arg in REMAPPINGS.items()],
        ))
    return LaunchDescription(entities)
