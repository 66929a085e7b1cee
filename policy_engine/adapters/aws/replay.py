"""A history window as a replayable scenario: the topology at its start and its changes as timed actions.

Time 0 is the window's first submission. The CloudTrail changes (``trail``) of the queue's jobs,
shares and environment become scenario actions at their times (``update_priority``,
``terminate_job``, ``update_share``, ``create_share``, ``delete_share``, ``update_environment``);
the changes up to time 0 are folded into the topology instead. The topology at time 0 starts from
the account's current one and is unwound: a share field's value at time 0 is the one the last call at
or before time 0 set (CreateQuotaShare sets them all); a field no call before time 0 set, but one
after did, is unknown: the replay starts from the value that later call set, and the gap is named.
What cannot be replayed (job queue updates) is named too, never dropped in silence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from policy_engine.adapters.aws.trail import QUEUE_EVENTS, Change, EventName, Trail
from policy_engine.inputs import api_shapes as shapes
from policy_engine.simulation.results.numbers import as_number
from policy_engine.simulation.settings import SameInstant

#: A share's fields a call may set, in the topology file's names.
SHARE_FIELDS = ("capacity", "strategy", "borrow_limit", "in_share_preemption", "state")
_SHARE_EVENTS = (EventName.CREATE_QUOTA_SHARE, EventName.UPDATE_QUOTA_SHARE, EventName.DELETE_QUOTA_SHARE)
_ENVIRONMENT_EVENTS = (EventName.CREATE_SERVICE_ENVIRONMENT, EventName.UPDATE_SERVICE_ENVIRONMENT)


@dataclass(frozen=True)
class JobRef:
    """A job of the window as the workload names it, with its submission (epoch milliseconds)."""

    name: str
    created_ms: int


#: A timed action: (epoch ms, order among the changes when CloudTrail cannot tell, the call, the action, whether it
#: was moved to its job's submission).
Timed = tuple[int, int, Change, dict[str, Any], bool]


@dataclass(frozen=True)
class Calls:
    """The order of the calls that share an instant (``trail.calls_at``), for the instants where it matters."""

    queue: str
    at: Mapping[int, Sequence[Change]] = field(default_factory=dict)
    #: how many of the queue's jobs were submitted at each instant where a change was made (``watch``)
    submissions: Mapping[int, int] = field(default_factory=dict)

    def place(self, at_ms: int, event_id: str | None) -> tuple[int, int] | None:
        """``(index among the instant's calls, this queue's submissions before it)``; ``None`` when the instant's
        order is unknown. A call not found there (``event_id`` None: moved to the instant) comes after them all."""
        seen = self.at.get(at_ms)
        if seen is None:
            return None
        submissions = 0
        for index, change in enumerate(seen):
            if change.event_id == event_id:
                return index, submissions
            if change.name is EventName.SUBMIT_SERVICE_JOB and shapes.name_from_arn(
                    str(change.request.get("jobQueue") or "")) == self.queue:
                submissions += 1
        return len(seen), submissions


@dataclass
class Replay:
    """The scenario's pieces: the topology at time 0, the actions, and what could not be replayed."""

    topology: dict[str, Any]
    actions: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Actions whose CloudTrail time (whole seconds in AWS) fell before their job's submission: moved to it.
    moved: int = 0


def job_id(ref: str) -> str:
    """A job id from an id or a service-job ARN (the SageMaker SDK passes ARNs)."""
    return ref.rsplit("service-job/", 1)[-1] if ref.startswith("arn:") else ref


def _share_key(change: Change, queue: str) -> str | None:
    """The share name a share event is about, when it is a share of ``queue``."""
    request = change.request
    if change.name is EventName.CREATE_QUOTA_SHARE:
        ref = str(request.get("jobQueue") or "")
        return str(request.get("quotaShareName") or "") if shapes.name_from_arn(ref) == queue else None
    arn = str(request.get("quotaShareArn") or "")
    head, sep, share = arn.rpartition("/quota-share/")
    return share if sep and head.rsplit("job-queue/", 1)[-1] == queue else None


def _share_fields(request: Mapping[str, Any], create: bool) -> dict[str, Any]:
    """What a CreateQuotaShare / UpdateQuotaShare request sets, in the topology file's names."""
    fields: dict[str, Any] = {}
    if "capacityLimits" in request:
        fields["capacity"] = {limit["capacityUnit"]: limit["maxCapacity"] for limit in request["capacityLimits"]}
    if "resourceSharingConfiguration" in request:
        sharing = request["resourceSharingConfiguration"] or {}
        fields["strategy"] = sharing.get("strategy")
        borrow = sharing.get("borrowLimit")
        fields["borrow_limit"] = borrow if borrow is not None and fields["strategy"] == "LEND_AND_BORROW" else None
    if "preemptionConfiguration" in request or create:
        fields["in_share_preemption"] = (request.get("preemptionConfiguration") or {}).get(
            "inSharePreemption") == "ENABLED"
    if "state" in request or create:
        fields["state"] = request.get("state") or "ENABLED"
    return fields


