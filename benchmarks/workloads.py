"""The benchmark workloads, shared by every script: 100 shares, two shapes of load.

``steady``: Poisson arrivals at about 85 % of the cluster's throughput, exponential
durations (the simulator benchmark's original workload); ``steady95`` the same at 95 %. ``heavy``: shaped like a
production GPU cluster: lognormal durations from seconds to weeks (sigma 2.5, capped at
two weeks), 85 % of jobs on one instance and a few on 2 or 4, submissions in bursts of
about 500 jobs to one share, offered at 97 % of capacity, on a topology whose borrowers have
no ceiling: bursts to borrowers spread over lent capacity and are reclaimed, bursts to shares
that cannot borrow queue behind their 2 instances, and lines grow tens of thousands deep.
``batch-quota generate`` writes the same shape with
``--duration-distribution lognormal --duration-shape 2.5 --duration-max 1209600
--burst-mean 500 --burst-spread 600 --sizes 1:0.85,2:0.12,4:0.03``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from policy_engine.inputs.examples import large_topology
from policy_engine.simulation.inputs.generate import GenerateOptions, ShareMix, generate_jobs, write_jobs

QUEUES, SHARES, TYPES = 5, 20, 4
CAPACITY = QUEUES * TYPES * 2 * SHARES  # instances: every share owns 2 of every type
PRIORITIES = {1: 0.6, 5: 0.3, 9: 0.1}
TWO_WEEKS = 14 * 24 * 3600.0


def topology(shape: str = "steady"):
    """The benchmark topology; for ``heavy`` its borrowers have no ceiling (``borrow_limit: -1``), as teams
    that run sweeps on a production cluster do, so bursts spread over idle lent capacity and get reclaimed."""
    topo = large_topology(queues=QUEUES, shares_per_queue=SHARES, instance_types=TYPES)
    if shape != "heavy":
        return topo
    queues = tuple(queue.model_copy(update={"shares": tuple(
        share.model_copy(update={"borrow_limit": -1}) if share.borrows else share for share in queue.shares)})
        for queue in topo.job_queues)
    return topo.model_copy(update={"job_queues": queues})


def steady(jobs: int) -> GenerateOptions:
    sizes, duration = {1: 0.7, 2: 0.3}, 3600.0
    rate = 0.85 * CAPACITY / (1.3 * duration) * 3600
    return GenerateOptions(jobs=jobs, arrival_rate=rate, sizes=sizes, duration_mean=duration,
                           priorities=PRIORITIES, seed=7, share_mix=ShareMix.UNIFORM)


def heavy(jobs: int) -> GenerateOptions:
    sizes, duration = {1: 0.85, 2: 0.12, 4: 0.03}, 3600.0
    mean_size = sum(size * weight for size, weight in sizes.items())
    rate = 0.97 * CAPACITY / (mean_size * duration) * 3600
    return GenerateOptions(jobs=jobs, arrival_rate=rate, sizes=sizes, duration_mean=duration,
                           duration_distribution="lognormal", duration_shape=2.5, duration_max=TWO_WEEKS,
                           burst_mean=500, burst_spread=600, priorities=PRIORITIES, seed=11,
                           share_mix=ShareMix.UNIFORM)


def steady95(jobs: int) -> GenerateOptions:
    """``steady`` offered at 95 % of the throughput (the simulator benchmark's load before it moved to 85 %,
    where the lines stop being stationary): longer lines, more preemptions per job."""
    profile = steady(jobs)
    return replace(profile, arrival_rate=profile.arrival_rate * 0.95 / 0.85)


SHAPES = {"steady": steady, "steady95": steady95, "heavy": heavy}


def workload_csv(shape: str, jobs: int, directory: Path) -> Path:
    """The jobs file of ``shape`` at ``jobs`` jobs, written once per directory."""
    path = directory / f"{shape}-{jobs}.csv"
    if not path.exists():
        write_jobs(path, generate_jobs(topology(shape), SHAPES[shape](jobs)))
    return path
