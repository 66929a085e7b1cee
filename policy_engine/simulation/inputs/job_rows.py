"""One job row (a YAML mapping, a CSV row or a JSON Lines object) checked and turned into a ``JobSpec``.

Rows are checked with plain Python, not a schema per row, because a workload may have a million
of them; each broken field is one ``Problem`` naming the row's file, line, job and field.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from policy_engine.foundation import bounds, limits
from policy_engine.foundation.diagnostics import DataPath, Named
from policy_engine.foundation.model import Topology, share_id
from policy_engine.simulation.core.jobs import (
    DURATION_KNOWN_FIELD,
    EPOCH_FIELD,
    LIVE_FIELDS,
    OBSERVED_FIELDS,
    JobSpec,
    LiveState,
    Observed,
    Status,
)
from policy_engine.simulation.inputs.input_problems import Problems, unknown_key

#: ``schedulingPriority`` bound of SubmitServiceJob / UpdateServiceJob (``limits.JOB_PRIORITY``, bounded both sides).
MAX_PRIORITY: int = limits.JOB_PRIORITY.maximum if limits.JOB_PRIORITY.maximum is not None else 0
#: Columns of a job row (YAML mapping, CSV header or JSON Lines object).
JOB_FIELDS: tuple[str, ...] = JobSpec._fields + LIVE_FIELDS + OBSERVED_FIELDS + (EPOCH_FIELD, DURATION_KNOWN_FIELD)
REQUIRED = ("name", "share", "duration")
#: Largest time accepted in a workload, in seconds: ``bounds.MAX_SECONDS``, so second 0 plus it is a valid date.
MAX_SECONDS = bounds.MAX_SECONDS
#: The most instances a job may ask for, retries or failures it may name (``bounds.MAX_INSTANCES``).
MAX_COUNT = bounds.MAX_INSTANCES
#: Shortest checkpoint interval: below a millisecond it means nothing, and work / interval would overflow.
MIN_CHECKPOINT_SECONDS = 0.001
#: Longest integer cell or value read, in digits; Python refuses to convert much longer ones.
MAX_DIGITS = 64
#: Statuses a workload row may carry: on capacity (``LiveState``) or waiting (the same as no status).
_LIVE_STATUSES = tuple(s.value for s in (Status.RUNNING, Status.STARTING, Status.SCHEDULED))
_WAITING_STATUSES = ("SUBMITTED", "PENDING", "RUNNABLE")
#: What ``observed_status`` may say: an AWS Batch job status (the simulator's, and PENDING).
OBSERVED_STATUSES: frozenset[str] = frozenset({*Status.__members__, "PENDING"})

_HUGE = 10**MAX_DIGITS
_DECIMAL = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DIGITS = re.compile(r"-?\d+")


@dataclass
class Extras:
    """Optional per-job columns kept beside the ``JobSpec``s: the live state and what was observed, by job name."""

    live: dict[str, LiveState] = field(default_factory=dict)
    observed: dict[str, Observed] = field(default_factory=dict)
    #: ``submitted_epoch_ms``: when the job was submitted, in absolute time (epoch milliseconds)
    submitted_epoch_ms: dict[str, int] = field(default_factory=dict)
    #: Jobs whose ``duration`` is only a lower bound (``duration_known: false``)
    duration_unknown: set[str] = field(default_factory=set)


class RowAt(NamedTuple):
    """Where a row is: its file and line, and its position (a list index, or the line in a job file).

    A tuple, not a dataclass: a million-row job file makes a million of them.
    """

    source: str
    line: int | None
    position: int
    in_job_file: bool = False

    def job(self, name: object) -> DataPath:
        """The row's path in problems: ``jobs[NAME]`` once it has a name, else ``jobs[3]`` or ``row 7``."""
        if isinstance(name, str) and name:
            return ("jobs", Named(self.position, name))
        return (f"row {self.position}",) if self.in_job_file else ("jobs", self.position)


class TextRow(dict[str, str]):
    """A CSV row: every value is text, so numbers come as strings that must parse exactly."""


def number(value: Any, text: bool = False) -> float | None:
    """A finite int or float, else ``None``; strings only in CSV (``text``), where they must parse exactly.

    YAML and JSON have numbers: ``"1e3"`` there is a string, a mistake, not a number.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) <= _HUGE else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if text and isinstance(value, str) and len(value) <= 2 * MAX_DIGITS and _DECIMAL.fullmatch(value):
        parsed = float(value)
        if not math.isfinite(parsed):
            return None
        return int(value) if _DIGITS.fullmatch(value) else parsed
    return None


def integer(value: Any, text: bool = False) -> int | None:
    """An int (never a float such as ``2.0``, never a bool); in CSV, digits only."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) <= _HUGE else None
    if text and isinstance(value, str) and len(value) <= MAX_DIGITS and _DIGITS.fullmatch(value):
        return int(value)
    return None


