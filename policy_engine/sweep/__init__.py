"""What-if sweeps and share tuning: many replays of one scenario, in parallel on Dask.

``grammar`` (the ``--vary`` paths and values), ``grid`` (candidates), ``candidate``
(one candidate's topology, settings and workload), ``evaluate`` (check, then simulate),
``expressions`` (objectives and constraints), ``executor`` (in-process or Dask),
``dataset`` (Parquet part files and resume), ``tune`` (optuna), ``report`` (HTML),
``split`` (one simulation's queues in parallel).
"""
