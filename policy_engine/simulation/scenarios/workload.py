"""Scenario files: a topology, a workload and timed actions, validated all at once.

A problem is one line, ``FILE[:LINE]: OBJECT.FIELD: rule``, collected for the whole file before
anything runs (``LoadError``), so a user fixes every mistake in one go. Job rows are read and
checked by ``job_files`` and ``job_rows``; this module reads the scenario around them: the
topology, ``settings`` and ``actions``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from policy_engine.foundation import bounds
from policy_engine.foundation.diagnostics import DataPath
from policy_engine.foundation.model import Topology, plan_time
from policy_engine.inputs import input_files
from policy_engine.inputs.loading import LoadError, line_of, load_topology, read_data, topology_from_data
from policy_engine.simulation.core.jobs import JobSpec, LiveState, Observed
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.inputs.input_problems import MAX_PROBLEMS, Problems, unknown_key
from policy_engine.simulation.inputs.job_files import Row, collect_jobs, load_jobs, rows_from_file
from policy_engine.simulation.inputs.job_rows import MAX_PRIORITY, MAX_SECONDS, Extras, RowAt, ShareIndex, number
from policy_engine.simulation.scenarios import change_actions
from policy_engine.simulation.settings import (
    Action,
    JobTermination,
    PriorityUpdate,
    SameInstant,
    SimulationSettings,
)

__all__ = ["MAX_PROBLEMS", "MAX_SECONDS", "Extras", "LoadError", "PriorityUpdate", "Scenario", "load_jobs",
           "load_scenario"]

_SCENARIO_KEYS = ("topology", "jobs", "workload", "actions", "settings", "until", "start", "on_demand_plans")
_WORKLOAD_KEYS = ("profile", "days", "seed", "scale")
#: ``SimulationSettings`` a scenario may set; ``utilisation_series`` and ``usage_log`` are report options.
_SETTINGS_KEYS = tuple(f.name for f in fields(SimulationSettings)
                       if f.name not in ("utilisation_series", "usage_log", "start"))
#: Settings whose value is a choice among names (an enum): the one check is ``SimulationSettings``'s own.
_CHOICE_KEYS = ("plan_dispatch", "plan_window_end", "plan_pending_end", "same_instant")
_ACTION_KINDS = ("update_priority", "terminate_job", "update_share", "create_share", "delete_share",
                 "update_environment")
#: An action's place among the submissions of its instant (``same_instant: one_by_one``).
_AFTER = "after_submissions"
#: The actions that change the topology (``change_actions``); the others name a job.
_TOPOLOGY_KINDS = ("update_share", "create_share", "delete_share", "update_environment")


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
    #: When jobs were submitted in absolute time (``submitted_epoch_ms``, epoch milliseconds), by name.
    submitted_epoch_ms: dict[str, int] = field(default_factory=dict)
    #: Where the run stops unless ``--until`` says otherwise (a history's window ends there); ``None``: at the end.
    until: float | None = None
    #: ``workload: {profile: ...}``: the profile the jobs were drawn from (``ProfileWorkload``), else ``None``.
    profile: Any = None
    #: Jobs run on demand by the scenario's ``on_demand_plans``: plan name or ARN -> how many.
    on_demand_jobs: dict[str, int] = field(default_factory=dict)


class _Located:
    """Problems of the scenario file itself, each at the line of its data path."""

    def __init__(self, source: str, lines: Any, problems: Problems):
        self.source, self.lines, self.problems = source, lines, problems

    def line(self, *loc: str | int) -> int | None:
        return line_of(self.lines, loc)

    def add(self, loc: tuple[Any, ...], path: DataPath, message: str) -> None:
        """A problem at the line of ``loc`` (the YAML keys), named by ``path``."""
        self.problems.add(self.source, line_of(self.lines, loc), path, message)

    def reporter(self, loc: tuple[Any, ...]) -> Callable[[DataPath, str], None]:
        """``change_actions``' ``report(path, what)``: a problem at ``path``, on the line of the action ``loc``."""
        return lambda path, what: self.add(loc, path, what)


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
    problems = Problems()
    here = _Located(source, lines, problems)
    if not isinstance(data, dict):
        raise LoadError([f"{source}: (top level): expected a mapping with topology and jobs, "
                         f"got {type(data).__name__}"])
    if not {"topology", "jobs", "workload"} & set(data) and {"service_environments", "job_queues"} & set(data):
        raise LoadError([f"{source}: this is a topology; a scenario needs topology: (this file's path) and jobs: "
                         "(see docs/simulator.md)"])
    for key in data:
        if key not in _SCENARIO_KEYS:
            here.add((key,), (str(key),), unknown_key(key, _SCENARIO_KEYS))
    topology = _scenario_topology(data.get("topology"), path, here, allow_python)
    inputs = [path.parent / value for key in ("topology", "jobs")
              if isinstance(value := data.get(key), str) and value and "\0" not in value]
    if isinstance(data.get("workload"), dict) and isinstance(named_profile := data["workload"].get("profile"), str) \
            and named_profile and "\0" not in named_profile:
        inputs.append(path.parent / named_profile)
    settings = _settings(data.get("settings"), here)
    start = _start(data.get("start"), here)
    if start is not None:
        settings = replace(settings, start=start)
    if topology is not None:
        _plan_times(topology, start, here)
    if topology is None:
        problems.raise_if_any()
        raise LoadError([f"{source}: topology: missing required key (a path or an inline mapping)"])
    topology, created = change_actions.with_created_shares(topology, data.get("actions"))
    shares = ShareIndex(topology, _on_demand_plans(data.get("on_demand_plans"), topology, here))
    jobs_data = data.get("jobs")
    named: set[str] = set()
    extras = Extras()
    profile = None
    if jobs_data is not None and "workload" in data:
        here.add(("workload",), ("workload",), "jobs and workload are exclusive: give a job list or file, or a "
                 "workload profile")
        jobs: list[JobSpec] = []
    elif "workload" in data:
        profile, jobs = _profile_workload(data["workload"], path, here, topology, start)
        named.update(job.name for job in jobs)
    elif jobs_data is None:
        problems.add(source, None, ("jobs",), "missing required key (a list of jobs or a .csv/.jsonl path, or "
                     "workload: {profile: FILE, days: N})")
        jobs = []
    elif isinstance(jobs_data, str) and "\0" in jobs_data:
        here.add(("jobs",), ("jobs",), f"{jobs_data!r}: a file name cannot contain a NUL byte")
        jobs = []
    elif isinstance(jobs_data, str):
        with gc_paused():
            jobs = collect_jobs(rows_from_file(path.parent / jobs_data, source, problems, shares), shares, problems,
                                named, extras)
    elif isinstance(jobs_data, list):
        rows: list[Row] = []
        for index, row in enumerate(jobs_data):
            if not isinstance(row, dict):
                here.add(("jobs", index), ("jobs", index), f"expected a mapping, got {type(row).__name__}")
                continue
            rows.append((RowAt(source, here.line("jobs", index), index), row))
        jobs = collect_jobs(rows, shares, problems, named, extras)
    else:
        here.add(("jobs",), ("jobs",), f"must be a list of jobs or a .csv/.jsonl path, got {jobs_data!r}")
        jobs = []
    actions = data.get("actions")  # jobs by name only for a scenario with actions: a million-entry dict otherwise
    updates = _actions(actions, {job.name: job for job in jobs} if actions is not None else {}, named, here, topology,
                       shares, created)
    if actions is not None:
        updates = _placed(actions, updates, jobs, settings, here)
    until = None
    if data.get("until") is not None:
        until = number(data["until"])
        if until is None or until < 0:
            here.add(("until",), ("until",), f"must be a number of seconds >= 0, got {data['until']!r}")
        elif until > MAX_SECONDS:
            here.add(("until",), ("until",), _too_long(data["until"]))
    _past_the_last_instant(start, jobs, None if until is None else float(until), here)
    if extras.live and not problems:
        from policy_engine.simulation.live import live_state_problems

        for problem in live_state_problems(topology, jobs, extras.live):
            problems.add(source, None, ("jobs",), problem)
    problems.raise_if_any()
    return Scenario(topology, jobs, updates, settings, source, extras.live, extras.observed, tuple(inputs),
                    extras.submitted_epoch_ms, None if until is None else float(until), profile,
                    dict(shares.on_demand_jobs))


