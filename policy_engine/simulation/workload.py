"""Scenario files: a topology, a workload and timed actions, validated all at once.

A problem is one line, ``FILE[:LINE]: OBJECT.FIELD: rule``, collected for the whole
file before anything runs (``LoadError``), so a user fixes every mistake in one go.
Job rows are checked with plain Python (not a schema per row) because a workload
may have a million of them.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from policy_engine import input_files, limits
from policy_engine.loading import (
    LoadError,
    find_lone_surrogate,
    line_of,
    load_topology,
    read_data,
    topology_from_data,
)
from policy_engine.model import Topology, share_id
from policy_engine.simulation import change_actions
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.jobs import (
    CORE_FIELDS,
    LIVE_FIELDS,
    OBSERVED_FIELDS,
    JobSpec,
    LiveState,
    Observed,
    Status,
)
from policy_engine.simulation.settings import Action, PriorityUpdate, SimulationSettings

#: ``schedulingPriority`` bound of SubmitServiceJob / UpdateServiceJob.
MAX_PRIORITY = limits.JOB_PRIORITY.maximum
#: Columns of a job row (YAML mapping, CSV header or JSON Lines object).
JOB_FIELDS: tuple[str, ...] = JobSpec._fields + LIVE_FIELDS + OBSERVED_FIELDS
#: Statuses a workload row may carry: on capacity (``LiveState``) or waiting (the same as no status).
_LIVE_STATUSES = tuple(s.value for s in (Status.RUNNING, Status.STARTING, Status.SCHEDULED))
_WAITING_STATUSES = ("SUBMITTED", "PENDING", "RUNNABLE")
_REQUIRED = ("name", "share", "duration")
_SCENARIO_KEYS = ("topology", "jobs", "actions", "settings")
#: ``SimulationSettings`` a scenario may set; ``utilisation_series`` and ``usage_log`` are report options.
_SETTINGS_KEYS = tuple(f.name for f in fields(SimulationSettings) if f.name not in ("utilisation_series", "usage_log"))
#: Report at most this many problems, then say how many more there were.
MAX_PROBLEMS = 200
#: Largest time accepted in a workload, in seconds (about 317,000 years): sums of times stay exact and finite.
MAX_SECONDS = 10**13
#: Shortest checkpoint interval: below a millisecond it means nothing, and work / interval would overflow.
MIN_CHECKPOINT_SECONDS = 0.001
#: Longest integer cell or value read, in digits; Python refuses to convert much longer ones.
MAX_DIGITS = 64


@dataclass
class Extras:
    """Optional per-job columns kept beside the ``JobSpec``s: the live state and what was observed, by job name."""

    live: dict[str, LiveState] = field(default_factory=dict)
    observed: dict[str, Observed] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    topology: Topology
    jobs: list[JobSpec]
    #: ``update_priority`` (``PriorityUpdate``) and topology changes (``ShareUpdate``, ``EnvironmentUpdate``).
    updates: list[Action] = field(default_factory=list)
    settings: SimulationSettings = field(default_factory=SimulationSettings)
    source: str = "<scenario>"
    #: Jobs already on capacity at time 0 (a snapshot of a live queue), by name.
    live: dict[str, LiveState] = field(default_factory=dict)
    #: What really happened to jobs (a history), by name: reported beside the simulated figures.
    observed: dict[str, Observed] = field(default_factory=dict)
    #: The files the scenario names (topology, jobs), which a command must not write over.
    inputs: tuple[Path, ...] = ()


class _Problems(list):
    """Problem lines; past ``MAX_PROBLEMS`` only counted, so ten million bad rows do not fill the memory."""

    dropped = 0

    def add(self, where: str, what: str) -> None:
        if len(self) < MAX_PROBLEMS:
            self.append(f"{where}: {what}")
        else:
            self.dropped += 1

    @property
    def total(self) -> int:
        return len(self) + self.dropped

    def raise_if_any(self) -> None:
        if self.total:
            shown = self[:MAX_PROBLEMS]
            if self.total > len(shown):
                shown.append(f"... and {self.total - len(shown)} more problem(s) not shown")
            raise LoadError(shown)


def _unknown(key: Any, allowed: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(key), allowed, n=1)
    return f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


_HUGE = 10**MAX_DIGITS
_DECIMAL = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DIGITS = re.compile(r"-?\d+")


class _TextRow(dict):
    """A CSV row: every value is text, so numbers come as strings that must parse exactly."""


def _number(value: Any, text: bool = False) -> float | None:
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
        number = float(value)
        if not math.isfinite(number):
            return None
        return int(value) if _DIGITS.fullmatch(value) else number
    return None


def _integer(value: Any, text: bool = False) -> int | None:
    """An int (never a float such as ``2.0``, never a bool); in CSV, digits only."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) <= _HUGE else None
    if text and isinstance(value, str) and len(value) <= MAX_DIGITS and _DIGITS.fullmatch(value):
        return int(value)
    return None


