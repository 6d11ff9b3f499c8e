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

Effort-rate checks are noise-aware: the measured effort is differentiated by the
same Savitzky-Golay filter, its noise estimated from the data (MAD of second
differences), and a sample violates only beyond ``limit + 5 sigma_rate``
(docs/bag.md, "Effort-rate checks").

Memory stays bounded: samples are processed in chunks (``--chunk``) with
overlap for the filter, series are appended as they come, and the
statistics are running sums; plots use at most ``--plot-points`` points.
Speed: raw messages are decoded a batch at a time by layout (numpy views of
their bytes, checked against rosbags), the CSV formatted by ``orjson``.

Outputs in ``--out``: ``report.html`` (self-contained) and ``report.md``,
``violations.csv`` (one row per interval), ``joint_<name>.png`` (measured vs
model vs command, residual, the checked effort rate with limits, intervals
shaded; time from the first sample, efforts in N m or N), and with ``--series``
``series.parquet`` or ``series.csv`` (every sample); all stamped with the
version, command line and input digests.

The pipeline, one stage per module: ``options`` (what the user asked for) →
``sources`` (raw messages: rosbags, or a truncated MCAP) → ``decoding``
(batches of raw messages → arrays) → ``reading`` (joint states in model
order, held commands) →
``differentiation`` (Savitzky-Golay derivatives of a uniform segment, noise
estimates) → ``analysis`` (chunking, model evaluation on the batch core;
``series``: the per-sample output) → ``statistics`` (running residuals, limit
violations) → ``report`` (plots, ``violations.csv``, ``report.md``; ``page``:
``report.html``); ``cli`` is ``main(argv) -> int``.
"""

from rnea_ros.tools.bag.analysis import Analysis, analyse
from rnea_ros.tools.bag.cli import main
from rnea_ros.tools.bag.options import Options

__all__ = ["Analysis", "Options", "analyse", "main"]
