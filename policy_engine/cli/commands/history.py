"""``batch-quota history --queue NAME --since 30d``: the window's jobs as a workload CSV to replay.

Streams: each DescribeServiceJob result is spilled as it arrives (bounded concurrency, botocore's
retries), so tens of thousands of jobs never sit in memory. With ``--scenario FILE`` it also reads
the window's priority, share and environment changes from CloudTrail and writes a scenario that
replays the window (``replay.py``). Files appear only when complete: Ctrl-C or a failed call
leaves none (exit 130 / 2).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from policy_engine.cli.commands.aws_options import (
    aws_options,
    client_options,
    connect,
    connect_cloudtrail,
    connect_sagemaker,
    exits_on_aws_errors,
    fail_aws,
    sagemaker_unreachable,
)
from policy_engine.cli.commands.shared import EXIT_OK, SafePath, fail_input
from policy_engine.foundation.bounds import MAX_SECONDS
from policy_engine.foundation.output_files import atomic_write
from policy_engine.foundation.units import duration_text

if TYPE_CHECKING:
    from policy_engine.adapters.aws.clients import Api, ClientOptions
    from policy_engine.adapters.aws.history import HistoryStats
    from policy_engine.adapters.aws.replay import Calls
    from policy_engine.adapters.aws.trail import Trail


def _cloudtrail_unreachable() -> str | None:
    """Why CloudTrail is not read although it was asked for: Batch calls go to an endpoint, CloudTrail's would
    go to AWS (for ``batch-quota serve``, set ``AWS_ENDPOINT_URL_CLOUDTRAIL`` to the same URL)."""
    if os.environ.get("AWS_ENDPOINT_URL_BATCH") and not (os.environ.get("AWS_ENDPOINT_URL_CLOUDTRAIL")
                                                          or os.environ.get("AWS_ENDPOINT_URL")):
        return ("AWS_ENDPOINT_URL_BATCH is set and AWS_ENDPOINT_URL_CLOUDTRAIL is not: no CloudTrail endpoint "
                "for this account (for batch-quota serve, set it to the same URL)")
    return None


@click.command("history")
@click.option("--queue", required=True, metavar="NAME", help="The quota-managed job queue (name or ARN).")
@click.option("--since", default="30d", show_default=True, metavar="AGE",
              help="Jobs created in the last AGE: 30d, 12h, 90m, 3600s.")
@click.option("-o", "--output", type=SafePath(dir_okay=False), default=None,
              help="Write the CSV here; default: standard output.")
@click.option("--scenario", type=SafePath(dir_okay=False), default=None, metavar="FILE",
              help="Also write a scenario replaying the window (needs -o): the job file, the changes CloudTrail "
                   "recorded as actions, and the topology at the window's start beside it (FILE.topology.yaml).")
@click.option("--cloudtrail/--no-cloudtrail", default=True, show_default=True,
              help="Read priority, share and environment changes from CloudTrail LookupEvents.")
@click.option("--workers", type=click.IntRange(1, 64), default=8, show_default=True,
              help="DescribeServiceJob calls in flight at once.")
@aws_options
def command(queue: str, since: str, output: str | None, scenario: str | None, cloudtrail: bool, workers: int,
            **connection: Any) -> None:
    """Write QUEUE's jobs (every status) as the workload CSV `simulate` reads, with observed columns."""
    from policy_engine.adapters.aws import replay
    from policy_engine.adapters.aws.history import parse_since, write_history
    from policy_engine.adapters.aws.trail import Blind, Trail, read_trail

    try:
        window = parse_since(since)
    except ValueError:
        fail_input([f"--since: expected an age such as 30d, 12h, 90m or 3600s (at most {MAX_SECONDS:,} s), "
                    f"got {since!r}"])
    if scenario is not None and output is None:
        fail_input(["--scenario: needs -o FILE (the scenario names the job file)"])
    if scenario is not None and output is not None and Path(scenario).resolve() == Path(output).resolve():
        fail_input([f"--scenario {scenario}: the same file as -o"])
    now_ms = int(time.time() * 1000)
    if window * 1000 > now_ms:  # AWS keeps nothing from before 1970, and no timestamp could hold the window's start
        fail_input([f"--since: {since} reaches back before 1970-01-01 (at most {duration_text(now_ms / 1000)} "
                    "from now)"])
    since_ms = int(now_ms - window * 1000)
    options = client_options(workers=workers, **connection)
    with exits_on_aws_errors():
        api = connect(options)
        served = "amazonaws.com" not in (api.client.meta.endpoint_url or "")
        trail = Trail()
        if cloudtrail:
            why = _cloudtrail_unreachable()
            if why is None:
                trail = read_trail(connect_cloudtrail(options), since_ms, now_ms, submissions=True)
            else:
                from policy_engine.adapters.aws.trail import JOB_EVENTS, QUEUE_EVENTS, TOPOLOGY_EVENTS

                trail.blind.append(Blind((*JOB_EVENTS, *TOPOLOGY_EVENTS, *QUEUE_EVENTS), why))
        priorities = replay.initial_priorities(trail)
        wanted = replay.named_jobs(trail)
        watch = {change.at_ms for change in trail.changes if change.at_ms >= since_ms}
        if output is None:
            stats = write_history(api, queue, since_ms, sys.stdout, workers, now_ms=now_ms,
                                  initial_priority=priorities, wanted=wanted, served=served, watch=watch)
        else:
            with atomic_write(output, newline="") as handle:
                stats = write_history(api, queue, since_ms, handle, workers, now_ms=now_ms,
                                      initial_priority=priorities, wanted=wanted, served=served, watch=watch)
    by_status = ", ".join(f"{count:,} {status}" for status, count in sorted(stats.by_status.items()))
    click.echo(f"history of {queue}: {stats.written:,} job(s) since {since}{f' ({by_status})' if by_status else ''}; "
               f"{stats.outside_window:,} older skipped; {sum(api.calls.values()):,} API calls", err=True)
    for reason, count in stats.unusable.most_common():
        click.echo(f"not exported: {count:,} job(s): {reason}", err=True)
    if stats.t0_ms is not None:
        click.echo(f"time 0 = the first submission, {replay.stamp(stats.t0_ms)} (submitted_epoch_ms {stats.t0_ms}), "
                   f"{duration_text((stats.t0_ms - since_ms) / 1000)} after the window's start", err=True)
    if stats.duration_unknown:
        click.echo(f"duration: {stats.duration_unknown:,} job(s) did not finish an attempt: their duration is the "
                   "longest attempt, a lower bound (duration_known false)", err=True)
    if cloudtrail:
        for line in replay.unseen(trail):
            click.echo(line, err=True)
    if scenario is not None and output is not None:
        calls = replay.Calls(queue, submissions=stats.shared_instants)
        if cloudtrail and not trail.blind:
            calls = _calls(connect_cloudtrail(options), queue, trail, stats)
        _write_scenario(api, queue, trail, stats, scenario, output, since, since_ms, calls, options)
    raise SystemExit(EXIT_OK)


