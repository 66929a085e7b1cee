"""Read a workload profile and resolve it against a topology, reporting every problem at once.

A problem is one line, ``FILE[:LINE]: shares.SHARE.FIELD: rule``, exit 2 at the command: a share the
topology lacks, an instance type the share has no limit for, a size no share of it can ever run.
"""

from __future__ import annotations

import difflib
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from policy_engine.foundation.diagnostics import LoadError, Problem, line_of
from policy_engine.foundation.model import Topology
from policy_engine.inputs import input_files
from policy_engine.inputs.reading import RawProblem, read_document, to_problems
from policy_engine.inputs.schema_errors import describe
from policy_engine.simulation.profiles.spec import (
    Bursts,
    EarlyFailures,
    FitRecord,
    LeadTime,
    Night,
    PlanUse,
    RunTime,
    ShareProfile,
    WorkloadProfile,
)


@dataclass(frozen=True)
class ResolvedProfile:
    """A profile whose share names are the topology's ``QUEUE/SHARE`` and whose instance types it has."""

    shares: Mapping[str, ShareProfile]
    timezone: str = "UTC"
    source: str = "<profile>"
    #: what ``night_before`` means for plan jobs
    night: Night = field(default_factory=Night)

    def instance_weights(self, topology: Topology, share_id: str) -> dict[str, float]:
        """The share's instance types and their weights: the profile's, else the share's limits of each type."""
        given = self.shares[share_id].instance_types
        if given is not None:
            return {t: w for t, w in given.items() if w > 0}
        queue, _, name = share_id.partition("/")
        share = topology.queue(queue).share(name)  # type: ignore[union-attr]
        return {t: float(n) for t, n in share.capacity.items() if n > 0}  # type: ignore[union-attr]


def load_profile(path: str | Path, topology: Topology) -> ResolvedProfile:
    """Read ``path`` (YAML or JSON) and resolve it against ``topology``; ``LoadError`` lists every problem."""
    path, data, lines, found = read_document(path, input_files.PROFILE, "a workload profile")
    return profile_from_data(data, str(path), lines, found, topology)


def profile_from_data(data: Any, source: str, lines: Mapping[tuple[str | int, ...], int],
                      found: list[RawProblem], topology: Topology) -> ResolvedProfile:
    """Validate plain data into a ``ResolvedProfile`` or raise ``LoadError`` (file order, one line each)."""
    problems: list[RawProblem] = list(found)
    if not isinstance(data, dict):
        raise LoadError([*to_problems(source, problems, data),
                         Problem(source, None, (), "expected a mapping with shares: (see docs/workloads.md)")])
    if "service_environments" in data or "job_queues" in data:
        raise LoadError([Problem(source, None, (), "this is a topology; a workload profile has shares: "
                                 "(see docs/workloads.md)")])
    profile = None
    try:
        profile = WorkloadProfile.model_validate(data)
    except ValidationError as error:
        unreadable = {p.loc for p in problems}  # reading said what is wrong there: not also "wrong type"
        problems += [p for p in _schema_problems(error, lines) if p.loc not in unreadable]
    if profile is not None:
        problems += _against_topology(profile, topology, lines)
    if problems:
        raise LoadError(to_problems(source, problems, data))
    assert profile is not None
    resolved = {}
    for ref, share in profile.shares.items():
        share_id = topology.find_share(ref).share_id
        assert share_id is not None
        if share.training_plans:  # a plan named by its ARN is kept by its name, as a job file's rows are
            plans = {topology.plan(name).name: use for name, use in share.training_plans.items()}  # type: ignore[union-attr]
            share = share.model_copy(update={"training_plans": plans})
        resolved[share_id] = share
    return ResolvedProfile(resolved, profile.timezone, source, profile.night or Night())


def _schema_problems(error: ValidationError, lines: Mapping[tuple[str | int, ...], int]) -> list[RawProblem]:
    """Pydantic's errors in the author's words; a typo's "did you mean X" is not also reported as X missing."""
    errors = [(tuple(p for p in item["loc"] if not (isinstance(p, str) and p in _UNION_TAGS)), item)
              for item in error.errors()]
    keyed = [(tuple(p for p in loc if p != "[key]"), "[key]" in loc, item)  # a mapping's key is wrong, not its value
             for loc, item in errors]
    suggested = {(*loc[:-1], match) for loc, _, item in keyed if item["type"] == "extra_forbidden"
                 for match in difflib.get_close_matches(str(loc[-1]), _fields(loc), n=1)}
    return [RawProblem(line_of(lines, loc), loc, ("the key: " if key else "") + describe(item, _fields(loc)))
            for loc, key, item in keyed if not (item["type"] == "missing" and loc in suggested)]


