"""Coupled joints: mimic joints (constant coupling), closed kinematic loops and
parallel robots (Khalil 2010 §2.2, §4, §5). The tree's algorithms run on the
joints of the spanning tree; this package maps them to the active joints."""
