"""``batch-quota snapshot --queue NAME``: the live queue as a scenario that ``simulate`` continues from now.

Read-only: the queue's topology (as ``import``), ListServiceJobs per waiting and running
status, DescribeServiceJob per job, GetJobQueueSnapshot as a cross-check; the account's training
plans (SageMaker ListTrainingPlans, DescribeTrainingPlan; ``--no-training-plans`` skips them). Exit 2
when a call fails (nothing is written).
"""

from __future__ import annotations

import time
from typing import Any

import click

from policy_engine.cli.commands.aws_options import (
    FiniteFloat,
    aws_options,
    client_options,
    connect,
    exits_on_aws_errors,
    plans_option,
    read_account_plans,
)
from policy_engine.cli.commands.shared import EXIT_FINDINGS, EXIT_OK, SafePath, fail_input
from policy_engine.foundation.output_files import atomic_write
from policy_engine.inputs.input_files import refuse_overwriting_inputs


def now_ms() -> int:
    """The snapshot's time 0, in epoch milliseconds like the API's timestamps."""
    return int(time.time() * 1000)


@click.command("snapshot")
@click.option("--queue", required=True, metavar="NAME", help="The quota-managed job queue (name or ARN).")
@click.option("-o", "--output", type=SafePath(dir_okay=False), default=None,
              help="Write the scenario here (YAML); default: standard output.")
@click.option("--assume-remaining", type=FiniteFloat(0.0), default=3600.0, show_default=True,
              metavar="SECONDS", help="Work left for a job without MaxRuntimeSeconds or a history estimate.")
@click.option("--history", "history_csv", type=SafePath(dir_okay=False, exists=True), default=None,
              help="A `batch-quota history` CSV: each share's median run time estimates remaining work.")
@click.option("--workers", type=click.IntRange(1, 64), default=8, show_default=True,
              help="DescribeServiceJob calls in flight at once.")
@plans_option
@aws_options
def command(queue: str, output: str | None, assume_remaining: float, history_csv: str | None, workers: int,
            training_plans: bool, **connection: Any) -> None:
    """Write QUEUE's waiting and running jobs, with its topology, as a scenario starting now."""
    from policy_engine.adapters.aws.snapshot import take_snapshot

    if overwritten := refuse_overwriting_inputs({"--output": output}, [history_csv]):
        fail_input(overwritten)
    estimates = None
    if history_csv is not None:
        from policy_engine.adapters.aws.history import share_medians

        try:
            from policy_engine.inputs.api_shapes import name_from_arn

            estimates = share_medians(history_csv, name_from_arn(queue))
        except (OSError, ValueError, KeyError) as error:
            fail_input([f"{history_csv}: cannot read a history CSV: {error}"])
    with exits_on_aws_errors():
        options = client_options(workers=workers, **connection)
        api = connect(options)
        plans, plans_api = read_account_plans(options, training_plans)
        snapshot = take_snapshot(api, queue, now_ms(), assume_remaining, estimates, workers, plans)
        text = snapshot.to_yaml()
        if output is None:
            click.echo(text, nl=False)
        else:
            with atomic_write(output) as handle:
                handle.write(text)
    from policy_engine.adapters.aws.service_jobs import ON_CAPACITY

    running = sum(1 for job in snapshot.jobs if job["status"] in ON_CAPACITY)
    click.echo(f"snapshot of {snapshot.queue}: {running} job(s) on capacity, {len(snapshot.jobs) - running} waiting "
               f"({sum(api.calls.values()) + (sum(plans_api.calls.values()) if plans_api else 0)} API calls)", err=True)
    for line in snapshot.cross_check:
        click.echo(f"cross-check: {line}", err=True)
    for line in snapshot.violations:
        click.echo(f"impossible state: {line}", err=True)
    raise SystemExit(EXIT_FINDINGS if snapshot.violations else EXIT_OK)
