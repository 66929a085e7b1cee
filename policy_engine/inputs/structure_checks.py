"""Structure checks on plain topology data: sizes past what the checks analyse, duplicate names, dangling references.

They work on raw data (from a file, or ``Topology.model_dump()``), tolerating malformed parts, so they run
even when types are wrong: the loader reports them with the file's lines (exit 2) and rule BQ001 reports
the same problems for a topology built in Python. Each problem carries both its data path (for the line)
and the topology object it is about (for findings, SARIF and CDK).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from policy_engine.foundation.diagnostics import DataPath, LoadError, Named, ObjectRef, PathPart, Problem, resolve_share
from policy_engine.foundation.model import TARGET_DURATIONS, Target, Topology
from policy_engine.foundation.units import duration_text
from policy_engine.inputs.reading import RawPath, find_lone_surrogate, named_path

#: The largest topology the checks analyse, a few times AWS's own limits (50 queues, 20 shares a queue,
#: 1,000 shares, 5 instance types): the borrow graph grows with the square of the shares in a queue, so a
#: file far past AWS's limits (which could never be deployed) is refused at once instead of running for minutes.
MAX_QUEUES = 200
MAX_SHARES_PER_QUEUE = 100
MAX_SHARES = 2_000
MAX_INSTANCE_TYPES = 10


@dataclass(frozen=True)
class StructureProblem:
    """One structural problem: where it is in the data, which object it is about, and what is wrong."""

    path: DataPath
    object: ObjectRef
    message: str


def items(data: Any, key: str) -> list[tuple[int, Any]]:
    """``(index, item)`` for each item of a list under ``key`` (empty when ``data`` or the value is no list)."""
    value = data.get(key) if isinstance(data, dict) else None
    return list(enumerate(value)) if isinstance(value, list | tuple) else []


def _name(item: Any) -> str | None:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) else None


def item_part(index: int, item: Any) -> PathPart:
    """A list item in a path: by its name where it has a non-empty one (as errors show it), else by index."""
    name = _name(item)
    return Named(index, name) if name else index


def _environment_ref(index: int, item: Any) -> ObjectRef:
    name = _name(item)
    return ObjectRef.of_environment(name) if name else ObjectRef.of_environment(name or "", index=index)


def _queue_ref(index: int, item: Any) -> ObjectRef:
    name = _name(item)
    environment = item.get("service_environment") if isinstance(item, dict) else None
    environment = environment if isinstance(environment, str) else None
    return ObjectRef.of_queue(name, environment) if name else ObjectRef.of_queue(name or "", environment, index=index)


def scale_problems(data: Any) -> list[StructureProblem]:
    """Counts past what the checks analyse: one problem each, before any analysis runs."""
    beyond = "far beyond AWS's limits; the checks analyse at most"
    problems: list[StructureProblem] = []
    queues = items(data, "job_queues")
    environments = items(data, "service_environments")
    for key, ref, count in (("service_environments", ObjectRef.all_environments(), len(environments)),
                            ("job_queues", ObjectRef.all_queues(), len(queues))):
        if count > MAX_QUEUES:
            problems.append(StructureProblem((key,), ref, f"{count:,} items, {beyond} {MAX_QUEUES}"))
    total = 0
    for index, queue in queues:
        shares = items(queue, "shares")
        total += len(shares)
        at: DataPath = ("job_queues", item_part(index, queue), "shares")
        if len(shares) > MAX_SHARES_PER_QUEUE:
            problems.append(StructureProblem(at, _queue_ref(index, queue), f"{len(shares):,} quota shares in one "
                                             f"job queue, {beyond} {MAX_SHARES_PER_QUEUE}"))
        for share_index, share in shares:
            capacity = share.get("capacity") if isinstance(share, dict) else None
            if isinstance(capacity, dict) and len(capacity) > MAX_INSTANCE_TYPES:
                problems.append(StructureProblem((*at, item_part(share_index, share), "capacity"),
                                                 _queue_ref(index, queue),
                                                 f"{len(capacity)} instance types, {beyond} {MAX_INSTANCE_TYPES}"))
    if total > MAX_SHARES:
        problems.append(StructureProblem(("job_queues",), ObjectRef.all_queues(),
                                         f"{total:,} quota shares in all, {beyond} {MAX_SHARES:,}"))
    for index, environment in environments:
        capacity = environment.get("capacity") if isinstance(environment, dict) else None
        if isinstance(capacity, dict) and len(capacity) > MAX_INSTANCE_TYPES:
            problems.append(StructureProblem(("service_environments", item_part(index, environment), "capacity"),
                                             _environment_ref(index, environment),
                                             f"{len(capacity)} instance types, {beyond} {MAX_INSTANCE_TYPES}"))
    return problems


def _duplicates(path: DataPath, listed: list[tuple[int, Any]], ref: Any) -> Iterator[StructureProblem]:
    """A second item with a name already used, shown by its index (by name, both items would read the same)."""
    seen: dict[str, int] = {}
    for index, item in listed:
        name = _name(item)
        if name is None:
            continue
        if name in seen:
            yield StructureProblem((*path, index), ref(index, item),
                                   f"duplicate name {name!r} (first at [{seen[name]}])")
        else:
            seen[name] = index


def structure_problems(data: Any, unreadable: Collection[RawPath] = ()) -> list[StructureProblem]:
    """Duplicate names and dangling references: they make a topology ambiguous, not just unwise.
    A topology too large to analyse is refused here too, before its references are even looked at.
    ``unreadable``: the paths whose values reading refused (so a value said to be unreadable is not also missing)."""
    problems = scale_problems(data)
    if problems:
        return problems
    environments = items(data, "service_environments")
    problems += _duplicates(("service_environments",), environments,
                            lambda index, item: ObjectRef.of_environment(_name(item) or "", index=index))
    queues = items(data, "job_queues")
    problems += _duplicates(("job_queues",), queues,
                            lambda index, item: ObjectRef.of_queue(_name(item) or "", index=index))
    environment_names = list(dict.fromkeys(name for _, item in environments if (name := _name(item)) is not None))
    shares_by_queue: dict[str, list[str]] = {}
    for index, queue in queues:
        if not isinstance(queue, dict):
            continue
        at: DataPath = ("job_queues", item_part(index, queue))
        shares = items(queue, "shares")
        problems += _duplicates((*at, "shares"), shares, lambda _index, _item, q=(index, queue): _queue_ref(*q))
        if (name := _name(queue)) is not None:
            known = shares_by_queue.setdefault(name, [])
            known += [share_name for _, share in shares if (share_name := _name(share)) is not None]
        environment = queue.get("service_environment")
        if isinstance(environment, str) and environment not in environment_names:
            listed = ", ".join(environment_names) or "none defined"
            problems.append(StructureProblem((*at, "service_environment"), _queue_ref(index, queue),
                                             f"no service environment named {environment!r} (known: {listed})"))
    problems += plan_problems(data)
    problems += plan_share_problems(data, shares_by_queue)
    for index, guarantee in items(data, "guarantees"):
        ref = guarantee.get("share") if isinstance(guarantee, dict) else None
        if isinstance(ref, str) and (error := resolve_share(ref, shares_by_queue).error) is not None:
            problems.append(StructureProblem(("guarantees", index, "share"), ObjectRef.of_guarantee(index), error))
    problems += target_problems(data, shares_by_queue, unreadable)
    return problems


#: The figures a target may hold a share to (``model.Target``); one at least.
TARGET_CRITERIA = ("wait_p95", "wait_p50", "max_preemptions_per_job", "min_utilisation")


def _share_types(data: Any, queue_name: str, share_name: str) -> list[str]:
    """The instance types a share has a limit for (every queue so named), in declaration order."""
    found: list[str] = []
    for _, queue in items(data, "job_queues"):
        if _name(queue) != queue_name:
            continue
        for _, share in items(queue, "shares"):
            capacity = share.get("capacity") if isinstance(share, dict) else None
            if _name(share) == share_name and isinstance(capacity, dict):
                found += [str(t) for t in capacity if str(t) not in found]
    return found


def target_problems(data: Any, shares_by_queue: dict[str, list[str]],
                    unreadable: Collection[RawPath] = ()) -> list[StructureProblem]:
    """Targets naming no share (or an ambiguous one), an instance type the share has no limit for, or nothing;
    then what several targets of one share and type say together (``_goal_problems``). ``unreadable``: paths
    whose value reading refused (a criterion given but unreadable is not also "nothing")."""
    problems: list[StructureProblem] = []
    scoped: list[tuple[int, ObjectRef, tuple[str, str | None], Target]] = []
    for index, target in items(data, "targets"):
        if not isinstance(target, dict):
            continue
        ref = target.get("share")
        where = ObjectRef.of_target(index, ref if isinstance(ref, str) else None)
        if not isinstance(ref, str):
            continue
        match = resolve_share(ref, shares_by_queue)
        if match.error is not None:
            problems.append(StructureProblem(("targets", index, "share"), where, match.error))
            continue
        instance_type = target.get("instance_type")
        known_type = True
        if isinstance(instance_type, str) and match.queue is not None and match.share is not None:
            types = _share_types(data, match.queue, match.share)
            if instance_type not in types:
                known_type = False
                problems.append(StructureProblem(
                    ("targets", index, "instance_type"), where,
                    f"{match.queue}/{match.share} has no limit for instance type {instance_type!r} "
                    f"(its types: {', '.join(types) or 'none'})"))
        unknown = set(target) - {"share", "instance_type", *TARGET_CRITERIA}  # a typo is reported as one already
        given = [key for key in TARGET_CRITERIA if target.get(key) is not None or ("targets", index, key) in unreadable]
        if not unknown and not given:
            problems.append(StructureProblem(("targets", index), where,
                                             f"holds the share to nothing; give at least one of "
                                             f"{', '.join(TARGET_CRITERIA)}"))
        parsed = _target(target)
        if parsed is not None and known_type and match.queue is not None and match.share is not None:
            scoped.append((index, where, (f"{match.queue}/{match.share}", parsed.instance_type), parsed))
    return problems + _goal_problems(scoped, data)


def _target(target: dict[str, Any]) -> Target | None:
    """The target as the schema reads it (durations in seconds), or ``None`` where the schema refuses it (and says
    why itself)."""
    try:
        return Target.model_validate(target)
    except ValidationError:
        return None


def _written(data: Any, index: int, criterion: str, goal: float) -> str:
    """A goal as its file wrote it (``12h``), else as people read it (a number of seconds as ``12h 00m``)."""
    raw = dict(items(data, "targets")).get(index, {}).get(criterion)
    if isinstance(raw, str):
        return raw.strip()
    return duration_text(goal) if criterion in TARGET_DURATIONS else f"{goal:g}"


def _goal_problems(scoped: list[tuple[int, ObjectRef, tuple[str, str | None], Target]],
                   data: Any) -> list[StructureProblem]:
    """What targets of one share and instance type say together: a criterion set by two of them (different goals
    contradict each other; the same goal twice is refused too: each criterion is judged once per share and type,
    so the copy adds a second identical row and most often was meant for another share or type), and a wait_p50
    goal above the wait_p95 goal (the median never exceeds the 95th percentile, so such a p50 goal could never be
    the one missed: most likely the two were swapped)."""
    problems: list[StructureProblem] = []
    first: dict[tuple[tuple[str, str | None], str], tuple[int, float]] = {}
    for index, where, scope, target in scoped:
        share, instance_type = scope
        subject = share if instance_type is None else f"{share} on {instance_type}"
        for criterion in TARGET_CRITERIA:
            goal = getattr(target, criterion)
            if goal is None:
                continue
            key = (scope, criterion)
            if key not in first:
                first[key] = (index, goal)
                continue
            earlier, before = first[key]
            here, there = _written(data, index, criterion, goal), _written(data, earlier, criterion, before)
            if goal == before:
                message = (f"repeats targets[{earlier}]'s {criterion} of {there} for {subject}: remove one (a "
                           "criterion is judged once per share and instance type)")
            else:
                message = (f"{criterion} {here} contradicts targets[{earlier}]'s {criterion} of {there} for "
                           f"{subject}: keep one goal (a criterion is judged once per share and instance type)")
            problems.append(StructureProblem(("targets", index, criterion), where, message))
    for index, where, scope, target in scoped:
        if target.wait_p50 is None or first.get((scope, "wait_p50"), (None,))[0] != index:
            continue  # judged once, at the target that sets the scope's wait_p50 first
        p95 = first.get((scope, "wait_p95"))
        if p95 is None or not target.wait_p50 > p95[1]:
            continue
        share, instance_type = scope
        subject = share if instance_type is None else f"{share} on {instance_type}"
        other = "this target's" if p95[0] == index else f"targets[{p95[0]}]'s"
        problems.append(StructureProblem(
            ("targets", index, "wait_p50"), where,
            f"wait_p50 {_written(data, index, 'wait_p50', target.wait_p50)} is above {other} wait_p95 of "
            f"{_written(data, p95[0], 'wait_p95', p95[1])} for {subject}: the median never exceeds the 95th "
            "percentile, so this goal could never be the one missed (swapped?)"))
    return problems


def plan_problems(data: Any) -> list[StructureProblem]:
    """Training plans a job could not name unambiguously: a second plan of the same name or ARN, or an ARN
    that names another plan (its last part is the plan's name). AWS's rules on plans are rules, not these."""
    plans = items(data, "training_plans")
    problems = list(_duplicates(("training_plans",), plans,
                                lambda index, item: ObjectRef.of_plan(_name(item) or "", index=index)))
    arns: dict[str, int] = {}
    for index, plan in plans:
        arn = plan.get("arn") if isinstance(plan, dict) else None
        if not isinstance(arn, str):
            continue
        at: DataPath = ("training_plans", item_part(index, plan), "arn")
        ref = ObjectRef.of_plan(_name(plan) or "", index=None if _name(plan) else index)
        name = _name(plan)
        prefix, _, named = arn.rpartition(":training-plan/")
        if not prefix.startswith("arn:") or ":sagemaker:" not in prefix or not named:
            problems.append(StructureProblem(at, ref, f"{arn!r} is no training plan ARN (expected "
                                             "arn:aws:sagemaker:REGION:ACCOUNT:training-plan/NAME)"))
        elif name is not None and named != name:
            problems.append(StructureProblem(at, ref, f"{arn!r} names plan {named!r}, not {name!r}"))
        elif arn in arns:
            problems.append(StructureProblem(at, ref, f"duplicate ARN {arn!r} (first at [{arns[arn]}])"))
        else:
            arns[arn] = index
    return problems


def plan_share_problems(data: Any, shares_by_queue: dict[str, list[str]]) -> list[StructureProblem]:
    """A plan's ``shares`` (the shares that use or own it) name shares that exist, each once; ``idle_to: owners``
    needs them (its idle reserved hours are split between them)."""
    problems = []
    for index, plan in items(data, "training_plans"):
        if not isinstance(plan, dict):
            continue
        ref = ObjectRef.of_plan(_name(plan) or "", index=None if _name(plan) else index)
        at: DataPath = ("training_plans", item_part(index, plan))
        named = plan.get("shares")
        seen: dict[str, int] = {}
        if isinstance(named, list | tuple):
            for position, share in enumerate(named):
                if not isinstance(share, str):
                    continue
                match = resolve_share(share, shares_by_queue)
                if match.error is not None:
                    problems.append(StructureProblem((*at, "shares", position), ref, match.error))
                elif match.share_id in seen:
                    problems.append(StructureProblem((*at, "shares", position), ref,
                                                     f"{share!r} is listed twice (first at [{seen[match.share_id]}])"))
                else:
                    seen[str(match.share_id)] = position
        if plan.get("idle_to") == "owners" and not named:
            problems.append(StructureProblem((*at, "idle_to"), ref, "idle_to: owners needs the plan's shares: (the "
                                             "shares that use or own it, who pay its idle reserved hours)"))
    return problems


def topology_problems(topology: Topology) -> list[StructureProblem]:
    """The structural problems of a topology built in Python (the same checks a file gets when loaded)."""
    return structure_problems(topology.model_dump())


def validate_topology(topology: Topology, source: str = "<python>") -> Topology:
    """Apply the loader's structural checks to a topology built in Python; ``LoadError`` names each problem."""
    data = topology.model_dump()
    problems = [Problem(source, None, problem.path, problem.message) for problem in structure_problems(data)]
    if (surrogate := find_lone_surrogate(data)) is not None:
        problems.append(Problem(source, None, named_path(surrogate, data),
                                "text holds a lone surrogate, which is no character"))
    if problems:
        raise LoadError(problems)
    return topology
