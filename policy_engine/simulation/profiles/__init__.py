"""Workload profiles: how each team submits work, written by hand or fitted from a history.

``spec`` is the file's schema, ``loading`` reads and resolves one against a topology, ``sampling``
draws a seeded workload from it (vectorised with numpy), ``fitting`` fits one from a job file
(scipy.stats, the ``[fit]`` extra) and ``writing`` writes one back as YAML.
"""
