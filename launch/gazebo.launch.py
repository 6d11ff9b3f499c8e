"""Gazebo (gz sim) + gz_ros2_control + the RNEA controller.

Starts gz sim on an empty world through ros_gz_sim, robot_state_publisher,
spawns the robot from ``robot_description``, bridges ``/clock``, then in
order (each when the previous spawner exits): ``joint_state_broadcaster``,
``effort_controller`` (forward_command_controller, effort interface), and our
controller on simulated time::

    ros2 launch rnea_ros gazebo.launch.py
    ros2 launch rnea_ros gazebo.launch.py mode:=inverse_dynamics gz_args:="-r -v 3 empty.sdf"

Needs ROS 2 Jazzy/Kilted with ros_gz_sim, ros_gz_bridge, gz_ros2_control,
controller_manager, joint_state_broadcaster and forward_command_controller.
"""

PACKAGE = "rnea_ros"

ARGUMENTS = {
    "robot": ("arm7", "robot model: a URDF file in rnea_ros/urdf (with a <ros2_control> block "
              "for gz_ros2_control/GazeboSimSystem), without the .urdf suffix"),
    "mode": ("gravity", "controller mode: 'gravity' or 'inverse_dynamics'"),
    "controller_config": ("controller.yaml",
                          "controller parameter file in rnea_ros/config (keyed rnea_controller); "
                          "controller.yaml is arm7's, <robot>_controller.yaml the others'"),
    "gz_args": ("-r empty.sdf", "arguments of gz sim: world file and flags"),
}

# ros2_control controllers of robot R: rnea_ros/config/R_ros2_controllers.yaml, the file the
# URDF's gz_ros2_control plugin also loads.
CONTROLLERS_FILE_SUFFIX = "_ros2_controllers.yaml"
# ros2_control controllers spawned in this order, after the robot is in the world.
CONTROLLERS = ("joint_state_broadcaster", "effort_controller")
EXECUTABLES = (
    ("robot_state_publisher", "robot_state_publisher"),
    ("ros_gz_sim", "create"),
    ("ros_gz_bridge", "parameter_bridge"),
    ("controller_manager", "spawner"),
    ("rnea_ros", "controller"),
)
INCLUDED_LAUNCH_FILES = (("ros_gz_sim", "launch/gz_sim.launch.py"),)
NODES = (("rnea_ros", "controller", "rnea_controller", "controller_config"),)


def generate_launch_description():
    from itertools import pairwise

    from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    from launch.launch_description_sources import PythonLaunchDescriptionSource
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
    robot_description = {"robot_description": ParameterValue(
        Command([FindExecutable(name="xacro"), " ", *urdf]), value_type=str)}
    sim_time = {"use_sim_time": True}
    controllers_file = [PathJoinSubstitution([share, "config", LaunchConfiguration("robot")]),
                        CONTROLLERS_FILE_SUFFIX]

    gz_sim = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution(
            [FindPackageShare(INCLUDED_LAUNCH_FILES[0][0]), INCLUDED_LAUNCH_FILES[0][1]])),
        launch_arguments={"gz_args": LaunchConfiguration("gz_args")}.items())
    state_publisher = Node(package="robot_state_publisher", executable="robot_state_publisher",
                           parameters=[robot_description, sim_time], output="screen")
    spawn = Node(package="ros_gz_sim", executable="create", output="screen",
                 arguments=["-topic", "robot_description", "-name", LaunchConfiguration("robot"),
                            "-allow_renaming", "true"])
    clock_bridge = Node(package="ros_gz_bridge", executable="parameter_bridge", output="screen",
                        arguments=["/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock"])
    spawners = [Node(package="controller_manager", executable="spawner", output="screen",
                     arguments=[name, "--param-file", controllers_file])
                for name in CONTROLLERS]
    package, executable, name, config = NODES[0]
    controller = Node(package=package, executable=executable, name=name, output="screen",
                      parameters=[PathJoinSubstitution([share, "config",
                                                        LaunchConfiguration(config)]),
                                  robot_description, {"mode": LaunchConfiguration("mode")},
                                  sim_time])
    chain = [spawn, *spawners, controller]
    handlers = [RegisterEventHandler(OnProcessExit(target_action=before, on_exit=[after]))
                for before, after in pairwise(chain)]
    arguments = [DeclareLaunchArgument(arg, default_value=default, description=description)
                 for arg, (default, description) in ARGUMENTS.items()]
    return LaunchDescription([*arguments, gz_sim, state_publisher, spawn, clock_bridge,
                              *handlers])