def _calls(api: Api, queue: str, trail: Trail, stats: HistoryStats) -> Calls:
    """The order of the calls at each instant where a change meets a submission or another change (one CloudTrail
    lookup each): the replay applies them one by one in that order, as the account did."""
    from collections import Counter

    from policy_engine.adapters.aws import replay
    from policy_engine.adapters.aws.trail import calls_at

    changes = Counter(change.at_ms for change in trail.changes if change.at_ms >= (stats.t0_ms or 0))
    instants = {at for at, count in changes.items() if count > 1} | stats.shared_instants.keys()
    instants |= {ref.created_ms for ref in stats.jobs.values()}  # a job's change moved to its submission
    with exits_on_aws_errors():
        found, failed = calls_at(api, instants)
    for reason, count in failed.items():
        click.echo(f"could not read the order of the calls at {count:,} instant(s) from CloudTrail (LookupEvents): "
                   f"{reason}: there, a job's own change is replayed after the instant's submissions, any other "
                   "before them", err=True)
    return replay.Calls(queue, found, stats.shared_instants)


def _used_plans(options: ClientOptions, stats: HistoryStats) -> tuple[list[dict[str, Any]], list[str]]:
    """The training plans the window's jobs ran on, as topology plans, and the ARNs of those that cannot be replayed
    (one ``note:`` line each, naming a job and the plan: its jobs replay on demand, ``on_demand_plans``)."""
    from policy_engine.adapters.aws.training_plans import describe_used_plans

    if not stats.plan_jobs:
        return [], []
    why = sagemaker_unreachable()
    if why is None:
        read = describe_used_plans(connect_sagemaker(options), list(stats.plan_jobs))
        plans, skipped = read.plans, read.skipped
    else:
        plans, skipped = [], [(arn, why) for arn in sorted(stats.plan_jobs)]
    for arn, reason in skipped:
        count = stats.plan_jobs[arn]
        click.echo(f"note: training plan {arn} (job {stats.plan_first_job[arn]}"
                   f"{f' and {count - 1:,} more' if count > 1 else ''}) cannot be replayed: {reason}; its jobs replay "
                   "on demand (the scenario's on_demand_plans), the job file keeps their plan", err=True)
    return plans, [arn for arn, _ in skipped]


