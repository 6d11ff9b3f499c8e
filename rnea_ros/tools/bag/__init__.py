"""``rnea-bag``: model torques, torque rates and limit violations from a recorded bag.

Reads a rosbag2 (MCAP or sqlite3) or a ROS 1 bag with ``rosbags`` (no ROS
install needed; a truncated MCAP up to its cut with ``mcap``),
takes the robot from ``--urdf`` or the bag's ``/robot_description``, and for
every valid ``sensor_msgs/JointState`` sample computes, on the batch core:
``q_dot`` (recorded, or differentiated), ``q_ddot`` and ``q_dddot`` by
Savitzky-Golay differentiation, the model torque ``tau = ID(q, q_dot,
q_ddot)``, gravity ``g(q)`` and ``tau_dot`` (our recursive derivative). The
measured effort (the JointState ``effort`` field) and the commanded effort
(``std_msgs/Float64MultiArray`` in ``--joints`` order, held until the next
command, aligned on receive time) are compared with the model.

Savitzky-Golay: a centred window of ``--window`` seconds and polynomial order
``--order`` (>= 3 for the jerk). It has no lag inside the data (the fit is
centred); the first and last half-window are fitted one-sidedly. Noise gain:
a white noise of deviation ``s`` on ``q`` gives about ``s * c_k / (W dt)^k``
on the k-th derivative (``c_k`` of order 1-10 for orders 3-4), so widen the
window for noisy encoders. Sampling is assumed near-uniform: a hole of more
than 1.5 nominal periods (a lost or skipped message) splits the data into
segments differentiated apart; gaps of more than 5 periods are reported.

Memory stays bounded: samples are processed in chunks (``--chunk``) with
overlap for the filter, series are appended to the CSV as they come, and the
statistics are running sums; plots use at most ``--plot-points`` points.
Speed: raw messages are decoded a batch at a time by layout (numpy views of
their bytes, checked against rosbags), the CSV formatted by ``orjson``.

Outputs in ``--out``: ``series.csv`` (every sample), ``joint_<name>.png``
(measured vs model vs command, residual, ``tau_dot`` with limits; time from
the bag's start, efforts in N m or N),
``report.md`` (tables and plots).

The pipeline, one stage per module: ``options`` (what the user asked for) →
``sources`` (raw messages: rosbags, or a truncated MCAP) → ``decoding``
(batches of raw messages → arrays) → ``reading`` (joint states in model
order, held commands) →
``differentiation`` (Savitzky-Golay derivatives of a uniform segment) →
``analysis`` (chunking, model evaluation on the batch core) → ``statistics``
(running residuals, limit violations) → ``report`` (plots, ``report.md``);
``cli`` is ``main(argv) -> int``.
"""

from rnea_ros.tools.bag.analysis import Analysis, analyse
from rnea_ros.tools.bag.cli import main
from rnea_ros.tools.bag.options import Options

__all__ = ["Analysis", "Options", "analyse", "main"]