def _seconds(ms: int, t0_ms: int) -> float | int:
    seconds = round((ms - t0_ms) / 1000, 3)
    return int(seconds) if seconds.is_integer() else seconds


def stamp(ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC, to the millisecond."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def build_replay(current: dict[str, Any], queue: str, trail: Trail, t0_ms: int,
                 jobs: Mapping[str, JobRef], calls: Calls | None = None) -> Replay:
    """The scenario of the window from time ``t0_ms`` on: ``current`` (the account's topology mapping now, for
    ``queue`` only) unwound to ``t0_ms``, and the window's changes as actions. ``jobs``: job id -> its ref;
    ``calls``: the order of calls at the instants where changes and submissions share a millisecond."""
    queue_data = next(q for q in current["job_queues"] if q["name"] == queue)
    environment = queue_data["service_environment"]
    replay = Replay(current)
    calls = calls or Calls(queue)
    timed: list[Timed] = []
    _jobs(trail, t0_ms, jobs, timed, replay)
    _shares(trail, queue, queue_data, t0_ms, timed, replay, calls)
    _environment(trail, environment, current, t0_ms, timed, replay)
    for change in trail.of(*QUEUE_EVENTS):
        ref = str(change.request.get("jobQueue") or "")
        if shapes.name_from_arn(ref) == queue and change.at_ms >= t0_ms:
            replay.notes.append(f"{change.name} of job queue {queue} at {stamp(change.at_ms)} is not replayed "
                                "(a scenario has no job queue action)")
    replay.actions = [action for _, action in sorted(_placed(item, calls) for item in timed)]
    return replay


def _placed(item: Timed, calls: Calls) -> tuple[tuple[int, int, int], dict[str, Any]]:
    """An action's sort key (its instant, its call's place there, CloudTrail's order) and the action with its
    ``after_submissions`` (the replay's ``same_instant: one_by_one``) where submissions of the instant precede it."""
    at_ms, order, change, action, moved = item
    place = calls.place(at_ms, None if moved else change.event_id)
    if place is None:  # the order is unknown: a job's own change after its submission, others before all
        own = "update_priority" in action or "terminate_job" in action
        place = (order, calls.submissions.get(at_ms, 0) if own else 0)
    index, after = place
    if after:
        action = {"at": action["at"], "after_submissions": after,
                  **{key: value for key, value in action.items() if key != "at"}}
    return (at_ms, index, order), action


def _jobs(trail: Trail, t0_ms: int, jobs: Mapping[str, JobRef], timed: list[Timed], replay: Replay) -> None:
    for order, change in enumerate(trail.of(EventName.UPDATE_SERVICE_JOB, EventName.TERMINATE_SERVICE_JOB,
                                            EventName.TERMINATE_SERVICE_JOBS)):
        request = change.request
        if change.name is EventName.TERMINATE_SERVICE_JOBS:
            refs = [str(ref) for ref in request.get("jobs") or ()]
        else:
            refs = [str(request.get("jobId") or "")]
        for ref in refs:
            job = jobs.get(job_id(ref))
            if job is None:  # another queue's job, or one outside the window
                continue
            at_ms = change.at_ms
            moved = at_ms < job.created_ms
            if moved:
                at_ms = job.created_ms
                replay.moved += 1
            if change.name is EventName.UPDATE_SERVICE_JOB:
                body: dict[str, Any] = {"update_priority": {"job": job.name,
                                                            "priority": request.get("schedulingPriority", 0)}}
            else:
                body = {"terminate_job": {"job": job.name, "reason": str(request.get("reason") or "")}}
            timed.append((at_ms, order, change, {"at": _seconds(at_ms, t0_ms), **body}, moved))


