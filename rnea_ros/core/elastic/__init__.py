"""Robots with mixed rigid and elastic joints, motors on any link (hua-2024, Khalil 2010 §6).

``model`` (:class:`ElasticModel` and its side file), ``rnea`` (hua-2024
Algorithm 1), ``fd`` (Algorithm 2), ``hybrid`` (Khalil §6.2/§6.3 recursive
forward and hybrid dynamics), ``feedforward`` (exact feedforward of an elastic
arm).
"""
