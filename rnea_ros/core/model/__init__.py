"""Robot models and their builders.

``robot_model`` holds the immutable :class:`RobotModel`; ``joints`` the joint
types (free-flyer, planar, spherical besides 1-DoF) and ``MimicJoint``;
``kernel_tree`` packs a model into the 1-DoF rows the kernels run on; ``tree`` is the one
back end every builder goes through (link and joint specs → model); the
builders are ``urdf`` (our parser), ``dh`` (standard DH, Barman), ``mdh``
(modified DH, Khalil–Kleinfinger trees); ``drives`` reads rotor inertia, gear
ratio and friction from a side YAML; ``payload`` returns a model with a load
welded to a link; ``configuration`` holds the Lie-group operations on
configurations (``integrate``, ``difference``, ``neutral``, ...).
"""