def _shares(trail: Trail, queue: str, queue_data: dict[str, Any], t0_ms: int, timed: list[Timed], replay: Replay,
            calls: Calls) -> None:
    by_share: dict[str, list[Change]] = {}
    for change in trail.of(*_SHARE_EVENTS):
        name = _share_key(change, queue)
        if name:
            by_share.setdefault(name, []).append(change)
    shares = {share["name"]: share for share in queue_data["shares"]}
    order = list(shares)
    for name, changes in by_share.items():
        # at time 0 a change precedes the submissions, unless a submission of that instant came first
        early = [c for c in changes if c.at_ms < t0_ms or (c.at_ms == t0_ms and not _after_submissions(c, calls))]
        before = early
        after = [c for c in changes if c not in early]
        start = _state_at(shares.get(name), before, after, f"quota share {queue}/{name}", replay)
        if start is None:
            shares.pop(name, None)
        else:
            shares[name] = start
            if name not in order:
                order.append(name)
        exists = start is not None
        for change in after:
            ref = f"{queue}/{name}"
            at = _seconds(change.at_ms, t0_ms)
            if (change.name is EventName.CREATE_QUOTA_SHARE) == exists:
                continue  # a change of a share the replay does not have (named above), or a second creation
            if change.name is EventName.DELETE_QUOTA_SHARE:
                action: dict[str, Any] = {"at": at, "delete_share": {"share": ref}}
                exists = False
            elif change.name is EventName.CREATE_QUOTA_SHARE:
                action = {"at": at, "create_share": {"share": ref, **_share_fields(change.request, True)}}
                exists = True
            else:
                fields = _share_fields(change.request, False)
                if not fields:
                    continue
                action = {"at": at, "update_share": {"share": ref, **fields}}
            timed.append((change.at_ms, -1, change, action, False))  # before a job change of the instant, unless
            # CloudTrail tells their order (``Calls``)
    queue_data["shares"] = [_written(shares[name]) for name in order if name in shares]


def _after_submissions(change: Change, calls: Calls) -> int:
    place = calls.place(change.at_ms, change.event_id)
    return 0 if place is None else place[1]


def _written(share: dict[str, Any]) -> dict[str, Any]:
    """A share mapping as the topology file writes it (no borrow limit on a share that cannot borrow)."""
    out = {key: value for key, value in share.items() if value is not None}
    if out.get("in_share_preemption") is False:
        del out["in_share_preemption"]
    if out.get("state") == "ENABLED":
        del out["state"]
    return out


def _state_at(now: dict[str, Any] | None, before: list[Change], after: list[Change], subject: str,
              replay: Replay) -> dict[str, Any] | None:
    """A share's mapping at time 0 (``None``: it did not exist then), from the calls before and after it."""
    state: dict[str, Any] | None = None
    known = False
    for change in before:
        if change.name is EventName.DELETE_QUOTA_SHARE:
            state, known = None, True
        elif change.name is EventName.CREATE_QUOTA_SHARE:
            state, known = {"name": change.request.get("quotaShareName"),
                            **_share_fields(change.request, True)}, True
        elif state is not None:
            state.update(_share_fields(change.request, False))
    if known:
        if state is not None and now is not None and now.get("tags"):
            state["tags"] = now["tags"]
        return state
    # no creation or deletion seen before time 0
    first = after[0] if after else None
    if first is not None and first.name is EventName.CREATE_QUOTA_SHARE:
        return None  # created in the window
    if now is None and first is None:
        return None
    base = dict(now) if now is not None else None
    if base is None:  # deleted in the window, never seen created: its settings are unknown
        replay.notes.append(f"{subject} was deleted at {stamp(after[-1].at_ms)} and no CreateQuotaShare of it is "
                            "in CloudTrail: it is left out of the topology at time 0")
        return None
    partial = {key: value for change in before for key, value in _share_fields(change.request, False).items()}
    base.update(partial)
    later: dict[str, Any] = {}
    for change in after:
        if change.name is EventName.UPDATE_QUOTA_SHARE:
            for key, value in _share_fields(change.request, False).items():
                later.setdefault(key, value)
    unknown = [key for key in later if key not in partial]
    if unknown:
        for key in unknown:
            base[key] = later[key]
        replay.notes.append(f"{subject}: its {', '.join(unknown)} before {stamp(after[0].at_ms)} cannot be told "
                            "(no earlier CreateQuotaShare or UpdateQuotaShare in CloudTrail): the replay starts "
                            "from the value that update set")
    return base


def _environment(trail: Trail, name: str, current: dict[str, Any], t0_ms: int, timed: list[Timed],
                 replay: Replay) -> None:
    changes = [c for c in trail.of(*_ENVIRONMENT_EVENTS)
               if shapes.name_from_arn(str(c.request.get("serviceEnvironment")
                                           or c.request.get("serviceEnvironmentName") or "")) == name]
    env = next((e for e in current["service_environments"] if e["name"] == name), None)
    if env is None or not changes:
        return
    capacity: dict[str, int] | None = None
    for change in changes:
        if change.at_ms > t0_ms:
            break
        if "capacityLimits" in change.request:
            capacity = {c["capacityUnit"]: c["maxCapacity"] for c in change.request["capacityLimits"]}
    after = [c for c in changes if c.at_ms > t0_ms and "capacityLimits" in c.request]
    if capacity is None and after:
        capacity = {c["capacityUnit"]: c["maxCapacity"] for c in after[0].request["capacityLimits"]}
        replay.notes.append(f"service environment {name}: its capacity before {stamp(after[0].at_ms)} cannot be "
                            "told (no earlier call in CloudTrail): the replay starts from the value that update set")
    if capacity is not None:
        env["capacity"] = capacity
    for change in after:
        capacity_now = {c["capacityUnit"]: c["maxCapacity"] for c in change.request["capacityLimits"]}
        timed.append((change.at_ms, -1, change, {"at": _seconds(change.at_ms, t0_ms),
                                                 "update_environment": {"name": name, "capacity": capacity_now}},
                      False))
    for change in changes:
        if change.at_ms > t0_ms and "state" in change.request:
            replay.notes.append(f"UpdateServiceEnvironment of {name} at {stamp(change.at_ms)} sets its state "
                                f"{change.request['state']}: not replayed (a scenario has no environment state)")