def _profile_workload(value: Any, path: Path, here: _Located, topology: Topology,
                      start: datetime | None) -> tuple[Any, list[JobSpec]]:
    """``workload: {profile: FILE, days: N, seed: N, scale: {SHARE: F}}``: the profile and the jobs it draws."""
    if not isinstance(value, dict):
        here.add(("workload",), ("workload",), f"must be a mapping with profile: and days:, got {type(value).__name__}")
        return None, []
    wrong = False
    for key in value:
        if key not in _WORKLOAD_KEYS:
            here.add(("workload", key), ("workload", str(key)), unknown_key(key, _WORKLOAD_KEYS))
            wrong = True
    file, days, seed, scale = value.get("profile"), number(value.get("days")), value.get("seed", 0), value.get("scale")
    if not isinstance(file, str) or not file or "\0" in file:
        here.add(("workload", "profile"), ("workload", "profile"), f"must be the profile's file name, got {file!r}")
        wrong = True
    if days is None or isinstance(value.get("days"), bool) or not 0 < days <= MAX_SECONDS / 86400:
        here.add(("workload", "days"), ("workload", "days"), f"must be a number of days > 0, got {value.get('days')!r}")
        wrong = True
    if isinstance(seed, bool) or not isinstance(seed, int):
        here.add(("workload", "seed"), ("workload", "seed"), f"must be an integer, got {seed!r}")
        wrong = True
    if scale is not None and not isinstance(scale, dict):
        here.add(("workload", "scale"), ("workload", "scale"), f"must be a mapping SHARE: FACTOR, got {scale!r}")
        wrong = True
    if wrong or not isinstance(file, str):
        return None, []
    from policy_engine.simulation.profiles.loading import load_profile
    from policy_engine.simulation.profiles.planning import parse_scales
    from policy_engine.simulation.profiles.workload import ProfileWorkload

    try:
        resolved = load_profile(path.parent / input_files.as_path(file), topology)
    except LoadError as error:
        here.problems.add_rendered(error.located)
        return None, []
    except input_files.InputFileError as error:
        here.add(("workload", "profile"), ("workload", "profile"), str(error))
        return None, []
    factors, problems = parse_scales(resolved, topology, [f"{k}={v}" for k, v in (scale or {}).items()])
    for problem in problems:
        here.add(("workload", "scale"), ("workload", "scale"), problem.replace("--scale ", ""))
    if problems:
        return None, []
    assert days is not None
    workload = ProfileWorkload(resolved, float(days), seed, factors, start)
    jobs, _ = workload.jobs(topology)
    return workload, jobs