def _write_scenario(api: Api, queue: str, trail: Trail, stats: HistoryStats, scenario: str, output: str,
                    since: str, since_ms: int, calls: Calls, options: ClientOptions) -> None:
    """The replay: the topology at time 0 beside the scenario, and the scenario naming it and the job file. The
    plans the jobs ran on are in the topology (their windows are dates: the scenario's ``start`` is time 0)."""
    from policy_engine.adapters.aws import replay
    from policy_engine.adapters.aws.account import read_account
    from policy_engine.adapters.aws.clients import AwsError
    from policy_engine.inputs import safe_yaml

    with exits_on_aws_errors():
        read = read_account(api, [queue])
    errors = read.missing_errors(api.region) + read.errors
    errors += [AwsError("DescribeJobQueues", f"job queue {name}", f"cannot be replayed: {why}", "NotQuotaQueue")
               for name, why in read.skipped]
    if errors:
        fail_aws(errors)
    queue_name = read.data["job_queues"][0]["name"]
    with exits_on_aws_errors():
        plans, on_demand = _used_plans(options, stats)
    if plans:
        read.data["training_plans"] = plans
    t0 = stats.t0_ms if stats.t0_ms is not None else since_ms
    built = replay.build_replay(read.data, queue_name, trail, t0, stats.jobs, calls)
    end_ms = max([stats.end_ms, *(change.at_ms for change in trail.changes)])
    scenario_path = Path(scenario)
    topology_path = scenario_path.with_name(scenario_path.stem + ".topology.yaml")
    jobs_ref = os.path.relpath(Path(output).resolve(), scenario_path.resolve().parent)
    header = [f"replay of job queue {queue_name} (Region {api.region}) since {since}, by batch-quota history",
              f"time 0 = the first submission, {replay.stamp(t0)}; the window ends at {replay.stamp(end_ms)} (until)",
              "topology: the account's, unwound to time 0 with the CloudTrail changes before it"]
    if on_demand:
        header.append(f"on_demand_plans: {len(on_demand)} training plan(s) the jobs name could not be described: "
                      "their jobs replay on demand")
    text = replay.scenario_text(built, topology_path.name, jobs_ref, max(0.0, (end_ms - t0) / 1000), header,
                                start_ms=t0 if plans else None, on_demand_plans=on_demand)
    with exits_on_aws_errors():
        with atomic_write(topology_path) as handle:
            handle.write(f"# job queue {queue_name} at {replay.stamp(t0)} (time 0 of {scenario_path.name})\n")
            handle.write(safe_yaml.dump(built.topology))
        with atomic_write(scenario_path) as handle:
            handle.write(text)
    for note in built.notes:
        click.echo(f"note: {note}", err=True)
    if built.moved:
        click.echo(f"note: {built.moved} job action(s) fell before their job's submission (CloudTrail records whole "
                   "seconds): moved to the submission", err=True)
    click.echo(f"scenario {scenario}: {len(built.actions):,} action(s), {len(plans)} training plan(s), topology "
               f"{topology_path}; "
               f"replay with: batch-quota simulate {scenario}", err=True)