class ShareIndex:
    """A row's ``SHARE`` or ``QUEUE/SHARE`` as the canonical id and its instance types (``resolve_share``), cached."""

    #: Whether a row's ``training_plan`` must name a plan of ``topology`` (``job_files.AnyShare`` without one: any)
    plans_known = True

    def __init__(self, topology: Topology, on_demand_plans: frozenset[str] = frozenset()):
        self.topology = topology
        #: Plan names or ARNs whose jobs run on demand (a scenario's ``on_demand_plans``: plans ``history`` could not
        #: describe), and how many rows named each.
        self.on_demand_plans = on_demand_plans
        self.on_demand_jobs: Counter[str] = Counter()
        self.types = {share_id(q, s): tuple(s.capacity) for q, s in topology.shares()}
        self.cache: dict[str, tuple[str, tuple[str, ...]] | str] = {}

    def resolve(self, ref: str) -> tuple[str, tuple[str, ...]] | str:
        """``(share id, instance types)`` or an error message."""
        if ref in self.cache:
            return self.cache[ref]
        match = self.topology.find_share(ref)
        result: tuple[str, tuple[str, ...]] | str
        if match.share_id is not None:
            result = (match.share_id, self.types[match.share_id])
        elif match.candidates:
            result = match.error or ""
        else:  # the workload's message lists the shares there are
            every = list(self.types)
            known = ", ".join(every[:10]) + (f", ... ({len(every)} in all)" if len(every) > 10 else "")
            result = f"no quota share {ref!r} in the topology (known: {known or 'none defined'})"
        self.cache[ref] = result
        return result


class _Row:
    """Reads the fields of one row, adding one problem per broken field."""

    def __init__(self, row: Mapping[str, Any], at: RowAt, problems: Problems):
        self.row, self.at, self.problems = row, at, problems
        self.text = isinstance(row, TextRow)
        self.path = at.job(row.get("name"))

    def problem(self, key: str | None, message: str) -> None:
        self.problems.add(self.at.source, self.at.line, self.path + ((key,) if key else ()), message)

    def _value(self, key: str, kind: str, low: float | None, high: float | None) -> float | None:
        raw = self.row.get(key)
        if raw in (None, ""):
            return None
        parsed = integer(raw, self.text) if kind == "integer" else number(raw, self.text)
        if parsed is None:
            hint = ""
            if isinstance(raw, str) and not self.text and number(raw, True) is not None:
                hint = " (text, not a number: write it unquoted)"
            self.problem(key, f"must be {'an integer' if kind == 'integer' else 'a number'}, got {raw!r}{hint}")
            raise ValueError(key)
        if low is not None and parsed < low:
            self.problem(key, f"must be at least {low}, got {parsed!r}")
        elif high is not None and parsed > high:
            self.problem(key, f"must be at most {high}, got {parsed!r}")
        return parsed

    def number(self, key: str, low: float | None = None, high: float | None = None) -> float | None:
        """The number in ``key`` (``None`` when absent or broken; a broken one is a problem)."""
        try:
            return self._value(key, "number", low, high)
        except ValueError:
            return None

    def integer(self, key: str, low: int | None = None, high: int | None = None) -> int | None:
        try:
            found = self._value(key, "integer", low, high)
        except ValueError:
            return None
        return None if found is None else int(found)


def job_from_row(row: Mapping[str, Any], at: RowAt, shares: ShareIndex, problems: Problems,
                 extras: Extras | None = None, required: tuple[str, ...] = REQUIRED) -> JobSpec | None:
    """Validate one job row; add one problem per broken field (live and observed columns go to ``extras``)."""
    start = problems.total
    read = _Row(row, at, problems)
    name = row.get("name")
    for key in row:
        if key not in JOB_FIELDS:
            read.problem(None, unknown_key(key, JOB_FIELDS))
    for key in required:
        if row.get(key) in (None, ""):
            read.problem(key, "missing required field")
    if name not in (None, "") and not isinstance(name, str):
        read.problem("name", f"must be a string, got {name!r}")
    priority = read.integer("priority", 0, MAX_PRIORITY)
    instances = read.integer("instances", 1, MAX_COUNT)
    submit_at = read.number("submit_at", 0, MAX_SECONDS)
    duration = read.number("duration", 0, MAX_SECONDS)
    retries = read.integer("preemption_retries", 0, MAX_COUNT)
    checkpoint = read.number("checkpoint_interval", MIN_CHECKPOINT_SECONDS, MAX_SECONDS)
    attempts = read.integer("attempts", 1, 10)
    failures = read.integer("failures", 0, MAX_COUNT)
    fail_after = read.number("fail_after", 0, MAX_SECONDS)
    max_runtime = read.integer("max_runtime", 1, MAX_SECONDS)
    canonical, instance_type = "", row.get("instance_type") or None
    ref = row.get("share")
    if isinstance(ref, str) and ref:
        resolved = shares.resolve(ref)
        if isinstance(resolved, str):
            read.problem("share", resolved)
        else:
            canonical, types = resolved
            if not types:  # a share read without a topology (``job_files.AnyShare``): any type
                pass
            elif instance_type is None:
                if len(types) == 1:
                    instance_type = types[0]
                else:
                    read.problem("instance_type", f"required: share {canonical} has several instance types "
                                                  f"({', '.join(types)})")
            elif instance_type not in types:
                read.problem("instance_type", f"share {canonical} has no capacity for {instance_type!r} "
                                              f"(it has: {', '.join(types)})")
    elif ref not in (None, ""):
        read.problem("share", f"must be a string, got {ref!r}")
    plan = _training_plan(read, shares, instance_type)
    live = _live_state(read, submit_at, duration)
    observed = _observed(read)
    epoch_ms = read.integer(EPOCH_FIELD, 0, bounds.MAX_INSTANT_SECONDS * 1000)
    known = row.get(DURATION_KNOWN_FIELD)
    if known not in (None, "", True, False, "true", "false"):
        read.problem(DURATION_KNOWN_FIELD, f"must be true or false, got {known!r}")
    if problems.total > start or not isinstance(name, str) or not isinstance(instance_type, str):
        return None
    if extras is not None:
        if epoch_ms is not None:
            extras.submitted_epoch_ms[name] = epoch_ms
        if known in (False, "false"):
            extras.duration_unknown.add(name)
        if live is not None:
            extras.live[name] = live
        if observed is not None:
            extras.observed[name] = observed
    return JobSpec(name, canonical, instance_type, 1 if instances is None else instances,
                   0 if priority is None else priority, 0 if submit_at is None else submit_at,
                   0 if duration is None else duration, retries, checkpoint, 1 if attempts is None else attempts,
                   0 if failures is None else failures, fail_after, plan, max_runtime)


