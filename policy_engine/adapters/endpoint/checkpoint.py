"""Checkpoints of the endpoint's state as plain data (``--state``): a restart loads the last one and
replays only the calls logged after it, instead of every call since the account began.

A checkpoint holds the account (resources, tags, transitions under way), every job record as the
API reports it, the histories that only grow (the CloudTrail trail, the state changes ``export``
returns, priority updates, terminations), and the simulator's state. That state is only the
unfinished jobs: a finished job holds no capacity and waits in no line, so an engine rebuilt from
the unfinished ones (``Engine.adopt``, as a topology change rebuilds one) schedules as the one that
ran. For each it keeps the request (``JobSpec``), where the job is (status, priority, attempts so
far, work left, when it was placed, when it moves on), and engine-wide: the placement counter, the
``jobStateTimeLimitActions`` timers and the pending wake-ups. Compiled engine objects cannot be
pickled, and a file any SQLite client reads outlives the classes, so everything is JSON.

Written incrementally (``Store.write_checkpoint``): the job rows that changed since the previous
checkpoint (the scheduler marks every record it changes, a call marks the jobs it names), and the
rows each history gained. A restore is checked: the rebuilt engine's scheduling pass at the
checkpoint's instant must change nothing, since the engine that ran had run that pass already.
When it would (``CheckpointError``), the checkpoint is not used and the whole log is replayed.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol, cast

import orjson

from policy_engine.adapters.endpoint.base.account import Resources
from policy_engine.adapters.endpoint.base.jobs import FINAL, ServiceJob
from policy_engine.adapters.endpoint.cloudtrail import TrailEvent
from policy_engine.simulation.causes import Cause, Detail, Reason
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.events import Kind, Phase
from policy_engine.simulation.core.jobs import AttemptRecord, Job, JobSpec, Status

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.base.account import Account
    from policy_engine.adapters.endpoint.base.scheduler import Scheduler
    from policy_engine.adapters.endpoint.cloudtrail import Trail
    from policy_engine.adapters.endpoint.store import JobRow, LogChunk, Store


class Service(Protocol):
    """What a checkpoint reads and restores of the endpoint's ``service.Service`` (a protocol, so that this
    module, which the service imports, does not import it back)."""

    account: Account
    scheduler: Scheduler
    trail: Trail

#: Bumped when the layout changes: a checkpoint of another version is not used (the log is replayed).
VERSION = 1
#: The histories a checkpoint appends to, and where each lives on the service.
HISTORIES = ("trail", "events", "updates", "terminations")
#: A record's row: its fields in this order (the constructor's, then ``initial_priority``), a JSON array.
_RECORD_FIELDS = (*(f.name for f in fields(ServiceJob) if f.init), "initial_priority")
#: A job's scheduling state a rebuilt engine needs (``engine._CARRIED`` less the status, kept as its value).
_JOB_FIELDS = ("priority", "preemptions", "attempts_failed", "started_at", "placed_at", "finished_at",
               "attempt_start", "run_started", "start_order", "placed_borrowed", "remaining")


class CheckpointError(Exception):
    """The checkpoint cannot give back the state it was taken of: replay the log instead."""


@dataclass
class Marks:
    """How long each history was at the last checkpoint, and the last call it included."""

    call_seq: int = 0
    trail: int = 0
    events: int = 0
    updates: int = 0
    terminations: int = 0


def _dump(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def _detail(value: Any) -> Detail:
    """A reason's detail back from JSON (a tuple was written as a list)."""
    return tuple(value) if isinstance(value, list) else value


def _reason(value: list[Any] | None) -> Reason | None:
    return None if value is None else Reason(Cause(value[0]), _detail(value[1]))


def _reason_data(reason: Reason | None) -> list[Any] | None:
    return None if reason is None else [reason.cause.value, reason.detail]


def _histories(service: Service) -> dict[str, tuple[int, list[Any]]]:
    """Each history as (rows before the list, the list): the state changes of a restored checkpoint are read
    only when ``export`` asks (``Scheduler.events_before``)."""
    scheduler = service.scheduler
    return {"trail": (service.trail.base, service.trail.recent), "events": (scheduler.events_base, scheduler.events),
            "updates": (0, scheduler.updates), "terminations": (0, scheduler.terminations)}


# --- capture ------------------------------------------------------------------------------------------


