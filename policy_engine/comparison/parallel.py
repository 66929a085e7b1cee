"""Whether ``compare``'s designs are worth a local Dask cluster, when neither ``--workers`` nor ``--scheduler`` (nor
``$DASK_SCHEDULER_ADDRESS``) says where they run.

A local cluster costs a few seconds to start (its scheduler and one worker process per design, each importing the
simulator) and the workload's pickling to its workers; it saves the designs that run side by side instead of one
after another. Measured on a 2-core machine (compare of two 8-share designs, 9,300 to 307,000 jobs): one design's
run is about 15 to 20 µs of CPU per job on a light workload and up to 80 µs on a heavy one, while the cluster
added about 3 s and 20 µs of CPU per job; two designs of 9,300 jobs took 0.9 s in-process and 3.2 to 4.7 s on the
cluster, of 93,000 jobs 4.5 s and 14.8 s. So the designs run in-process when the job-runs the cluster would take
off the critical path (the designs beyond the first round, times the jobs) are at most ``IN_PROCESS_JOB_RUNS``, or
when the cluster would have one worker anyway.
"""

from __future__ import annotations

import math

#: The job-runs a parallel round must save to be worth starting a local cluster (see the module's note).
IN_PROCESS_JOB_RUNS = 200_000


def local_workers(designs: int, cores: int) -> int:
    """The local cluster's worker processes: one per design, no more than the cores."""
    return max(1, min(designs, cores))


def runs_in_process(jobs: int, designs: int, cores: int) -> bool:
    """Whether ``designs`` runs of ``jobs`` jobs each finish sooner one after another in this process than on a
    local cluster of ``local_workers(designs, cores)`` processes."""
    workers = local_workers(designs, cores)
    saved = (designs - math.ceil(designs / workers)) * jobs
    return workers == 1 or saved <= IN_PROCESS_JOB_RUNS