class _ShareIndex:
    """Resolves ``SHARE`` or ``QUEUE/SHARE`` to the canonical id and its instance types."""

    def __init__(self, topology: Topology):
        self.topology = topology
        self.cache: dict[str, tuple[str, tuple[str, ...]] | str] = {}

    def resolve(self, ref: str) -> tuple[str, tuple[str, ...]] | str:
        """``(share id, instance types)`` or an error message."""
        if ref in self.cache:
            return self.cache[ref]
        matches = self.topology.resolve_share(ref)
        if not matches:
            every = [share_id(q, s) for q, s in self.topology.shares()]
            known = ", ".join(every[:10]) + (f", ... ({len(every)} in all)" if len(every) > 10 else "")
            known = known or "none defined"
            result: Any = f"no quota share {ref!r} in the topology (known: {known})"
        elif len(matches) > 1:
            result = f"share {ref!r} is ambiguous ({', '.join(share_id(q, s) for q, s in matches)}); write QUEUE/SHARE"
        else:
            queue, share = matches[0]
            result = (share_id(queue, share), tuple(share.capacity))
        self.cache[ref] = result
        return result


def _job_from_row(row: Mapping[str, Any], where: str, shares: _ShareIndex, problems: _Problems,
                  extras: Extras | None = None) -> JobSpec | None:
    """Validate one job row; add one problem per broken field (live and observed columns go to ``extras``)."""
    start = problems.total
    text = isinstance(row, _TextRow)
    name = row.get("name")
    label = f"jobs[{name}]" if isinstance(name, str) and name else where.rsplit(": ", 1)[-1]
    loc = where.split(": ")[0] + f": {label}"
    for key in row:
        if key not in JOB_FIELDS:
            problems.add(loc, _unknown(key, JOB_FIELDS))
    for key in _REQUIRED:
        if row.get(key) in (None, ""):
            problems.add(f"{loc}.{key}", "missing required field")
    if name not in (None, "") and not isinstance(name, str):
        problems.add(f"{loc}.name", f"must be a string, got {name!r}")

    def value(key: str, kind, default, low: float | None = None, high: float | None = None):
        raw = row.get(key)
        if raw in (None, ""):
            return default
        parsed = kind(raw, text)
        if parsed is None:
            hint = ""
            if isinstance(raw, str) and not text and _number(raw, True) is not None:
                hint = " (text, not a number: write it unquoted)"
            problems.add(f"{loc}.{key}",
                         f"must be {'an integer' if kind is _integer else 'a number'}, got {raw!r}{hint}")
            return default
        if low is not None and parsed < low:
            problems.add(f"{loc}.{key}", f"must be at least {low}, got {parsed!r}")
        elif high is not None and parsed > high:
            problems.add(f"{loc}.{key}", f"must be at most {high}, got {parsed!r}")
        return parsed

    priority = value("priority", _integer, 0, 0, MAX_PRIORITY)
    instances = value("instances", _integer, 1, 1)
    submit_at = value("submit_at", _number, 0, 0, MAX_SECONDS)
    duration = value("duration", _number, 0, 0, MAX_SECONDS)
    retries = value("preemption_retries", _integer, None, 0)
    checkpoint = value("checkpoint_interval", _number, None, MIN_CHECKPOINT_SECONDS, MAX_SECONDS)
    attempts = value("attempts", _integer, 1, 1, 10)
    failures = value("failures", _integer, 0, 0)
    fail_after = value("fail_after", _number, None, 0, MAX_SECONDS)
    canonical, instance_type = "", row.get("instance_type") or None
    ref = row.get("share")
    if isinstance(ref, str) and ref:
        resolved = shares.resolve(ref)
        if isinstance(resolved, str):
            problems.add(f"{loc}.share", resolved)
        else:
            canonical, types = resolved
            if instance_type is None:
                if len(types) == 1:
                    instance_type = types[0]
                else:
                    problems.add(f"{loc}.instance_type", f"required: share {canonical} has several instance types "
                                                         f"({', '.join(types)})")
            elif instance_type not in types:
                problems.add(f"{loc}.instance_type", f"share {canonical} has no capacity for {instance_type!r} "
                                                     f"(it has: {', '.join(types)})")
    elif ref not in (None, ""):
        problems.add(f"{loc}.share", f"must be a string, got {ref!r}")
    live = _live_state(row, loc, value, submit_at, duration, problems)
    observed = _observed(row, loc, value, problems)
    if problems.total > start:
        return None
    if extras is not None:
        if live is not None:
            extras.live[name] = live
        if observed is not None:
            extras.observed[name] = observed
    return JobSpec(name, canonical, instance_type, instances, priority, submit_at, duration, retries, checkpoint,
                   attempts, failures, fail_after)


