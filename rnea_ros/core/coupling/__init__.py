"""Coupled joints: closed kinematic loops and parallel robots (Khalil 2010 §2.2,
§4, §5). The tree's algorithms run on the joints of the spanning tree; this
package maps them to the active joints. Mimic joints (a constant coupling) are
not here: they are rows of the kernel tree (:mod:`rnea_ros.core.model.joints`,
``MimicJoint``; :mod:`rnea_ros.core.expansion`)."""