def _job_state(job: Job, advance_at: float | None) -> dict[str, Any]:
    data: dict[str, Any] = {"spec": list(job.spec), "seq": job.seq, "status": job.status.value}
    for name in _JOB_FIELDS:
        data[name] = getattr(job, name)
    data["end_reason"] = _reason_data(job.end_reason)
    data["segments"] = [list(segment) for segment in job.segments]
    data["advance_at"] = advance_at
    return data


def _engine_state(engine: Engine) -> dict[str, Any]:
    """Engine-wide: the placement counter, the time-limit timers, and pending wake-ups and timer events."""
    timers: list[list[Any]] = []
    if engine.time_limits is not None:
        for share, (head, action) in engine.time_limits.timers.items():
            timers.append([share.share_id, share.instance_type, head.seq, action.reason])
    pending: list[list[Any]] = []
    for event in sorted(engine._events):
        if event.kind is Kind.WAKE:
            pending.append([event.time, "wake", event.subject])
        elif event.kind is Kind.LIMIT and event.data.status.value not in FINAL:
            pending.append([event.time, "limit", event.subject.share_id, event.subject.instance_type,
                            event.data.seq])
    return {"now": engine.now, "start_counter": engine._start_counter, "timers": timers, "pending": pending}


def _resources_data(resources: Resources) -> dict[str, Any]:
    return {"environments": resources.environments, "policies": resources.policies, "queues": resources.queues,
            "shares": [[queue, share, record] for (queue, share), record in resources.shares.items()],
            "pending": [[kind, key, *value] for (kind, key), value in resources.pending.items()]}


def capture(service: Service, marks: Marks, call_seq: int
            ) -> tuple[dict[str, Any], list[JobRow], list[LogChunk], Marks]:
    """What changed since ``marks``: the state, the job rows to write, the history chunks, and the new marks."""
    scheduler = service.scheduler
    engine = scheduler.engine
    records = scheduler.jobs.records
    advances = engine.pending_advances()
    rows: list[JobRow] = []
    for seq in sorted(scheduler.changed):
        record = records[seq]
        job = engine.by_name.get(record.id)
        state = None if job is None or job.status.value in FINAL else _job_state(job, advances.get(record.id))
        rows.append((seq, _dump([getattr(record, name) for name in _RECORD_FIELDS]),
                     None if state is None else _dump(state)))
    histories = _histories(service)
    chunks: list[LogChunk] = []
    counts = {"jobs": len(records)}
    for kind in HISTORIES:
        start = getattr(marks, kind)
        base, rows_now = histories[kind]
        chunks.append((kind, start, list(rows_now[start - base:])))
        counts[kind] = base + len(rows_now)
    account = service.account
    state = {
        "version": VERSION,
        "resources": _resources_data(account.resources),
        "tags": account.tags,
        "topology": scheduler.topology.model_dump(mode="json", exclude_defaults=True),
        "counts": counts,
        "in_progress": [[job_id, ends, reason.cause.value, reason.detail]
                        for job_id, (ends, reason) in scheduler._in_progress.items()],
        "engine": _engine_state(engine),
        "trail_last_at": service.trail.last_at,
    }
    return state, rows, chunks, Marks(call_seq, counts["trail"], counts["events"], counts["updates"],
                                      counts["terminations"])


# --- restore ------------------------------------------------------------------------------------------


def _record(values: list[Any]) -> ServiceJob:
    record = ServiceJob(*values[:-1])
    record.initial_priority = values[-1]
    return record


def _carried_job(engine: Engine, data: dict[str, Any]) -> Job:
    """A job of the engine that ran, as ``adopt`` reads it."""
    spec = JobSpec(*data["spec"])
    share = engine.shares.get((spec.share, spec.instance_type))
    if share is None:
        raise CheckpointError(f"job {spec.name}: share {spec.share} has no {spec.instance_type} in the topology")
    job = Job(spec, data["seq"], share)
    for name in _JOB_FIELDS:
        setattr(job, name, data[name])
    job.status = Status(data["status"])
    job.end_reason = _reason(data["end_reason"])
    job.segments = tuple(AttemptRecord(*segment) for segment in data["segments"])
    return job


