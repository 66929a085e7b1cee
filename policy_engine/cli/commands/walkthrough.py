"""``batch-quota walkthrough``: replay AWS's three-step quota-management example, step by step.

Three ``ml.g5.xlarge`` shared by QS1 (LEND_AND_BORROW, +200 %, in-share preemption),
QS2 (LEND) and QS3 (RESERVE): borrowing, cross-share reclaim, then in-share
preemption after a priority raise. ``scenarios/walkthrough.yaml`` is the same
scenario as a file (a test keeps them equal).
"""

from __future__ import annotations

import sys

import click

from policy_engine.inputs.examples import INSTANCE_TYPE, example_topology
from policy_engine.reports.kit.subjects import WalkthroughStep
from policy_engine.reports.registry import WALKTHROUGH_FORMATS
from policy_engine.simulation.core.engine import Engine, PriorityUpdate
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.results.records import SimulationResult, build_result

HOUR = 3600

JOBS = (
    JobSpec("qs1_job_high", "training/QS1", INSTANCE_TYPE, 1, 3, 0, HOUR),
    JobSpec("qs1_job_med", "training/QS1", INSTANCE_TYPE, 1, 2, 0, HOUR),
    JobSpec("qs1_job_low", "training/QS1", INSTANCE_TYPE, 1, 1, 0, HOUR),
    JobSpec("qs2_job_1", "training/QS2", INSTANCE_TYPE, 1, 1, 100, HOUR),
)
UPDATES = (PriorityUpdate(200, "qs1_job_low", 4),)

#: (time, title, what AWS's example says should happen)
STEPS = (
    (0, "Step 1: submit high (3), med (2), low (1) to QS1",
     "high runs on QS1's instance, med borrows QS2's idle one, low waits (QS3 reserves its own)"),
    (100, "Step 2: submit qs2_job_1 to QS2",
     "cross-share preemption: QS2 reclaims its instance, qs2_job_1 runs, med goes back to RUNNABLE"),
    (200, "Step 3: raise qs1_job_low to priority 4 (UpdateServiceJob)",
     "in-share preemption: low runs, high goes back to RUNNABLE"),
)


def replay() -> list[tuple[int, str, str, SimulationResult]]:
    """Run the example and snapshot it after each step (the test asserts on this)."""
    engine = Engine(example_topology(), JOBS, UPDATES)
    snapshots = []
    for time, title, expected in STEPS:
        engine.run(until=time)
        snapshots.append((time, title, expected, build_result(engine)))
    return snapshots


@click.command("walkthrough")
@WALKTHROUGH_FORMATS.option()
def command(output_format: str) -> None:
    """Replay AWS's quota-share example (borrow, reclaim, in-share preemption) and show each job after each step."""
    steps = [WalkthroughStep(time, title, expected, result) for time, title, expected, result in replay()]
    WALKTHROUGH_FORMATS.renderer(output_format)(steps, sys.stdout)