def unseen(trail: Trail) -> Iterable[str]:
    """One line per kind of change ``history`` could not see, and what the replay lacks because of it."""
    effects = {
        EventName.UPDATE_SERVICE_JOB: "priority updates are not replayed: jobs keep their current priority",
        EventName.TERMINATE_SERVICE_JOB: "terminations are not replayed: terminated jobs run on in the replay",
        EventName.TERMINATE_SERVICE_JOBS: "bulk terminations are not replayed",
        EventName.SUBMIT_SERVICE_JOB: "the priority of updated jobs at submission is unknown: they start at their "
                                      "current priority",
        EventName.CREATE_QUOTA_SHARE: "shares created in the window are in the topology from the start",
        EventName.UPDATE_QUOTA_SHARE: "share updates are not replayed: the topology is the current one",
        EventName.DELETE_QUOTA_SHARE: "deleted shares are missing from the topology",
        EventName.CREATE_SERVICE_ENVIRONMENT: "the environment's capacity at the window's start may be unknown",
        EventName.UPDATE_SERVICE_ENVIRONMENT: "environment capacity changes are not replayed",
        EventName.UPDATE_JOB_QUEUE: "job queue changes cannot be named",
        EventName.DELETE_JOB_QUEUE: "job queue deletions cannot be named",
    }
    for blind in trail.blind:
        yield blind.line
        for name in blind.events:
            yield f"  not seen: {name}: {effects[name]}"
    if trail.unreadable:
        yield (f"{trail.unreadable} CloudTrail event(s) could not be read and are not replayed: "
               f"{trail.unreadable_reason}")


def initial_priorities(trail: Trail) -> dict[str, int]:
    """Job id -> the priority it was submitted with, for jobs whose priority changed (SubmitServiceJob events)."""
    updated = {job_id(str(c.request.get("jobId") or "")) for c in trail.of(EventName.UPDATE_SERVICE_JOB)}
    found: dict[str, int] = {}
    for change in trail.of(EventName.SUBMIT_SERVICE_JOB):
        submitted = str(change.response.get("jobId") or "")
        if submitted in updated:
            priority = change.request.get("schedulingPriority", 0)
            found[submitted] = priority if isinstance(priority, int) and not isinstance(priority, bool) else 0
    return found


def named_jobs(trail: Trail) -> set[str]:
    """Ids of the jobs the trail's job events name (the replay's actions need their workload names)."""
    ids: set[str] = set()
    for change in trail.of(EventName.UPDATE_SERVICE_JOB, EventName.TERMINATE_SERVICE_JOB):
        ids.add(job_id(str(change.request.get("jobId") or "")))
    for change in trail.of(EventName.TERMINATE_SERVICE_JOBS):
        ids.update(job_id(str(ref)) for ref in change.request.get("jobs") or ())
    return ids


def scenario_text(replay: Replay, topology_file: str, jobs_file: str, until: float, header: list[str],
                  start_ms: int | None = None, on_demand_plans: Sequence[str] = ()) -> str:
    """The scenario YAML: the topology and job files it names, the actions one per line, and where to stop;
    ``start`` (time 0 as a date, which plan windows count from) when ``start_ms`` is given, and the plans whose
    jobs replay on demand."""
    from policy_engine.inputs import safe_yaml

    lines = [f"# {line}" for line in header]
    lines += [f"# note: {note}" for note in replay.notes]
    head: dict[str, Any] = {"topology": topology_file, "jobs": jobs_file, "until": as_number(until)}
    if start_ms is not None:
        head["start"] = stamp(start_ms)
    if on_demand_plans:
        head["on_demand_plans"] = list(on_demand_plans)
    lines.append(safe_yaml.dump(head).rstrip())
    # calls are handled one at a time, each with its own scheduling pass (docs/simulator.md, ``same_instant``)
    lines.append(f"settings: {{same_instant: {SameInstant.ONE_BY_ONE.value}, millisecond_instants: true}}")
    if replay.actions:
        lines.append("actions:")
        lines += [f"  - {safe_yaml.dump(action, default_flow_style=True, width=10_000).strip()}"
                  for action in replay.actions]
    return "\n".join(lines) + "\n"
