"""A live queue as a scenario (``batch-quota snapshot``): ``simulate`` then continues from now.

Now is time 0. Jobs on capacity (SCHEDULED, STARTING, RUNNING) carry ``status``,
``started_at`` (<= 0) and ``remaining``; waiting jobs (SUBMITTED, PENDING, RUNNABLE) are
submitted at 0 in the order AWS created them, which keeps the scheduler's FIFO order.
The account does not know how long a job still runs, so each job says which estimate
was used: a per-share estimate from history, the payload's
``StoppingCondition.MaxRuntimeSeconds`` (an upper bound), or ``--assume-remaining``.
GetJobQueueSnapshot is a cross-check only: its front of queue covers the first 100
RUNNABLE jobs and its utilisation the top shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from policy_engine.adapters.aws import service_jobs
from policy_engine.adapters.aws.account import read_account
from policy_engine.adapters.aws.clients import Api, AwsError, AwsErrors, Shape
from policy_engine.foundation.diagnostics import Problem
from policy_engine.foundation.model import JobQueue, Topology, share_id
from policy_engine.foundation.units import duration_text
from policy_engine.inputs import safe_yaml
from policy_engine.inputs.loading import LoadError, topology_from_data

if TYPE_CHECKING:
    from policy_engine.adapters.aws.training_plans import PlansRead

ESTIMATE_HISTORY, ESTIMATE_MAX_RUNTIME, ESTIMATE_ASSUMED = "history", "max-runtime", "assumed"
#: A job's training plan in a scenario's job entry (a plan of the topology, by name).
PLAN_COLUMN = "training_plan"


@dataclass
class Snapshot:
    queue: str
    region: str
    taken_at_ms: int
    topology: dict[str, Any]
    jobs: list[dict[str, Any]] = field(default_factory=list)
    #: Per job (same order): which estimate gave its remaining work.
    estimates: list[str] = field(default_factory=list)
    cross_check: list[str] = field(default_factory=list)
    #: Scheduler invariants the live state already breaks (usage above the environment): reported, kept as read.
    violations: list[str] = field(default_factory=list)

    def to_yaml(self) -> str:
        from datetime import UTC, datetime

        stamp = datetime.fromtimestamp(self.taken_at_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines = [f"# snapshot of job queue {self.queue} (Region {self.region}) at {stamp} by batch-quota snapshot",
                 "# time 0 is the snapshot; started_at <= 0 is when a job on capacity was placed",
                 *(f"# cross-check: {line}" for line in self.cross_check),
                 *(f"# impossible state: {line}" for line in self.violations)]
        body = safe_yaml.dump({"topology": self.topology})  # quoted where YAML 1.2 would read a name as a number
        out = ["\n".join(lines), body.rstrip("\n"), "jobs:" if self.jobs else "jobs: []"]
        for job, estimate in zip(self.jobs, self.estimates, strict=True):
            text = safe_yaml.dump(job, default_flow_style=True, width=10_000).strip()
            out.append(f"  - {text}  # remaining: {estimate}")
        return "\n".join(out) + "\n"


def take_snapshot(api: Api, queue: str, now_ms: int, assume_remaining: float,
                  per_share_estimate: Mapping[str, float] | None = None, workers: int = 8,
                  plans: PlansRead | None = None) -> Snapshot:
    """Read ``queue``'s topology and its waiting and running jobs; raise ``AwsError`` on any failed call.

    ``plans``: the account's training plans (``training_plans.read_plans``), written into the topology with their
    windows in seconds from the snapshot (its time 0); a job whose payload names one of them says so."""
    read = read_account(api, [queue])
    if plans is not None:
        read.errors += plans.errors
        if plans.plans:
            read.data["training_plans"] = [_from_now(plan, now_ms) for plan in plans.plans]
    errors = read.missing_errors(api.region) + read.errors
    errors += [AwsError("DescribeJobQueues", f"job queue {name}", f"cannot be snapshotted: {why}", "NotQuotaQueue")
               for name, why in read.skipped]
    if errors:  # each failure once, as it was raised (never wrapped in another line naming the same call)
        raise errors[0] if len(errors) == 1 else AwsErrors(errors)
    source = f"job queue {queue}"
    try:
        topology = topology_from_data(read.data, source)
    except LoadError as error:
        raise AwsErrors([AwsError("DescribeJobQueues", source, problem.detail if isinstance(problem, Problem)
                                  else problem, "Invalid") for problem in error.located]) from None
    model_queue = topology.job_queues[0]
    snapshot = Snapshot(model_queue.name, api.region, now_ms, read.data)
    estimates = dict(per_share_estimate or {})
    summaries = list(service_jobs.list_jobs(api, model_queue.name, service_jobs.WAITING + service_jobs.ON_CAPACITY))
    waiting = sorted((s for s in summaries if s.get("status") in service_jobs.WAITING),
                     key=lambda s: (s.get("createdAt") or 0, s["jobId"]))
    active = [s for s in summaries if s.get("status") in service_jobs.ON_CAPACITY]
    used: dict[tuple[str, str], float] = {}
    plan_names = {plan.arn: plan.name for plan in topology.training_plans if plan.arn is not None}
    for summary, job in service_jobs.describe_jobs(api, active + waiting, workers):
        row, estimate = _job_row(job, summary, model_queue, now_ms, assume_remaining, estimates)
        plan_arn = (service_jobs.payload_of(job).get("ResourceConfig") or {}).get("TrainingPlanArn")
        if isinstance(plan_arn, str) and plan_arn and plans is None:
            estimate += f"; names training plan {plan_arn}, not read (--no-training-plans): simulated without it"
        elif isinstance(plan_arn, str) and plan_arn:
            if plan_arn not in plan_names:
                raise AwsError("DescribeServiceJob", f"service job {job.get('jobName')} ({job.get('jobId')})",
                               f"its payload names training plan {plan_arn}, which ListTrainingPlans did not list "
                               "(expired, or --no-training-plans)", "UnexpectedShape")
            row[PLAN_COLUMN] = plan_names[plan_arn]
        snapshot.jobs.append(row)
        snapshot.estimates.append(estimate)
        if row["status"] in service_jobs.ON_CAPACITY:
            key = (row["share"], row["instance_type"])
            used[key] = used.get(key, 0) + row["instances"]
    live = api.call("GetJobQueueSnapshot", f"job queue {model_queue.name}", jobQueue=model_queue.name)
    snapshot.cross_check = _cross_check(live, used, waiting, model_queue.name)
    snapshot.violations = _violations(topology, model_queue, snapshot.jobs)
    return snapshot


def _from_now(plan: dict[str, Any], now_ms: int) -> dict[str, Any]:
    """A read plan with its windows' ISO times as seconds from ``now_ms`` (the snapshot's time 0)."""
    from datetime import datetime

    def seconds(text: str) -> float | int:
        return _seconds(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() - now_ms / 1000)

    windows = [dict(w, start=seconds(w["start"]), end=seconds(w["end"])) for w in plan["reserved_capacities"]]
    return dict(plan, reserved_capacities=windows)


def _violations(topology: Topology, queue: JobQueue, jobs: list[dict[str, Any]]) -> list[str]:
    """The scheduler invariants the jobs on capacity already break (usage above the environment, a share's ceiling).

    The same check ``simulate`` makes at time 0, made when the snapshot is taken; the state is kept as read.
    """
    from policy_engine.simulation.core.jobs import JobSpec, LiveState, Status
    from policy_engine.simulation.live import live_state_problems

    placed = [JobSpec(f"{index}", share_id(queue, job["share"]), job["instance_type"], job["instances"], 0, 0.0, 0.0)
              for index, job in enumerate(jobs) if job["status"] in service_jobs.ON_CAPACITY]
    return live_state_problems(topology, placed, {job.name: LiveState(Status.RUNNING, 0.0, 0.0) for job in placed})


def _job_row(job: dict[str, Any], summary: dict[str, Any], queue: JobQueue, now_ms: int, assume: float,
             estimates: Mapping[str, float]) -> tuple[dict[str, Any], str]:
    subject = f"service job {job.get('jobName')} ({job.get('jobId')})"
    share_name = job.get("quotaShareName") or summary.get("quotaShareName")
    if not share_name or queue.share(share_name) is None:
        raise AwsError("DescribeServiceJob", subject, f"quota share {share_name!r} is not a share of job queue "
                       f"{queue.name}", "UnexpectedShape")
    payload = service_jobs.payload_of(job)
    usage = service_jobs.usage_of(job, payload)
    status = job.get("status") or summary.get("status")
    row: dict[str, Any] = {"name": service_jobs.job_name(job), "share": share_name,
                           "priority": job.get("schedulingPriority") or 0, "instance_type": usage.instance_type,
                           "instances": usage.instances}
    elapsed = 0.0
    on_capacity = status in service_jobs.ON_CAPACITY
    if on_capacity:
        placed = job.get("startedAt") or job.get("scheduledAt") or summary.get("scheduledAt") or now_ms
        elapsed = max(0.0, (now_ms - placed) / 1000)
    bound = service_jobs.max_runtime(payload)
    outlived = ""
    median = estimates.get(share_name)
    if median is not None and median > elapsed:
        remaining, estimate = median - elapsed, f"{ESTIMATE_HISTORY} (share median)"
    elif bound is not None and bound > elapsed:
        remaining, estimate = bound - elapsed, f"{ESTIMATE_MAX_RUNTIME} (StoppingCondition upper bound)"
    else:
        remaining, estimate = float(assume), f"{ESTIMATE_ASSUMED} (--assume-remaining)"
    if median is not None and median <= elapsed:  # never `remaining: 0` on a median the job has outlived
        outlived += f"; ran {duration_text(elapsed)}, past its share's history median {duration_text(median)}"
    if bound is not None and bound <= elapsed:
        outlived += f"; ran {duration_text(elapsed)}, past its MaxRuntimeSeconds {duration_text(bound)}"
    estimate += outlived
    row["duration"] = _seconds(elapsed + remaining)
    row["status"] = status
    if on_capacity:
        row["started_at"] = _seconds(-elapsed)
        row["remaining"] = _seconds(remaining)
    columns = service_jobs.retry_columns(job)
    preempted = (job.get("preemptionSummary") or {}).get("preemptedAttemptCount") or 0
    if "preemption_retries" in columns and preempted:
        columns["preemption_retries"] = max(0, columns["preemption_retries"] - preempted)  # what is left of them
        estimate += f"; preempted {preempted} time(s) so far"
    row.update(columns)
    return row, estimate


def _seconds(value: float) -> float | int:
    value = round(value, 3)
    return int(value) if value == int(value) else value


#: GetJobQueueSnapshot's front of queue lists at most this many RUNNABLE jobs.
FRONT_OF_QUEUE_SIZE = 100


def _cross_check(live: Shape, used: dict[tuple[str, str], float], waiting: list[Shape], queue: str) -> list[str]:
    """Where GetJobQueueSnapshot and the listed jobs disagree; agreement is claimed only with evidence for it."""
    notes = []
    utilisation = (live.get("queueUtilization") or {}).get("quotaShareUtilization") or {}
    reported_shares = set()
    for entry in utilisation.get("topCapacityUtilization") or ():
        share = entry.get("quotaShareName")
        reported_shares.add(share)
        for usage in entry.get("capacityUsage") or ():
            reported = usage.get("quantity") or 0
            counted = used.get((share, usage.get("capacityUnit")), 0)
            if round(reported) != round(counted):
                notes.append(f"GetJobQueueSnapshot reports {share} using {reported:g} {usage.get('capacityUnit')}; "
                             f"the listed jobs use {counted:g} (jobs changed state while reading?)")
    if used and not reported_shares:
        notes.append(f"GetJobQueueSnapshot reports no utilisation, but {sum(used.values()):g} instance(s) of listed "
                     "jobs are on capacity (jobs changed state while reading?)")
    listed = {s.get("jobArn") for s in waiting}
    runnable = [s.get("jobArn") for s in waiting if s.get("status") == "RUNNABLE"]
    front = [j.get("jobArn") for j in (live.get("frontOfQueue") or {}).get("jobs") or ()]
    absent = [arn for arn in front if arn not in listed]
    if absent:
        notes.append(f"{len(absent)} job(s) at the front of job queue {queue} were not listed as waiting "
                     f"(first: {absent[0]})")
    unfronted = [arn for arn in runnable[:FRONT_OF_QUEUE_SIZE] if arn not in set(front)]
    if len(front) < FRONT_OF_QUEUE_SIZE and unfronted:
        notes.append(f"{len(unfronted)} listed RUNNABLE job(s) are missing from GetJobQueueSnapshot's front of "
                     f"job queue {queue} (first: {unfronted[0]}; jobs changed state while reading?)")
    if not notes:
        evidence = []
        if reported_shares:
            evidence.append(f"usage of its top {len(reported_shares)} share(s)")
        if front:
            evidence.append(f"front of queue ({len(front)} job(s))")
        notes.append("GetJobQueueSnapshot agrees with the listed jobs: " + " and ".join(evidence) if evidence else
                     "GetJobQueueSnapshot and the listed jobs are both empty: nothing on capacity, nothing RUNNABLE")
    return notes