def _scenario_topology(value: Any, path: Path, here: _Located, allow_python: bool) -> Topology | None:
    if value is None:
        return None
    if value in ("", {}):
        here.add(("topology",), ("topology",), "must not be empty: a path or a mapping with the topology")
        return None
    try:
        if isinstance(value, str):
            return load_topology(path.parent / input_files.as_path(value), allow_python=allow_python)
        if isinstance(value, dict):
            inner = {key[1:]: line for key, line in here.lines.items() if key[:1] == ("topology",)}
            return topology_from_data(value, f"{path} (topology)", inner)
    except LoadError as error:
        here.problems.add_rendered(error.located)
        return None
    except input_files.InputFileError as error:
        here.add(("topology",), ("topology",), str(error))
        return None
    here.add(("topology",), ("topology",), f"must be a path or a mapping, got {type(value).__name__}")
    return None


def _on_demand_plans(value: Any, topology: Topology, here: _Located) -> frozenset[str]:
    """``on_demand_plans:``: plan names or ARNs whose jobs run on demand, as ``history --scenario`` writes for plans
    it could not describe (deleted, access denied); one that names a plan of the topology is a problem (its jobs
    would silently leave a plan there is)."""
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(ref, str) and ref for ref in value):
        here.add(("on_demand_plans",), ("on_demand_plans",), f"must be a list of plan names or ARNs, got {value!r}")
        return frozenset()
    for index, ref in enumerate(value):
        if (plan := topology.plan(ref)) is not None:
            here.add(("on_demand_plans", index), ("on_demand_plans", index),
                     f"{ref} is training plan {plan.name} of the topology: its jobs run on it (remove it here)")
    return frozenset(value)


def _start(value: Any, here: _Located) -> datetime | None:
    """``start:``: the instant simulated second 0 stands for, what ISO 8601 plan windows count from."""
    if value is None:
        return None
    try:
        parsed = plan_time(value)
    except ValueError:
        parsed = None
    if isinstance(parsed, datetime):
        return parsed
    here.add(("start",), ("start",), f"must be an ISO 8601 time with a time zone (2026-12-01T00:00:00Z), got {value!r}")
    return None