def _live_state(row, loc: str, value, submit_at, duration, problems: _Problems) -> LiveState | None:
    """``status``/``started_at``/``remaining``: a job already on capacity at time 0, or ``None`` for a waiting one."""
    status = row.get("status")
    started = value("started_at", _number, None)
    remaining = value("remaining", _number, None, 0)
    if status in (None, "") or status in _WAITING_STATUSES:
        for key, given in (("started_at", started), ("remaining", remaining)):
            if given is not None:
                problems.add(f"{loc}.{key}", f"only for a job already on capacity (status {', '.join(_LIVE_STATUSES)})")
        return None
    if status not in _LIVE_STATUSES:
        problems.add(f"{loc}.status", f"must be one of {', '.join(_LIVE_STATUSES + _WAITING_STATUSES)}, got {status!r}")
        return None
    if started is None:
        problems.add(f"{loc}.started_at", f"required for a {status} job: when it was placed, in seconds <= 0 (now)")
    elif started > 0:
        problems.add(f"{loc}.started_at", f"must be <= 0 (a {status} job was placed before now), got {started!r}")
    if remaining is None:
        problems.add(f"{loc}.remaining", f"required for a {status} job: the work seconds it has left")
    elif isinstance(duration, (int, float)) and remaining > duration:
        problems.add(f"{loc}.remaining", f"must be at most the job's duration ({duration}), got {remaining!r}")
    if isinstance(submit_at, (int, float)) and submit_at > 0:
        problems.add(f"{loc}.submit_at", f"must be 0 for a {status} job (it was submitted before now), "
                                         f"got {submit_at!r}")
    if started is None or remaining is None:
        return None
    return LiveState(Status(status), float(started), float(remaining))


def _observed(row, loc: str, value, problems: _Problems) -> Observed | None:
    if not any(row.get(key) not in (None, "") for key in OBSERVED_FIELDS):
        return None
    start = value("observed_start", _number, None)
    end = value("observed_end", _number, None)
    preemptions = value("observed_preemptions", _integer, None, 0)
    status = row.get("observed_status") or None
    if status is not None and status not in Status.__members__ and status != "PENDING":
        problems.add(f"{loc}.observed_status", f"must be an AWS Batch job status, got {status!r}")
    if start is not None and end is not None and end < start:
        problems.add(f"{loc}.observed_end", f"must not be before observed_start ({start}), got {end!r}")
    return Observed(start, end, preemptions, status)


#: Columns the fast CSV path understands; any other column sends the file through full validation.
_FAST_COLUMNS = frozenset(CORE_FIELDS)


def _fast_number(text: str) -> float:
    if "_" in text or text.strip() != text:  # float() is lenient; the full path reports such cells
        raise ValueError(text)
    value = float(text)
    if not (0 <= value <= MAX_SECONDS):
        raise ValueError(text)
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value