def _rebuild_engine(service: Service, jobs: list[dict[str, Any]], state: dict[str, Any]) -> Engine:
    """An engine on the checkpoint's topology holding its unfinished jobs; ``CheckpointError`` unless its
    scheduling pass at the checkpoint's instant changes nothing."""
    scheduler = service.scheduler
    saved = state["engine"]
    now = float(saved["now"])
    engine = scheduler._new_engine(scheduler.topology, now)
    changes: list[str] = []
    engine.on_reason = lambda at, job, before, after, reason: changes.append(f"{job.spec.name} {before} -> {after}")
    for data in sorted(jobs, key=lambda job: job["seq"]):
        if engine.adopt(_carried_job(engine, data), data["advance_at"]) is None:
            raise CheckpointError(f"job {data['spec'][0]} cannot be placed back")
    engine._start_counter = max(engine._start_counter, saved["start_counter"])
    limits = engine.time_limits
    if limits is not None:
        limits.touched.clear()  # the timers are the checkpoint's, not restarted now
    engine.run(now, close=False)
    if changes:
        raise CheckpointError(f"the rebuilt engine would change {len(changes)} job(s) at once: {changes[0]}")
    by_seq = {job.seq: job for job in engine.jobs}
    if limits is not None:
        for share_id, instance_type, seq, reason in saved["timers"]:
            share = engine.shares[(share_id, instance_type)]
            limits.timers[share] = (by_seq[seq], limits.actions[share.queue.name][reason])
    elif saved["timers"]:
        raise CheckpointError("time-limit timers without a queue that has jobStateTimeLimitActions")
    for entry in saved["pending"]:
        if entry[1] == "wake":
            engine.wake(engine.pools[entry[2]], entry[0])
        else:
            share = engine.shares[(entry[2], entry[3])]
            head = by_seq[entry[4]]
            engine.push(entry[0], Phase.LIMIT, Kind.LIMIT, share, head, head.seq)
    engine.on_reason = scheduler._on_reason
    return engine


def restore(service: Service, store: Store, state: dict[str, Any]) -> None:
    """Put the checkpoint's state into ``service`` (fresh on the stored topology); ``CheckpointError`` when it
    cannot be used."""
    from policy_engine.inputs.topology_data import topology_from_data

    if state.get("version") != VERSION:
        raise CheckpointError(f"checkpoint version {state.get('version')}, this batch-quota reads {VERSION}")
    account, scheduler, counts = service.account, service.scheduler, state["counts"]
    data = state["resources"]
    account.resources = Resources(
        environments=data["environments"], policies=data["policies"], queues=data["queues"],
        shares={(queue, share): record for queue, share, record in data["shares"]},
        pending={(kind, tuple(key) if isinstance(key, list) else key): (when, field, final)
                 for kind, key, when, field, final in data["pending"]})
    account.tags = state["tags"]
    account._problems = None
    scheduler.topology = topology_from_data(state["topology"], f"{store.path} (checkpoint topology)")
    jobs = scheduler.jobs
    texts: list[str] = []
    engines: list[str] = []
    for _, record_text, engine_text in store.checkpoint_jobs():
        texts.append(record_text)
        if engine_text is not None:
            engines.append(engine_text)
    # one JSON document each (a hundred thousand loads calls cost more than their parsing), read by orjson: a
    # restart's largest cost is reading the records, and it reads them three times faster than ``json``
    for values in orjson.loads(f"[{','.join(texts)}]"):
        jobs.add(_record(values))
    unfinished: list[dict[str, Any]] = orjson.loads(f"[{','.join(engines)}]")
    if len(jobs) != counts["jobs"]:
        raise CheckpointError(f"{len(jobs)} job rows, the checkpoint counted {counts['jobs']}")
    # the histories' rows stay JSON arrays (tuples once written, read only by ``export``)
    scheduler.events, scheduler.events_base = [], counts["events"]
    scheduler.events_before = lambda: cast(Any, store.checkpoint_log("events", counts["events"]))
    scheduler.updates = cast(Any, store.checkpoint_log("updates", counts["updates"]))
    scheduler.terminations = cast(Any, store.checkpoint_log("terminations", counts["terminations"]))
    # the trail's rows are read when a LookupEvents first needs them: checked now, so that a damaged one sets the
    # checkpoint aside here rather than failing that request
    trail_count = counts["trail"]
    try:
        stored = store.checkpoint_log_length("trail")
    except sqlite3.DatabaseError as error:
        raise CheckpointError(f"the trail's rows cannot be read ({error})") from None
    if stored < trail_count:
        raise CheckpointError(f"{stored} trail rows, the checkpoint counted {trail_count}")
    service.trail.load(trail_count, state.get("trail_last_at"),
                       lambda: list(map(TrailEvent._make, store.checkpoint_log("trail", trail_count))))
    scheduler._in_progress = {job_id: (ends, Reason(Cause(cause), _detail(detail)))
                              for job_id, ends, cause, detail in state["in_progress"]}
    scheduler.engine = _rebuild_engine(service, unfinished, state)
    scheduler.clock.set(scheduler.engine.now)