#: The model a key of the file leads to: ``shares.NAME`` is a share, then its nested records.
_NESTED: dict[tuple[type[BaseModel], str], type[BaseModel]] = {
    (ShareProfile, "run_time"): RunTime, (ShareProfile, "bursts"): Bursts,
    (ShareProfile, "early_failures"): EarlyFailures, (RunTime, "fit"): FitRecord, (WorkloadProfile, "night"): Night,
    (PlanUse, "lead"): LeadTime, (PlanUse, "run_time"): RunTime, (LeadTime, "fit"): FitRecord,
}
#: Keys whose value is a mapping of names to records: ``training_plans.PLAN`` is a ``PlanUse``.
_MAPPED: dict[tuple[type[BaseModel], str], type[BaseModel]] = {(ShareProfile, "training_plans"): PlanUse}


def _fields(loc: tuple[str | int, ...]) -> list[str]:
    """The field names of the model that owns the last key of ``loc`` (for "did you mean")."""
    model: type[BaseModel] = WorkloadProfile
    parts = list(loc[:-1])
    if parts[:1] == ["shares"]:
        if len(parts) == 1:
            return []
        model, parts = ShareProfile, parts[2:]
    index = 0
    while index < len(parts):
        part = str(parts[index])
        mapped = _MAPPED.get((model, part))
        if mapped is not None:  # the next part is a name of the mapping
            if index + 1 == len(parts):
                return []
            model, index = mapped, index + 2
            continue
        nested = _NESTED.get((model, part))
        if nested is None:
            return []
        model, index = nested, index + 1
    return list(model.model_fields)


#: Pydantic names the member of a tagged union it tried (``run_time.law.lognormal.sigma``): not a key of the file.
_UNION_TAGS = frozenset({"exponential", "lognormal", "pareto", "empirical"})


def _against_topology(profile: WorkloadProfile, topology: Topology,
                      lines: Mapping[tuple[str | int, ...], int]) -> list[RawProblem]:
    out: list[RawProblem] = []

    def add(loc: tuple[str | int, ...], message: str) -> None:
        out.append(RawProblem(line_of(lines, loc), loc, message))

    try:
        zoneinfo.ZoneInfo(profile.timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        add(("timezone",), f"unknown time zone {profile.timezone!r} (an IANA name such as UTC or Europe/Paris)")
    seen: dict[str, str] = {}
    for ref, share in profile.shares.items():
        match = topology.find_share(ref)
        if match.share_id is None:
            add(("shares", ref), str(match.error))
            continue
        if match.share_id in seen:
            add(("shares", ref), f"names the same share as {seen[match.share_id]!r}")
            continue
        seen[match.share_id] = ref
        model = topology.queue(match.queue).share(match.share)  # type: ignore[arg-type, union-attr]
        assert model is not None
        for instance_type in share.instance_types or {}:
            if instance_type not in model.capacity:
                have = ", ".join(model.capacity) or "none"
                add(("shares", ref, "instance_types", instance_type),
                    f"{match.share_id} has no limit for {instance_type} (its instance types: {have})")
        named: dict[str, str] = {}
        for name, use in (share.training_plans or {}).items():
            plan = topology.plan(name)
            if plan is not None and plan.name in named:
                add(("shares", ref, "training_plans", name), f"names the same plan as {named[plan.name]!r}")
                continue
            if plan is not None:
                named[plan.name] = name
            out += _plan_problems(topology, ref, match.share_id, model.capacity, share, name, use, lines)
    return out


def _plan_problems(topology: Topology, ref: str, sid: str, capacity: Mapping[str, int], share: ShareProfile,
                   name: str, use: PlanUse, lines: Mapping[tuple[str | int, ...], int]) -> list[RawProblem]:
    """A plan the topology lacks, of a type the share has no limit for, or a size larger than its largest window."""
    at: tuple[str | int, ...] = ("shares", ref, "training_plans", name)
    plan = topology.plan(name)
    if plan is None:
        known = ", ".join(p.name for p in topology.training_plans) or "none defined"
        return [RawProblem(line_of(lines, at), at, f"no training plan {name!r} in the topology (known: {known})")]
    if capacity.get(plan.instance_type, 0) <= 0:
        return [RawProblem(line_of(lines, at), at, f"plan {plan.name} reserves {plan.instance_type}, for which {sid} "
                                                   "has no limit: none of its jobs could run on it")]
    largest = max((w.instances for w in plan.reserved_capacities), default=0)
    sizes = use.sizes if use.sizes is not None else share.sizes
    too_big = sorted(size for size, weight in sizes.items() if weight > 0 and size > largest)
    if too_big:
        where = (*at, "sizes") if use.sizes is not None else at
        whose = "" if use.sizes is not None else " (the share's sizes; give the plan its own sizes:)"
        return [RawProblem(line_of(lines, where), where, f"size(s) {', '.join(map(str, too_big))} do not fit plan "
                                                         f"{plan.name}, whose largest window has {largest} "
                                                         f"instance(s){whose}")]
    return []