def _fast_csv(reader, header: list[str], shares: _ShareIndex):
    """Yield ``(number, cells, spec-or-None)``: the common, valid row costs a few conversions only.

    ``None`` sends the row through ``_job_from_row`` so that every problem is still reported.
    """
    column = {name: index for index, name in enumerate(header)}
    i_name, i_share = column["name"], column["share"]
    i_type, i_inst = column.get("instance_type"), column.get("instances")
    i_prio, i_submit, i_duration = column.get("priority"), column.get("submit_at"), column["duration"]
    resolved: dict[tuple[str, str], tuple[str, str] | None] = {}
    width = len(header)
    for number, cells in enumerate(reader, start=2):
        try:
            if len(cells) != width:
                raise ValueError
            ref = cells[i_share]
            wanted = cells[i_type] if i_type is not None else ""
            key = (ref, wanted)
            target = resolved.get(key, False)
            if target is False:
                found = shares.resolve(ref) if ref else "missing"
                target = None
                if not isinstance(found, str):
                    canonical, types = found
                    if wanted in types or (not wanted and len(types) == 1):
                        target = (canonical, wanted or types[0])
                resolved[key] = target
            if target is None:
                raise ValueError
            instances = cells[i_inst] if i_inst is not None and cells[i_inst] else "1"
            priority = cells[i_prio] if i_prio is not None and cells[i_prio] else "0"
            if not (instances.isdigit() and priority.isdigit()) or len(instances) + len(priority) > MAX_DIGITS:
                raise ValueError  # int() takes " 3" and "3_0"; exact, short digits only
            instances, priority = int(instances), int(priority)
            if instances < 1 or not 0 <= priority <= MAX_PRIORITY or not cells[i_name]:
                raise ValueError
            submit = _fast_number(cells[i_submit]) if i_submit is not None and cells[i_submit] else 0
            spec = JobSpec(cells[i_name], target[0], target[1], instances, priority, submit,
                           _fast_number(cells[i_duration]))
        except (ValueError, IndexError):
            spec = None
        yield number, cells, spec


def _header_problem(header: list[str]) -> str | None:
    """What is wrong with a CSV header as a whole (said once, not once per row), or ``None``."""
    if header and header[0].startswith("\ufeff"):
        return "the header starts with a byte-order mark (BOM); save the file as UTF-8 without BOM"
    if len(header) == 1 and ";" in header[0]:
        return "the header is separated by ';'; job files are comma-separated (name,share,duration,...)"
    upper = [cell for cell in header if cell not in JOB_FIELDS and cell.strip().lower() in JOB_FIELDS]
    if upper:
        return (f"header column(s) {', '.join(map(repr, upper))} must be written exactly as "
                f"{', '.join(repr(cell.strip().lower()) for cell in upper)} (lower case, no spaces)")
    unknown = [cell for cell in header if cell not in JOB_FIELDS]
    if unknown:
        hints = "".join(f" (did you mean {close[0]!r}?)" for cell in unknown[:1]
                        if (close := difflib.get_close_matches(cell, JOB_FIELDS, n=1)))
        return (f"header column(s) {', '.join(map(repr, unknown))} are not job fields{hints}; "
                f"the columns are {', '.join(JOB_FIELDS)}")
    repeated = sorted({cell for cell in header if header.count(cell) > 1})
    if repeated:
        return f"header names column(s) {', '.join(map(repr, repeated))} more than once"
    missing = [name for name in _REQUIRED if name not in header]
    if missing:
        return f"header lacks the required column(s) {', '.join(map(repr, missing))}"
    return None


def _csv_rows(reader, path: Path, problems: _Problems, shares: _ShareIndex | None):
    header = next(reader, None)
    if header is None:
        problems.add(str(path), "empty job file: expected a header line")
        return
    wrong = _header_problem(header)
    if wrong:
        problems.add(f"{path}:1", wrong)
        return
    fast = shares is not None and set(header) <= _FAST_COLUMNS and set(_REQUIRED) <= set(header)
    rows = _fast_csv(reader, header, shares) if fast else ((n, c, None) for n, c in enumerate(reader, start=2))
    for number, cells, spec in rows:
        if spec is not None:
            yield (path, number), spec
            continue
        if len(cells) != len(header):
            problems.add(f"{path}:{number}", f"expected {len(header)} columns, got {len(cells)}")
            continue
        yield f"{path}:{number}: row {number}", _TextRow(zip(header, cells, strict=True))


