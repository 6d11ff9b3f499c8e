"""Embedded simulator + RNEA controller (+ robot_state_publisher when installed).

For machines without Gazebo::

    ros2 launch rnea_ros sim.launch.py                      # hold the arm against gravity
    ros2 launch rnea_ros sim.launch.py mode:=inverse_dynamics
    ros2 launch rnea_ros sim.launch.py robot:=mixed_3dof mode:=elastic \
        controller_config:=mixed_3dof_controller.yaml \
        simulator_config:=mixed_3dof_simulator.yaml          # elastic joint (hua-2024)

The module-level tables are what the launch description is built from; the
test suite checks them without ``launch`` installed.
"""

PACKAGE = "rnea_ros"

# name: (default, description)
ARGUMENTS = {
    "robot": ("arm7", "robot model: a URDF file in rnea_ros/urdf, without the .urdf suffix"),
    "mode": ("gravity", "controller mode: 'gravity', 'inverse_dynamics' or 'elastic' (needs "
             "a controller_config with elastic_file)"),
    "controller_config": ("controller.yaml",
                          "controller parameter file in rnea_ros/config (keyed rnea_controller)"),
    "simulator_config": ("simulator.yaml",
                         "simulator parameter file in rnea_ros/config (keyed rnea_simulator)"),
    "use_sim_time": ("true", "run the controller on the simulator's /clock"),
}

# The nodes: package, executable, node name, parameter-file argument.
NODES = (
    ("rnea_ros", "simulator", "rnea_simulator", "simulator_config"),
    ("rnea_ros", "controller", "rnea_controller", "controller_config"),
)
OPTIONAL_NODES = (("robot_state_publisher", "robot_state_publisher", "robot_state_publisher"),)


def generate_launch_description():
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
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
    robot_description = {"robot_description": ParameterValue(
        Command([FindExecutable(name="xacro"), " ", *urdf]), value_type=str)}
    use_sim_time = {"use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"),
                                                   value_type=bool)}
    entities = [DeclareLaunchArgument(name, default_value=default, description=description)
                for name, (default, description) in ARGUMENTS.items()]
    for package, executable, name, config in NODES:
        parameters = [PathJoinSubstitution([share, "config", LaunchConfiguration(config)]),
                      robot_description]
        if name == "rnea_controller":
            parameters += [{"mode": LaunchConfiguration("mode")}, use_sim_time]
        entities.append(Node(package=package, executable=executable, name=name,
                             parameters=parameters, output="screen"))
    for package, executable, name in OPTIONAL_NODES:
        try:
            get_package_share_directory(package)
        except (PackageNotFoundError, OSError):  # not installed, or no ament index at all
            continue
        entities.append(Node(package=package, executable=executable, name=name,
                             parameters=[robot_description, use_sim_time], output="screen"))
    return LaunchDescription(entities)