def _plan_times(topology: Topology, start: datetime | None, here: _Located) -> None:
    """A plan window written as a date needs the scenario's ``start`` to count from: one problem per plan."""
    if start is not None:
        return
    for plan in topology.training_plans:
        times = [time for window in plan.reserved_capacities for time in (window.start, window.end)]
        if any(isinstance(time, datetime) for time in times):
            here.add(("topology",), ("topology",), f"training plan {plan.name}'s windows are dates: give the scenario "
                     "a start: (the ISO 8601 time its second 0 stands for), or write them in seconds")


def _too_long(raw: Any) -> str:
    return f"must be at most {MAX_SECONDS} seconds (second 0 plus it is {bounds.MAX_INSTANT:%Y-%m-%d}), got {raw!r}"


def _past_the_last_instant(start: datetime | None, jobs: list[JobSpec], until: float | None, here: _Located) -> None:
    """With a ``start:``, the last submission and ``until`` must fall by ``bounds.MAX_INSTANT`` (a valid date)."""
    if start is None:
        return
    latest = max((job.submit_at for job in jobs), default=0.0)
    for key, seconds in (("jobs", latest), ("until", until)):
        if seconds is not None and (why := bounds.instant_problem(start, seconds)) is not None:
            here.add((key,), (key,), why)


def _settings(value: Any, here: _Located) -> SimulationSettings:
    if value is None:
        return SimulationSettings()
    if not isinstance(value, dict):
        here.add(("settings",), ("settings",), f"must be a mapping, got {type(value).__name__}")
        return SimulationSettings()
    kwargs: dict[str, Any] = {}
    for key, raw in value.items():

        def problem(message: str, key: Any = key) -> None:
            here.add(("settings", key), ("settings", str(key)), message)

        if key not in _SETTINGS_KEYS:
            problem(unknown_key(key, _SETTINGS_KEYS))
        elif key in ("startup_delay", "preemption_delay", "min_runtime"):
            seconds = number(raw)
            if seconds is None or seconds < 0:
                problem(f"must be a number of seconds >= 0, got {raw!r}")
            elif seconds > MAX_SECONDS:
                problem(_too_long(raw))
            else:
                kwargs[key] = float(seconds)
        elif key in ("backfill", "millisecond_instants"):
            if not isinstance(raw, bool):
                problem(f"must be true or false, got {raw!r}")
            else:
                kwargs[key] = raw
        elif key in _CHOICE_KEYS:
            try:
                kwargs[key] = getattr(SimulationSettings(**{key: raw}), key)  # the one check, with its message
            except ValueError as error:
                problem(str(error))
        else:
            try:
                SimulationSettings(victim_policy=raw)  # the one check of a policy name, with its message
            except ValueError as error:
                problem(str(error))
            else:
                kwargs[key] = raw
    return SimulationSettings(**kwargs)