def _jsonl_rows(handle, path: Path, problems: _Problems):
    for number, text in enumerate(handle, start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text, parse_constant=_refuse_constant)
        except json.JSONDecodeError as error:
            problems.add(f"{path}:{number}", f"JSON syntax error: {error.msg}")
            continue
        except (ValueError, RecursionError) as error:  # a constant, a huge integer, deep nesting
            problems.add(f"{path}:{number}", f"cannot read: {_short(error)}")
            continue
        if not isinstance(row, dict):
            problems.add(f"{path}:{number}", f"expected a JSON object, got {type(row).__name__}")
            continue
        if find_lone_surrogate(row) is not None:
            problems.add(f"{path}:{number}", "text holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), "
                                             "which is no character")
            continue
        yield f"{path}:{number}: row {number}", row


def _refuse_constant(token: str):
    raise ValueError(f"{token} is not a number JSON allows (only finite numbers)")


def _short(error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "nested too deeply"
    text = str(error)
    return "an integer is too large" if "digits" in text and "limit" in text else text


def _rows_from_file(path: Path, source: str, problems: _Problems, shares: _ShareIndex | None = None):
    """Yield ``(where, row)`` from a CSV or JSON Lines job file (``((path, line), JobSpec)`` for fast-checked rows).

    A problem that stops reading (not UTF-8, a CSV field over the csv module's limit, a NUL
    byte) is one line with the line number; the rows read before it are still checked.
    """
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        problems.add(f"{source}: jobs", f"unsupported job file type {path.suffix!r}; use .csv or .jsonl")
        return
    try:
        binary = input_files.open_input(path, input_files.JOBS)
    except input_files.InputFileError as error:
        problems.append(str(error))
        return
    with io.TextIOWrapper(binary, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle) if suffix == ".csv" else None
        try:
            yield from (_csv_rows(reader, path, problems, shares) if reader else _jsonl_rows(handle, path, problems))
        except UnicodeDecodeError:
            problems.append(input_files.locate_bad_utf8(path, input_files.JOBS))
        except csv.Error as error:  # a field over the csv module's size limit, a NUL byte
            problems.add(f"{path}:{reader.line_num if reader else '?'}", f"cannot read CSV: {error}")


def load_jobs(path: Path, topology: Topology, extras: Extras | None = None) -> list[JobSpec]:
    """Read a CSV or JSON Lines workload on its own (``generate`` and ``history`` write these)."""
    problems = _Problems()
    shares = _ShareIndex(topology)
    with gc_paused():
        jobs = _collect_jobs(_rows_from_file(path, str(path), problems, shares), shares, problems, extras=extras)
    problems.raise_if_any()
    return jobs


def _collect_jobs(rows, shares: _ShareIndex, problems: _Problems, named: set | None = None,
                  extras: Extras | None = None) -> list[JobSpec]:
    """Valid jobs; ``named`` collects every name written, valid or not (actions may refer to them)."""
    jobs: list[JobSpec] = []
    seen: set[str] = set()
    for where, row in rows:
        fast = isinstance(where, tuple)
        spec = row if fast else _job_from_row(row, where, shares, problems, extras)
        name = spec.name if fast else row.get("name")
        if named is not None and not fast and isinstance(name, str):
            named.add(name)
        if isinstance(name, str) and name:  # a duplicate is reported even when the row has other errors
            if name in seen:
                where = f"{where[0]}:{where[1]}" if fast else where
                problems.add(where.split(": ")[0] + f": jobs[{name}].name", f"duplicate job name {name!r}")
                continue
            seen.add(name)
        if spec is not None:
            jobs.append(spec)
    return jobs


def load_scenario(path: str | Path, allow_python: bool = False) -> Scenario:
    """Load a scenario file, resolving the topology and job file relative to it.

    A topology it names may be a Python module only with ``allow_python``: a reviewed YAML
    file must not run code.
    """
    try:
        path = input_files.as_path(path)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    source = str(path)
    if path.suffix.lower() == ".py":
        raise LoadError([f"{source}: this is a Python module; a scenario is a YAML file with topology: and jobs:"])
    data, lines = read_data(path, input_files.SCENARIO)
    problems = _Problems()

    def at(*loc: str | int) -> str:
        line = line_of(lines, loc)
        return f"{source}:{line}" if line else source

    if not isinstance(data, dict):
        raise LoadError([f"{source}: (top level): expected a mapping with topology and jobs, "
                         f"got {type(data).__name__}"])
    if not {"topology", "jobs"} & set(data) and {"service_environments", "job_queues"} & set(data):
        raise LoadError([f"{source}: this is a topology; a scenario needs topology: (this file's path) and jobs: "
                         "(see docs/simulator.md)"])
    for key in data:
        if key not in _SCENARIO_KEYS:
            problems.add(f"{at(key)}: {key}", _unknown(key, _SCENARIO_KEYS))
    topology = _scenario_topology(data.get("topology"), path, at, lines, problems, allow_python)
    inputs = [path.parent / value for key in ("topology", "jobs")
              if isinstance(value := data.get(key), str) and value and "\0" not in value]
    settings = _settings(data.get("settings"), at, problems)
    if topology is None:
        problems.raise_if_any()
        raise LoadError([f"{source}: topology: missing required key (a path or an inline mapping)"])
    shares = _ShareIndex(topology)
    jobs_data = data.get("jobs")
    named: set[str] = set()
    extras = Extras()
    if jobs_data is None:
        problems.add(f"{source}: jobs", "missing required key (a list of jobs or a .csv/.jsonl path)")
        jobs: list[JobSpec] = []
    elif isinstance(jobs_data, str) and "\0" in jobs_data:
        problems.add(f"{at('jobs')}: jobs", f"{jobs_data!r}: a file name cannot contain a NUL byte")
        jobs = []
    elif isinstance(jobs_data, str):
        with gc_paused():
            jobs = _collect_jobs(_rows_from_file(path.parent / jobs_data, source, problems, shares), shares, problems,
                                 named, extras)
    elif isinstance(jobs_data, list):
        rows = []
        for index, row in enumerate(jobs_data):
            if not isinstance(row, dict):
                problems.add(f"{at('jobs', index)}: jobs[{index}]", f"expected a mapping, got {type(row).__name__}")
                continue
            name = row.get("name")
            label = f"jobs[{name}]" if isinstance(name, str) and name else f"jobs[{index}]"
            rows.append((f"{at('jobs', index)}: {label}", row))
        jobs = _collect_jobs(rows, shares, problems, named, extras)
    else:
        problems.add(f"{at('jobs')}: jobs", f"must be a list of jobs or a .csv/.jsonl path, got {jobs_data!r}")
        jobs = []
    updates = _actions(data.get("actions"), {job.name: job for job in jobs}, named, at, problems, topology, shares)
    if extras.live and not problems:
        from policy_engine.simulation.live import live_state_problems

        for problem in live_state_problems(topology, jobs, extras.live):
            problems.add(f"{source}: jobs", problem)
    problems.raise_if_any()
    return Scenario(topology, jobs, updates, settings, source, extras.live, extras.observed, tuple(inputs))


def _scenario_topology(value, path: Path, at, lines, problems: _Problems, allow_python: bool) -> Topology | None:
    if value is None:
        return None
    if value in ("", {}):
        problems.add(f"{at('topology')}: topology", "must not be empty: a path or a mapping with the topology")
        return None
    try:
        if isinstance(value, str):
            return load_topology(path.parent / input_files.as_path(value), allow_python=allow_python)
        if isinstance(value, dict):
            inner = {key[1:]: line for key, line in lines.items() if key[:1] == ("topology",)}
            return topology_from_data(value, f"{path} (topology)", inner)
    except LoadError as error:
        problems.extend(error.problems)
        return None
    except input_files.InputFileError as error:
        problems.add(f"{at('topology')}: topology", str(error))
        return None
    problems.add(f"{at('topology')}: topology", f"must be a path or a mapping, got {type(value).__name__}")
    return None


def _too_long(raw: Any) -> str:
    return f"must be at most {MAX_SECONDS:.0e} seconds (about 317,000 years), got {raw!r}"


def _settings(value, at, problems: _Problems) -> SimulationSettings:
    if value is None:
        return SimulationSettings()
    if not isinstance(value, dict):
        problems.add(f"{at('settings')}: settings", f"must be a mapping, got {type(value).__name__}")
        return SimulationSettings()
    kwargs: dict[str, Any] = {}
    for key, raw in value.items():
        where = f"{at('settings', key)}: settings.{key}"
        if key not in _SETTINGS_KEYS:
            problems.add(where, _unknown(key, _SETTINGS_KEYS))
        elif key in ("startup_delay", "preemption_delay"):
            number = _number(raw)
            if number is None or number < 0:
                problems.add(where, f"must be a number of seconds >= 0, got {raw!r}")
            elif number > MAX_SECONDS:
                problems.add(where, _too_long(raw))
            else:
                kwargs[key] = float(number)
        elif key == "min_runtime":
            number = _number(raw)
            if number is None or number <= 0:
                problems.add(where, f"must be a number of seconds > 0, got {raw!r}")
            elif number > MAX_SECONDS:
                problems.add(where, _too_long(raw))
            else:
                kwargs[key] = float(number)
        elif key == "backfill":
            if not isinstance(raw, bool):
                problems.add(where, f"must be true or false, got {raw!r}")
            else:
                kwargs[key] = raw
        else:
            try:
                SimulationSettings(victim_policy=raw)  # the one check of a policy name, with its message
            except ValueError as error:
                problems.add(where, str(error))
            else:
                kwargs[key] = raw
    return SimulationSettings(**kwargs)


_ACTION_KINDS = ("update_priority", "update_share", "update_environment")


def _actions(value, jobs: dict[str, JobSpec], named: set[str], at, problems: _Problems,
             topology: Topology | None = None, shares: _ShareIndex | None = None) -> list[Action]:
    if value is None:
        return []
    if not isinstance(value, list):
        problems.add(f"{at('actions')}: actions", f"must be a list, got {type(value).__name__}")
        return []
    updates: list[Action] = []
    for index, action in enumerate(value):
        where = f"{at('actions', index)}: actions[{index}]"
        if not isinstance(action, dict):
            problems.add(where, f"expected a mapping, got {type(action).__name__}")
            continue
        for key in action:
            if key not in ("at", *_ACTION_KINDS):
                problems.add(where, _unknown(key, ("at", *_ACTION_KINDS)))
        time = _number(action.get("at"))
        if time is None or time < 0:
            problems.add(f"{where}.at", f"must be a number of seconds >= 0, got {action.get('at')!r}")
        elif time > MAX_SECONDS:
            problems.add(f"{where}.at", _too_long(action.get("at")))
            time = None
        kinds = [kind for kind in _ACTION_KINDS if kind in action]
        if len(kinds) > 1:
            problems.add(where, f"one action per entry: {' and '.join(kinds)} given together")
            continue
        if kinds and kinds[0] != "update_priority":
            if topology is None or shares is None:
                continue
            valid_time = time is not None and time >= 0
            if kinds[0] == "update_share":
                change = change_actions.share_update(time or 0.0, action["update_share"], f"{where}.update_share",
                                                     topology, shares.resolve, problems.add)
            else:
                change = change_actions.environment_update(time or 0.0, action["update_environment"],
                                                           f"{where}.update_environment", topology, problems.add)
            if change is not None and valid_time:
                updates.append(change)
            continue
        update = action.get("update_priority")
        if not isinstance(update, dict):
            problems.add(f"{where}.update_priority", "missing: a mapping {job: NAME, priority: N} (or update_share, "
                                                     "update_environment)")
            continue
        for key in update:
            if key not in ("job", "priority"):
                problems.add(f"{where}.update_priority", _unknown(key, ("job", "priority")))
        name, priority = update.get("job"), update.get("priority")
        spec = jobs.get(name) if isinstance(name, str) else None
        if spec is None and not (isinstance(name, str) and name in named):  # a broken job is reported already
            problems.add(f"{where}.update_priority.job", f"no job named {name!r} in the workload")
        if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= MAX_PRIORITY:
            problems.add(f"{where}.update_priority.priority", f"must be an integer 0-{MAX_PRIORITY}, got {priority!r}")
        elif spec is not None and time is not None and time >= 0 and time < spec.submit_at:
            problems.add(f"{where}.at", f"update at {time} is before job {name!r} is submitted (at {spec.submit_at})")
        elif spec is not None and time is not None and time >= 0:
            updates.append(PriorityUpdate(time, name, priority))
    return updates
