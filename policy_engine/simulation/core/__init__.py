"""The simulator's core: the event loop and everything it calls per job, and nothing else.

Exactly the modules ``setup.py`` compiles with mypyc (``compiled.COMPILED_MODULES``); they read their
inputs as values (``JobSpec``, ``SimulationSettings``, the topology) and leave reports to ``outputs``.
"""
