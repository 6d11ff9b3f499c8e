"""Rigid-body algorithms on a :class:`~rnea_ros.core.model.robot_model.RobotModel`.

One algorithm per module: ``rnea`` (inverse dynamics, gravity, internal
wrenches), ``crba`` (mass matrix), ``coriolis`` (C and C·x), ``aba``
(articulated-body forward dynamics), ``forward_dynamics`` (mass-matrix based),
``gfd`` (τ̇ and τ̈ by differentiating the recursion, Guarino Lo Bianco 2009),
``kinematics`` (poses, twists, energies), ``momentum`` (centre of mass,
centroidal momentum), ``moving_base`` (Khalil §7.1), ``floating_base`` (§7.2);
``rnea_expanded`` runs RNEA on the kernel tree of models with multi-DoF or mimic
joints. Each algorithm ``X.py`` is the readable face (equations, checks, dispatch);
its numba kernels live in ``_X_jit.py`` beside it (``rnea.py`` / ``_rnea_jit.py``,
including the batch kernels).
"""