def _actions(value: Any, jobs: dict[str, JobSpec], named: set[str], here: _Located, topology: Topology,
             shares: ShareIndex, created: set[str]) -> list[Action]:
    if value is None:
        return []
    if not isinstance(value, list):
        here.add(("actions",), ("actions",), f"must be a list, got {type(value).__name__}")
        return []
    updates: list[Action] = []
    for index, action in enumerate(value):
        loc = ("actions", index)

        def problem(message: str, *field: str, loc: tuple[str, int] = loc) -> None:
            here.add(loc, (*loc, *field), message)

        if not isinstance(action, dict):
            problem(f"expected a mapping, got {type(action).__name__}")
            continue
        for key in action:
            if key not in ("at", _AFTER, *_ACTION_KINDS):
                problem(unknown_key(key, ("at", _AFTER, *_ACTION_KINDS)))
        time = number(action.get("at"))
        if time is None or time < 0:
            problem(f"must be a number of seconds >= 0, got {action.get('at')!r}", "at")
        elif time > MAX_SECONDS:
            problem(_too_long(action.get("at")), "at")
            time = None
        kinds = [kind for kind in _ACTION_KINDS if kind in action]
        if len(kinds) > 1:
            problem(f"one action per entry: {' and '.join(kinds)} given together")
            continue
        if kinds and kinds[0] in _TOPOLOGY_KINDS:
            valid_time = time is not None and time >= 0
            kind = kinds[0]
            where: DataPath = ("actions", index, kind)
            change: Action | None
            if kind == "update_share":
                change = change_actions.share_update(time or 0.0, action[kind], where, topology, shares.resolve,
                                                     here.reporter(loc))
            elif kind == "create_share":
                change = change_actions.share_creation(time or 0.0, action[kind], where, topology, created,
                                                       shares.resolve, here.reporter(loc))
            elif kind == "delete_share":
                change = change_actions.share_deletion(time or 0.0, action[kind], where, shares.resolve,
                                                       here.reporter(loc))
            else:
                change = change_actions.environment_update(time or 0.0, action[kind], where, topology,
                                                           here.reporter(loc))
            if change is not None and valid_time:
                updates.append(change)
            continue
        kind = kinds[0] if kinds else "update_priority"
        fields = ("job", "priority") if kind == "update_priority" else ("job", "reason")
        update = action.get(kind)
        if not isinstance(update, dict):
            problem("missing: a mapping {job: NAME, priority: N} (or terminate_job, update_share, create_share, "
                    "delete_share, update_environment)" if not kinds else
                    f"must be a mapping {{{', '.join(f + ': ...' for f in fields)}}}", kind)
            continue
        for key in update:
            if key not in fields:
                problem(unknown_key(key, fields), kind)
        name = update.get("job")
        spec = jobs.get(name) if isinstance(name, str) else None
        if spec is None and not (isinstance(name, str) and name in named):  # a broken job is reported already
            problem(f"no job named {name!r} in the workload", kind, "job")
        timed = spec is not None and time is not None and time >= 0
        if timed and spec is not None and time is not None and time < spec.submit_at:
            what = "update" if kind == "update_priority" else "termination"
            problem(f"{what} at {time} is before job {name!r} is submitted (at {spec.submit_at})", "at")
            continue
        if kind == "terminate_job":
            reason = update.get("reason", "")
            if not isinstance(reason, str):
                problem(f"must be a text, got {reason!r}", kind, "reason")
            elif timed and spec is not None and time is not None:
                updates.append(JobTermination(time, spec.name, reason))
            continue
        priority = update.get("priority")
        if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= MAX_PRIORITY:
            problem(f"must be an integer 0-{MAX_PRIORITY}, got {priority!r}", kind, "priority")
        elif timed and spec is not None and time is not None:
            updates.append(PriorityUpdate(time, spec.name, priority))
    return updates


def _placed(value: list[Any], updates: list[Action], jobs: list[JobSpec], settings: SimulationSettings,
            here: _Located) -> list[Action]:
    """The actions with their ``after_submissions`` (``same_instant: one_by_one`` only): how many of the instant's
    submissions (in workload order) come before each; a job's own action comes after its submission."""
    given = [(index, action[_AFTER]) for index, action in enumerate(value)
             if isinstance(action, dict) and _AFTER in action]
    if not given:
        return updates
    if settings.same_instant is not SameInstant.ONE_BY_ONE:
        for index, _ in given:
            here.add(("actions", index), ("actions", index, _AFTER),
                     "only with settings: {same_instant: one_by_one} (together, every action of an instant comes "
                     "before its submissions)")
        return updates
    places = dict(given)
    valid = [index for index, action in enumerate(value) if isinstance(action, dict)]
    if len(valid) != len(updates):  # some actions were refused: their problems are reported already
        return updates
    counts: dict[float, int] = {}
    place_of: dict[str, tuple[float, int]] = {}
    for job in sorted(jobs, key=lambda j: j.submit_at):  # stable: workload order within an instant
        counts[job.submit_at] = counts.get(job.submit_at, 0) + 1
        place_of[job.name] = (job.submit_at, counts[job.submit_at])
    placed: list[Action] = []
    for index, update in zip(valid, updates, strict=True):
        after = places.get(index, 0)
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            here.add(("actions", index), ("actions", index, _AFTER), f"must be an integer >= 0, got {after!r}")
            continue
        name = update.job if isinstance(update, (PriorityUpdate, JobTermination)) else None
        submitted, place = place_of[name] if name is not None else (-1.0, 0)
        if update.at == submitted and after < place:
            here.add(("actions", index), ("actions", index, _AFTER),
                     f"{after}: job {name!r} is submission {place} of its instant ({submitted:g}): an action on it "
                     f"comes after it (after_submissions >= {place})")
            continue
        placed.append(replace(update, after_submissions=after))
    return placed
