"""Scenario files: a topology, a workload and timed actions, read and validated all at once."""
