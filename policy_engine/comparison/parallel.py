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

With workload samples (``compare --samples N``) a cluster costs more: every worker that runs one of a sample's
designs draws that sample again (in-process it is drawn once, for all its designs), and its CPU grows with the
samples and the jobs. Measured (two designs, the steady workload, compiled simulator, 2 cores, load average 6 to
14): at 100,000 jobs x 5 samples 39.9 s wall / 8.8 s CPU in-process against 49.0 s / 14.5 s on a local cluster, at
100,000 x 10 68.5 s / 19.0 s against 111.8 s / 30.7 s, at 1,000,000 x 5 336 s / 97 s against 339 s / 159 s. A
job-run costs about 9.7 µs of CPU, the cluster about 12 µs more per job and sample (5.7, 11.7 and 62 s above):
``SAMPLE_DRAW_JOB_RUNS`` job-runs, added to what the cluster must save.
"""

from __future__ import annotations

import math

#: The job-runs a parallel round must save to be worth starting a local cluster (see the module's note).
IN_PROCESS_JOB_RUNS = 200_000
#: With workload samples, what a local cluster costs beyond that per job and sample, in job-runs (12 µs of CPU
#: measured against 9.7 µs per job-run; see the module's note).
SAMPLE_DRAW_JOB_RUNS = 1.25


def local_workers(designs: int, cores: int) -> int:
    """The local cluster's worker processes: one per design, no more than the cores."""
    return max(1, min(designs, cores))


def runs_in_process(jobs: int, designs: int, cores: int, samples: int = 1) -> bool:
    """Whether ``designs`` runs of ``jobs`` jobs each finish sooner one after another in this process than on a
    local cluster of ``local_workers(designs, cores)`` processes; ``samples``: the workload samples those runs are
    spread over (``compare --samples``: each drawn again by the workers that share its designs)."""
    workers = local_workers(designs, cores)
    saved = (designs - math.ceil(designs / workers)) * jobs
    redrawn = SAMPLE_DRAW_JOB_RUNS * samples * jobs if samples > 1 else 0.0
    return workers == 1 or saved <= IN_PROCESS_JOB_RUNS + redrawn