def _training_plan(read: _Row, shares: ShareIndex, instance_type: str | None) -> str | None:
    """``training_plan``: a topology plan by name or ARN (its name kept), of the job's instance type; any text
    without a topology (``fit`` says what it does with it); ``None`` (on demand) for a plan of the scenario's
    ``on_demand_plans``, counted."""
    ref = read.row.get("training_plan")
    if ref in (None, ""):
        return None
    if not isinstance(ref, str):
        read.problem("training_plan", f"must be a plan's name or ARN, got {ref!r}")
        return None
    if ref in shares.on_demand_plans:
        shares.on_demand_jobs[ref] += 1
        return None
    topology = shares.topology if shares.plans_known else None
    if topology is None:
        return ref
    plan = topology.plan(ref)
    if plan is None:
        known = ", ".join(p.name for p in topology.training_plans) or "none defined"
        read.problem("training_plan", f"no training plan {ref!r} in the topology (known: {known})")
        return None
    if instance_type is not None and instance_type != plan.instance_type:
        read.problem("training_plan", f"plan {plan.name} reserves {plan.instance_type}; the job runs on "
                                      f"{instance_type}")
    return plan.name


def _live_state(read: _Row, submit_at: float | None, duration: float | None) -> LiveState | None:
    """``status``/``started_at``/``remaining``: a job already on capacity at time 0, or ``None`` for a waiting one."""
    status = read.row.get("status")
    started = read.number("started_at")
    remaining = read.number("remaining", 0)
    if status in (None, "") or status in _WAITING_STATUSES:
        for key, given in (("started_at", started), ("remaining", remaining)):
            if given is not None:
                read.problem(key, f"only for a job already on capacity (status {', '.join(_LIVE_STATUSES)})")
        return None
    if status not in _LIVE_STATUSES:
        read.problem("status", f"must be one of {', '.join(_LIVE_STATUSES + _WAITING_STATUSES)}, got {status!r}")
        return None
    if started is None:
        read.problem("started_at", f"required for a {status} job: when it was placed, in seconds <= 0 (now)")
    elif started > 0:
        read.problem("started_at", f"must be <= 0 (a {status} job was placed before now), got {started!r}")
    if remaining is None:
        read.problem("remaining", f"required for a {status} job: the work seconds it has left")
    elif remaining > (work := 0 if duration is None else duration):
        read.problem("remaining", f"must be at most the job's duration ({work}), got {remaining!r}")
    if submit_at is not None and submit_at > 0:
        read.problem("submit_at", f"must be 0 for a {status} job (it was submitted before now), got {submit_at!r}")
    if started is None or remaining is None:
        return None
    return LiveState(Status(status), float(started), float(remaining))


def _observed(read: _Row) -> Observed | None:
    if not any(read.row.get(key) not in (None, "") for key in OBSERVED_FIELDS):
        return None
    start = read.number("observed_start")
    end = read.number("observed_end")
    preemptions = read.integer("observed_preemptions", 0, MAX_COUNT)
    status = read.row.get("observed_status") or None
    if status is not None and status not in OBSERVED_STATUSES:
        read.problem("observed_status", f"must be an AWS Batch job status, got {status!r}")
    if start is not None and end is not None and end < start:
        read.problem("observed_end", f"must not be before observed_start ({start}), got {end!r}")
    return Observed(start, end, preemptions, status)
