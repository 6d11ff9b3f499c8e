"""Contact safety (ROS-free): the generalized-momentum observer, detection with
hysteresis, isolation to a link, the contact wrench, threshold calibration
(docs/contacts.md). The core terms ``p = M qd``, ``beta = g - C^T qd`` and the frame
Jacobians are :mod:`rnea_ros.core`'s."""

from rnea_ros.control.contact.calibration import (
    propose_thresholds,
    thresholds_fragment,
    write_thresholds,
)
from rnea_ros.control.contact.detection import (
    Contact,
    ContactDetector,
    ContactEvent,
    DetectionSettings,
    contact_wrench,
    detect,
    episodes,
)
from rnea_ros.control.contact.monitor import ContactMonitor
from rnea_ros.control.contact.observer import MomentumObserver, residuals

__all__ = [
    "Contact",
    "ContactDetector",
    "ContactEvent",
    "ContactMonitor",
    "DetectionSettings",
    "MomentumObserver",
    "contact_wrench",
    "detect",
    "episodes",
    "propose_thresholds",
    "residuals",
    "thresholds_fragment",
    "write_thresholds",
]
