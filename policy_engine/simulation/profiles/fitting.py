"""Fit a workload profile per share from a job file or a ``batch-quota history`` export.

Rates and their daily and weekly cycles come from absolute submission times where the file has them
(``submitted_epoch_ms``), else from ``submit_at`` read as seconds since a Monday 00:00 (the convention
``generate`` writes); run times from completed jobs only (a preempted job's last run time is a lower
bound, not a run time). The run-time law is always the empirical quantiles; a parametric family
(exponential, lognormal, Pareto) replaces it only where a Kolmogorov-Smirnov test on a random subsample
of at most ``SAMPLE`` jobs accepts it at ``ALPHA``. scipy.stats does the fitting and the test.
"""

from __future__ import annotations

import codecs
import math
import re
import zoneinfo
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from policy_engine.foundation import limits
from policy_engine.foundation.diagnostics import LoadError
from policy_engine.foundation.model import Topology, plan_time_text
from policy_engine.foundation.units import duration_text
from policy_engine.inputs import input_files
from policy_engine.simulation.inputs.job_files import check_job_file
from policy_engine.simulation.inputs.job_rows import MAX_PRIORITY, OBSERVED_STATUSES
from policy_engine.simulation.inputs.job_rows import MAX_SECONDS as MAX_JOB_SECONDS
from policy_engine.simulation.profiles.plan_timing import (
    DEFAULT_NIGHT,
    ClockWindow,
    PlanClock,
    classify,
    default_origin,
    plan_clock,
    plan_clocks,
)
from policy_engine.simulation.profiles.spec import (
    DAYS_PER_WEEK,
    HOURS_PER_DAY,
    Bursts,
    EarlyFailures,
    Empirical,
    Exponential,
    FitRecord,
    LeadTime,
    LogNormal,
    Pareto,
    PlanTiming,
    PlanUse,
    RunTime,
    ShareProfile,
    WorkloadProfile,
)

#: Largest subsample the goodness-of-fit test (and the parametric fit) sees: a KS test on a million
#: jobs rejects every family for differences nobody would plan by.
SAMPLE = 5000
#: A family is accepted when the KS test's p-value is at least this.
ALPHA = 0.05
#: Fewer completed jobs than this: the run time is generate's default (exponential, mean 1 h), and we say so.
MIN_RUN_TIMES = 30
#: A size class (jobs of one size) gets a run-time law of its own from this many completed jobs; smaller classes draw
#: the share's pooled law (docs/workloads.md, "Run time by size", says why 50). ``fit --min-jobs-per-size``.
MIN_JOBS_PER_SIZE = 50
#: A daily cycle needs two days and this many jobs; a weekly one two weeks and ``MIN_WEEKLY_JOBS``.
MIN_DAILY_JOBS = 240
MIN_WEEKLY_JOBS = 140
#: Submissions of one share closer than this many seconds belong to one burst.
BURST_GAP = 60.0
#: The quantiles fit writes (0 and 1 are the smallest and largest run time seen).
QUANTILES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 1.0)
DEFAULT_RUN_TIME = RunTime(law=Exponential(distribution="exponential", mean=3600.0))
#: 1970-01-01 was a Thursday: the day index of the Unix epoch, Monday being 0.
_EPOCH_WEEKDAY = 3

REQUIRED = ("share", "duration")
#: What a job file may leave out, as the simulator reads it: one instance, submitted at 0.
DEFAULTS = {"instances": 1.0, "submit_at": 0.0}
_TYPES = {"name": "string", "share": "string", "instance_type": "string", "instances": "int64",
          "priority": "int64", "submit_at": "float64", "duration": "float64", "preemption_retries": "float64",
          "submitted_epoch_ms": "float64", "duration_known": "string", "observed_status": "string",
          "status": "string", "attempts": "float64", "failures": "float64", "fail_after": "float64",
          "training_plan": "string",
          # read only to say they are not used (nothing in a file is dropped without a line saying so)
          "checkpoint_interval": "float64", "max_runtime": "float64", "started_at": "float64", "remaining": "float64",
          "observed_start": "float64", "observed_end": "float64", "observed_preemptions": "float64"}
#: Why ``fit`` does not use a column a job file may have (one line lists those the file has).
_NOT_USED = {"name": "job names", "checkpoint_interval": "a profile does not model checkpoints",
             "max_runtime": "a profile does not model StoppingCondition",
             "started_at": "the live state of jobs on capacity at time 0", "remaining": "the live state",
             "observed_start": "what was observed, not how the team submits", "observed_end": "what was observed",
             "observed_preemptions": "what was observed"}


#: The ranges the simulator's job-file reader holds cells to (``job_rows``): a file it refuses, fit refuses too.
_RANGES = (("priority", 0, MAX_PRIORITY, f"an integer {limits.JOB_PRIORITY.range_text()}"),
           ("instances", 1, limits.INTEGER_MAX, f"an integer 1 to {limits.INTEGER_MAX}"),
           ("duration", 0, MAX_JOB_SECONDS, f"a number of seconds 0 to {MAX_JOB_SECONDS}"),
           ("submit_at", 0, MAX_JOB_SECONDS, f"a number of seconds 0 to {MAX_JOB_SECONDS}"),
           ("preemption_retries", 0, limits.INTEGER_MAX, "an integer >= 0"), ("attempts", 1, 10, "an integer 1-10"),
           ("failures", 0, limits.INTEGER_MAX, "an integer >= 0"))
_INTEGERS = frozenset({"priority", "instances", "preemption_retries", "attempts", "failures"})
#: The texts the simulator's reader takes in these columns (``job_rows``): booleans as text, AWS's statuses.
_KNOWN = ("true", "false")
_STATUSES = tuple(sorted(OBSERVED_STATUSES))


@dataclass
class ShareFit:
    """What ``fit`` found for one share, and the profile it wrote."""

    share: str
    jobs: int
    completed: int
    unknown_run_times: int
    #: per instance type, never added across types (an instance-hour of one type is not one of another); ``None``:
    #: the jobs that name no type where the topology cannot tell it (none given, or a share of several types)
    instance_hours_per_day: dict[str | None, float]
    sizes: dict[int, float]
    run_time_p50: float | None
    run_time_p95: float | None
    family: str
    statistic: float | None
    p_value: float | None
    profile: ShareProfile
    notes: list[str] = field(default_factory=list)
    #: how the daily and weekly cycles were read: ``peak/trough x3.2``, ``flat (p=0.4)``, ``too few jobs``
    daily: str = "flat"
    weekly: str = "flat"
    #: plan -> how many of the share's jobs named it (the profile's ``training_plans`` says how they are drawn)
    plan_jobs: dict[str, int] = field(default_factory=dict)


def _cycle_text(cycle: tuple[float, ...] | None, p_value: float | None, reason: str) -> str:
    if cycle is not None:
        low = min(v for v in cycle)
        return f"x{max(cycle) / low:.1f} peak" if low > 0 else "idle slots"
    return f"flat (p={p_value:.2g})" if p_value is not None else reason


@dataclass
class FitResult:
    """Every share's fit, the window it covers, and what could not be used (counted, with the reason)."""

    shares: dict[str, ShareFit]
    timezone: str
    span_days: float
    absolute_times: bool
    unused: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def profile(self) -> WorkloadProfile:
        return WorkloadProfile(timezone=self.timezone, shares={s: f.profile for s, f in self.shares.items()})


def read_columns(path: Path, plans: Topology | None = None) -> dict[str, np.ndarray]:
    """The job file's known columns as numpy arrays (CSV or JSON Lines, read by pyarrow); ``LoadError`` when
    a required column is missing or a cell is not of its column's type (a JSON Lines row's ``training_plan`` must
    name a plan of ``plans`` when given)."""
    source = str(path)
    try:  # the rules every job file is read by: a regular file within the size cap, UTF-8 without a BOM or NUL
        with input_files.open_input(path, input_files.JOBS) as handle:
            head = handle.read(1 << 20)
            if not head.strip():
                raise LoadError([f"{source}: the file is empty; a job file has a header and one row per job"])
            if head.startswith(codecs.BOM_UTF8):
                raise LoadError([f"{source}: starts with a UTF-8 byte-order mark; save it as UTF-8 without one"])
            while head:
                if b"\0" in head:
                    raise LoadError([f"{source}: holds a NUL byte; a job file is text"])
                head = handle.read(1 << 20)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    # the simulator's own reader first: a file simulate refuses (a repeated or unknown column, a repeated JSON key,
    # deep nesting, a cell of the wrong type) is refused here with the same lines; a CSV's cells are then checked
    # a column at a time against the same bounds (NaN and infinity, the ranges, duration_known, observed_status)
    check_job_file(path, required=REQUIRED, csv_cells=False, plans=plans)
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    try:
        if path.suffix.lower() == ".csv":
            with path.open("r", encoding="utf-8", newline="") as handle:
                names = [n.strip().strip('"') for n in handle.readline().strip().split(",")]
            known = {n: pa.type_for_alias(_TYPES[n]) for n in names if n in _TYPES}
            table = pacsv.read_csv(str(path), convert_options=pacsv.ConvertOptions(  # only an empty cell is null:
                column_types=known, include_columns=list(known), strings_can_be_null=True,  # "NaN" is NaN, refused
                null_values=[""]))
        elif path.suffix.lower() == ".jsonl":
            table = _read_json_lines(path)
        else:
            raise LoadError([f"{source}: a job file is .csv or .jsonl"])
    except UnicodeDecodeError:
        raise LoadError([input_files.locate_bad_utf8(path, input_files.JOBS)]) from None
    except pa.ArrowException as error:
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        text = text if len(text) <= 200 else text[:200] + "..."
        if "UTF8" in text or "utf8" in text or "UTF-8" in text:
            raise LoadError([input_files.locate_bad_utf8(path, input_files.JOBS)]) from None
        raise LoadError([f"{source}: {text}"]) from None
    except OSError as error:
        raise LoadError([f"{source}: cannot read: {error.strerror or error}"]) from None
    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing:
        raise LoadError([f"{source}: missing column(s) {', '.join(missing)} (a job file has name, share, "
                         "instance_type, instances, priority, submit_at, duration; see docs/workloads.md)"])
    columns: dict[str, np.ndarray] = {name: np.full(table.num_rows, value) for name, value in DEFAULTS.items()
                                      if name not in table.column_names}
    problems: list[str] = []
    for name in table.column_names:
        column = table[name]
        if pa.types.is_string(column.type):  # through a dictionary: a million cells of a few distinct texts
            encoded = pc.dictionary_encode(column).combine_chunks()
            texts = np.asarray([*encoded.dictionary.to_pylist(), None], dtype=object)
            codes = encoded.indices.fill_null(len(texts) - 1).to_numpy(zero_copy_only=False)
            columns[name] = texts[codes]
        else:
            values = column.to_numpy(zero_copy_only=False).astype(float)
            given = np.asarray(column.is_valid())  # only an empty cell is absent: a NaN written is refused
            wrong = np.flatnonzero(given & ~np.isfinite(values))
            if wrong.size:  # NaN and infinity are refused in every input, as the simulator's reader does
                problems.append(f"{source}: line {int(wrong[0]) + 2}: {name}: not a finite number"
                                + (f" ({wrong.size - 1} more line(s) like it)" if wrong.size > 1 else ""))
            columns[name] = values
    for name, allowed in (("duration_known", _KNOWN), ("observed_status", _STATUSES)):
        if name in columns:  # the values the simulator's reader takes (job_rows), an empty cell being none
            texts = columns[name]
            wrong = np.flatnonzero(~np.isin(texts, np.asarray([*allowed, None], dtype=object)))
            if wrong.size:
                problems.append(f"{source}: line {int(wrong[0]) + 2}: {name}: must be one of "
                                f"{', '.join(allowed)}, got {texts[wrong[0]]!r}"
                                + (f" ({wrong.size - 1} more line(s) like it)" if wrong.size > 1 else ""))
    for name, low, high, what in _RANGES:
        if name in columns:
            values = columns[name]
            wrong = np.flatnonzero(np.isfinite(values) & ((values < low) | (values > high)
                                                          | (name in _INTEGERS) & (values != np.round(values))))
            if wrong.size:
                problems.append(f"{source}: line {int(wrong[0]) + 2}: {name}: must be {what}, got {values[wrong[0]]:g}"
                                + (f" ({wrong.size - 1} more line(s) like it)" if wrong.size > 1 else ""))
    if problems:
        raise LoadError(problems)
    return columns


def _read_json_lines(path: Path) -> Any:
    """A JSON Lines job file as a pyarrow table of its known columns, read against their types.

    pyarrow's type inference takes seconds on one deeply nested value (a 10 KB line of 5,000 nested lists
    took 16 s of CPU), while read against the known columns' types it stops at the first cell that is not a
    scalar and skips unknown keys. A key no line gives stays absent, so the defaults apply; a text column
    given numbers or booleans (``"name": 7``) is read by inference, as it always was.
    """
    import pyarrow as pa
    import pyarrow.json as pajson

    schema = pa.schema([(n, pa.string() if t == "string" else pa.float64()) for n, t in _TYPES.items()])
    try:
        table = pajson.read_json(str(path), parse_options=pajson.ParseOptions(
            explicit_schema=schema, unexpected_field_behavior="ignore"))
        table = table.select([n for n in table.column_names if table[n].null_count < table.num_rows])
    except pa.ArrowInvalid as error:
        if re.search(r"changed from string to (number|boolean)", str(error)) is None:
            raise
        table = pajson.read_json(str(path))
        table = table.select([n for n in table.column_names if n in _TYPES])
    return pa.table({n: table[n].cast(pa.type_for_alias(_TYPES[n])) for n in table.column_names})


def _local_seconds(epoch_s: np.ndarray, timezone: str) -> np.ndarray:
    """Epoch seconds as seconds of local wall-clock time in ``timezone`` (offsets looked up once per hour)."""
    if timezone == "UTC":
        return epoch_s
    zone = zoneinfo.ZoneInfo(timezone)
    hours = np.floor(epoch_s / 3600.0)
    unique, inverse = np.unique(hours, return_inverse=True)
    offsets = np.array([_offset(datetime.fromtimestamp(h * 3600.0, zone)) for h in unique], dtype=float)
    return epoch_s + offsets[inverse]


def _offset(moment: datetime) -> float:
    offset = moment.utcoffset()
    return 0.0 if offset is None else offset.total_seconds()


def _cycle(slots: np.ndarray, start: float, end: float, unit: float, size: int,
           offset: int) -> tuple[tuple[float, ...] | None, float]:
    """Arrivals per slot (hour of day, day of week) over how often the slot occurs in [start, end), mean 1,
    and the chi-square test's p-value against a flat cycle (``None`` for the cycle when it cannot be told
    from flat at ``ALPHA``: noise is not a cycle)."""
    from scipy import stats

    counts = np.bincount(slots, minlength=size).astype(float)
    first, last = math.floor(start / unit), max(math.floor(start / unit) + 1, math.ceil(end / unit))
    exposure = np.bincount((np.arange(first, last) + offset) % size, minlength=size).astype(float)
    seen = exposure > 0
    expected = exposure[seen] / exposure[seen].sum() * counts[seen].sum()
    p_value = float(stats.chisquare(counts[seen], expected).pvalue) if seen.sum() > 1 else 1.0
    if p_value >= ALPHA:
        return None, p_value
    rate = np.divide(counts, exposure, out=np.zeros(size), where=seen)
    mean = rate[exposure > 0].mean() if (exposure > 0).any() else 0.0
    return tuple(round(float(v / mean), 3) if mean > 0 else 1.0 for v in rate), p_value


def _weights(values: np.ndarray) -> dict[Any, float]:
    if values.dtype == object:  # texts: counted, not sorted (an empty cell reads as None, counted as "")
        counted = Counter(values.tolist())
        total_texts = sum(counted.values())
        return {("" if k is None else str(k)): round(c / total_texts, 4) for k, c in sorted(
            counted.items(), key=lambda kv: "" if kv[0] is None else str(kv[0]))}
    keys, counts = np.unique(values, return_counts=True)
    total = counts.sum()
    return {(int(k) if isinstance(k, (np.integer, float, np.floating)) else str(k)): round(float(c / total), 4)
            for k, c in zip(keys, counts, strict=True)}


def _bursts(times: np.ndarray, rate_per_second: float) -> tuple[Bursts | None, np.ndarray]:
    """Bursts where submissions cluster more than Poisson arrivals at the share's rate would, and the
    arrival times the cycles are read from (each burst's first submission, or every job's)."""
    ordered = np.sort(times)
    if times.shape[0] < 20:
        return None, ordered
    breaks = np.diff(ordered) > BURST_GAP
    runs = int(breaks.sum()) + 1
    observed = ordered.shape[0] / runs
    poisson = math.exp(rate_per_second * BURST_GAP)  # mean run length of Poisson arrivals with that gap
    if observed < 1.5 * poisson:
        return None, ordered
    starts = np.concatenate(([0], np.flatnonzero(breaks) + 1))
    ends = np.concatenate((np.flatnonzero(breaks), [ordered.shape[0] - 1]))
    sizes = ends - starts + 1
    several = sizes > 1
    # k jobs uniform over a window S span S (k - 1) / (k + 1) on average: the window is read back from the span
    windows = (ordered[ends] - ordered[starts])[several] * (sizes[several] + 1) / (sizes[several] - 1)
    spread = float(np.median(windows)) if windows.size else 0.0
    return Bursts(mean_jobs=round(observed / poisson, 2), spread=round(spread, 1)), ordered[starts]


def fit_run_time(values: np.ndarray, rng: np.random.Generator, unknown: int) -> tuple[RunTime, str, list[str]]:
    """The run-time law of completed jobs' run times: a family the KS test accepts, else the quantiles."""
    from scipy import stats

    quantiles = {q: round(float(v), 1) for q, v in zip(QUANTILES, np.quantile(values, QUANTILES), strict=True)}
    quantiles = {q: max(v, 0.1) for q, v in quantiles.items()}
    sample = values if values.shape[0] <= SAMPLE else rng.choice(values, SAMPLE, replace=False)
    sample = np.maximum(sample, 0.1)
    if float(np.ptp(sample)) == 0:  # every run time the same: nothing to fit, the quantiles say it all
        return RunTime(law=Empirical(distribution="empirical"), quantiles=quantiles), "empirical", [
            f"every completed job ran {duration_text(float(sample[0]))}: run times follow the empirical quantiles"]
    candidates: list[tuple[float, float, str, Exponential | LogNormal | Pareto]] = []
    for name, family in (("exponential", stats.expon), ("lognormal", stats.lognorm), ("pareto", stats.pareto)):
        try:
            params = family.fit(sample, floc=0)
        except (ValueError, RuntimeError, FloatingPointError):
            continue
        test = stats.kstest(sample, family.cdf, args=params)
        law: Exponential | LogNormal | Pareto
        if not all(math.isfinite(p) for p in params) or params[-1] <= 0:
            continue
        try:
            if name == "exponential":
                law = Exponential(distribution="exponential", mean=round(float(params[-1]), 3))
            elif name == "lognormal":
                law = LogNormal(distribution="lognormal", median=round(float(params[-1]), 3),
                                sigma=round(float(params[0]), 4))
            else:
                law = Pareto(distribution="pareto", minimum=round(float(params[-1]), 3),
                             alpha=round(float(params[0]), 4))
        except ValidationError:  # parameters no profile may hold (a Pareto of alpha 105 on near-equal run times)
            continue
        candidates.append((float(test.statistic), float(test.pvalue), name, law))
    accepted = sorted(c for c in candidates if c[1] >= ALPHA)
    best = accepted[0] if accepted else min(candidates, default=None)
    notes: list[str] = []
    if best is None:
        record = None
    else:
        record = FitRecord(test="kolmogorov-smirnov", statistic=round(best[0], 5), p_value=round(best[1], 5),
                           sample=int(sample.shape[0]), completed_jobs=int(values.shape[0]), unknown_run_times=unknown)
    if accepted:
        return RunTime(law=accepted[0][3], quantiles=quantiles, fit=record), accepted[0][2], notes
    if best is not None:
        notes.append(f"no family passes the KS test at {ALPHA:g} (closest: {best[2]}, D={best[0]:.4f}, "
                     f"p={best[1]:.3g}): run times follow the empirical quantiles")
    return RunTime(law=Empirical(distribution="empirical"), quantiles=quantiles, fit=record), "empirical", notes


def _run_time_by_size(sizes: np.ndarray, run_values: np.ndarray, rng: np.random.Generator, least: int,
                      notes: list[str]) -> dict[int, RunTime]:
    """A run-time law per size with at least ``least`` completed jobs (``fit_run_time``, as for the share); smaller
    sizes draw the share's pooled law. Empty when the share ran one size only (its law is the share's)."""
    present, counts = np.unique(sizes, return_counts=True)
    if present.shape[0] < 2:
        return {}
    laws: dict[int, RunTime] = {}
    for size, count in zip(present.tolist(), counts.tolist(), strict=True):
        if count >= least:
            law, _, said = fit_run_time(run_values[sizes == size], rng, 0)
            laws[int(size)] = law
            notes += [f"size {size}: {note}" for note in said]
    pooled = [f"{size} ({count})" for size, count in zip(present.tolist(), counts.tolist(), strict=True)
              if count < least]
    if laws:
        own = ", ".join(f"{size} ({int((sizes == size).sum())} completed, {law.law.distribution})"
                        for size, law in laws.items())
        notes.append(f"run time by size: {own}" + (f"; size(s) {', '.join(pooled)} have fewer than {least} completed "
                                                   "jobs and draw the pooled run time" if pooled else ""))
    return laws


def _failure_point_by_size(failed_sizes: np.ndarray, failed: np.ndarray, sizes: np.ndarray, completed: np.ndarray,
                           classes: set[int], pooled: float, notes: list[str]) -> float:
    """``after`` for a history whose run times are drawn by size: the failed jobs' instance-hours over what they
    would hold at the mean completed run time of their size's law (its own size's, else the pooled one's).

    A drawn failure runs ``after`` times a run time of its size's law, so this ratio keeps the instance-hours
    failed jobs held (``_failure_point``'s ratio of means, weighted by size and taken per class)."""
    means = {size: float(np.mean(completed[sizes == size])) for size in classes}
    expected = np.asarray([means.get(int(size), pooled) for size in failed_sizes.tolist()])
    held = float((failed_sizes * expected).sum())
    if held <= 0:
        return 0.1
    ratio = float((failed_sizes * failed).sum()) / held
    if ratio > 1:
        notes.append(f"failed jobs held {ratio:.2f}x the instance-hours of completed jobs of their sizes; a profile "
                     "fails a job at most at the end of its run time (after 1), so their hours are undercounted")
    return min(1.0, ratio)


def _failure_point(failed: np.ndarray, completed: np.ndarray, notes: list[str]) -> float:
    """``after`` for a history: the failed jobs' mean run over the completed jobs' mean run time.

    Means, not medians: a generated failure runs ``after`` times a run time drawn from the completed jobs'
    law, so the ratio of means is what keeps the hours failed jobs held. Failures are typically more skewed
    than successes (most fail early, a few late), and a ratio of medians undercounts those hours: on the
    Philly window in the test data it held half of them.
    """
    typical = float(np.mean(completed)) if completed.size else float(np.mean(failed))
    if typical <= 0:
        return 0.1
    ratio = float(np.mean(failed)) / typical
    if ratio > 1:
        notes.append(f"failed jobs ran {ratio:.2f}x as long as completed ones on average; a profile fails a job "
                     "at most at the end of its run time (after 1), so their hours are undercounted")
    return min(1.0, ratio)


def fit_profile(columns: Mapping[str, np.ndarray], source: str, topology: Topology | None = None,
                timezone: str = "UTC", seed: int = 0, start_instant: datetime | None = None,
                min_jobs_per_size: int = MIN_JOBS_PER_SIZE) -> FitResult:
    """Fit one ``ShareProfile`` per share of the file (resolved against ``topology`` when given).

    Plan jobs (the ``training_plan`` column, which needs ``topology``: ``plan_column_problems``) are fitted per
    share and plan (``PlanUse``); the share's other laws come from its jobs off plans. ``start_instant`` is the
    instant ``submit_at`` 0 stands for, where plan windows are dates and the file has no ``submitted_epoch_ms``.
    A size with at least ``min_jobs_per_size`` completed jobs gets a run-time law of its own (``run_time_by_size``)."""
    rng = np.random.default_rng(seed)
    count = columns["share"].shape[0]
    unused: dict[str, int] = {}
    usable = np.ones(count, dtype=bool)

    def drop(mask: np.ndarray, why: str) -> None:
        newly = mask & usable
        if newly.any():
            unused[why] = unused.get(why, 0) + int(newly.sum())
            usable[newly] = False

    shares = columns["share"]
    names = [s for s in set(shares.tolist()) if s is not None]
    drop(np.asarray(shares == None) | np.asarray(shares == ""), "no share")  # noqa: E711 (elementwise)
    for name in ("instances", "submit_at", "duration"):
        drop(~np.isfinite(columns[name]), f"no {name}")
    drop(columns["instances"] < 1, "instances below 1")
    if topology is not None:
        resolved = shares.copy()
        for ref in names:
            share_id = topology.find_share(ref).share_id if ref else None
            same = np.asarray(shares == ref)
            if share_id is None:
                drop(same, "share not in the topology")
            else:
                resolved[same] = share_id
        shares = resolved
    epoch = columns.get("submitted_epoch_ms")
    absolute = epoch is not None and bool(np.isfinite(epoch[usable]).all()) and bool(usable.any())
    notes: list[str] = []
    if absolute:
        assert epoch is not None
        local = _local_seconds(epoch / 1000.0, timezone)
        start_day = math.floor(float(local[usable].min()) / 86400.0)
        clock = local - start_day * 86400.0
        weekday_offset = (start_day + _EPOCH_WEEKDAY) % DAYS_PER_WEEK
    else:
        clock = columns["submit_at"].astype(float)
        weekday_offset = start_day = 0
        notes.append("no submitted_epoch_ms column: daily and weekly cycles are read from submit_at as seconds "
                     "since a Monday 00:00 (as generate writes them)")
    times = clock[usable]
    start, end = (float(times.min()), float(times.max())) if times.size else (0.0, 0.0)
    span_days = max((end - start) / 86400.0, 1 / 24)
    status = columns.get("observed_status", columns.get("status"))
    known = columns.get("duration_known")
    plan_of = _plan_names(columns.get("training_plan"), topology)
    clocks: dict[str, PlanClock] = {}
    if plan_of is not None and topology is not None:
        clocks = _plan_clocks_for(topology, columns, usable, absolute, start_instant, timezone, start_day, notes)
    elif "training_plan" in columns and topology is None:  # the command refuses this (plan_column_problems)
        named = sum(1 for ref in columns["training_plan"][usable].tolist() if ref not in (None, ""))
        if named:
            notes.append(f"{named} job(s) name a training plan, fitted as jobs off plans: without a topology their "
                         "plans' windows are unknown")
    fits: dict[str, ShareFit] = {}
    for share in sorted(set(shares[usable].tolist())):
        mask = usable & (shares == share)
        fits[share] = _fit_share(share, mask, columns, clock, status, known, start, end, span_days,
                                 weekday_offset, rng, plan_of, clocks, min_jobs_per_size,
                                 _only_type(topology, share))
    if topology is not None:  # a share with no job in the window submits nothing, rather than generate's defaults
        for queue, model in topology.shares():
            sid = f"{queue.name}/{model.name}"
            if sid not in fits and model.state == "ENABLED":
                fits[sid] = ShareFit(sid, 0, 0, 0, {}, {1: 1.0}, None, None, "none", None, None,
                                     ShareProfile(jobs_per_day=0.0), ["no job in the window: submits nothing"])
    if span_days < 2 * DAYS_PER_WEEK:
        notes.append(f"the window is {span_days:.1f} day(s), shorter than two weeks: every share gets a flat week")
    used = _used_columns(columns, absolute, status is not None)
    ignored = [name for name in _TYPES if name in columns and name not in used]
    if ignored:
        notes.append("column(s) not used by fit: " + "; ".join(
            f"{name} ({_NOT_USED.get(name, _ignored_why(name))})" for name in ignored))
    return FitResult(fits, timezone, span_days, absolute, unused, notes)


def _only_type(topology: Topology | None, share_id: str) -> str | None:
    """The instance type of a share of one type (a job that names none runs on it, as ``simulate`` reads a job
    file); ``None`` without a topology or for a share of several types."""
    if topology is None:
        return None
    match = topology.find_share(share_id)
    queue = None if match.queue is None else topology.queue(match.queue)
    model = None if queue is None or match.share is None else queue.share(match.share)
    return next(iter(model.capacity)) if model is not None and len(model.capacity) == 1 else None


def _hours_by_type(columns: Mapping[str, np.ndarray], jobs: np.ndarray, only_type: str | None
                   ) -> dict[str | None, float]:
    """The jobs' instance-hours (instances x duration) per instance type, sorted by type (no type last); a job that
    names no type counts under ``only_type``."""
    hours = columns["instances"][jobs] * columns["duration"][jobs] / 3600.0
    given = columns.get("instance_type")
    types = np.full(hours.shape[0], None, dtype=object) if given is None else given[jobs].copy()
    types[np.asarray(types == None) | np.asarray(types == "")] = only_type  # noqa: E711 (elementwise)
    named, inverse = np.unique(np.asarray(["" if t is None else str(t) for t in types.tolist()], dtype=object),
                               return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=hours, minlength=named.shape[0])
    by_type = {(name or None): float(total) for name, total in zip(named.tolist(), sums.tolist(), strict=True)}
    return dict(sorted(by_type.items(), key=lambda item: (item[0] is None, item[0] or "")))


def _used_columns(columns: Mapping[str, np.ndarray], absolute: bool, has_status: bool) -> set[str]:
    """The columns this fit read something from."""
    used = {"share", "duration", "instances", "instance_type", "priority", "preemption_retries", "duration_known",
            "training_plan"}
    used.add("submitted_epoch_ms" if absolute else "submit_at")
    if absolute:
        used.add("submit_at")  # plan windows in seconds count from submit_at's 0
    if has_status:
        used.add("observed_status" if "observed_status" in columns else "status")
    else:
        used |= {"failures", "attempts", "fail_after"}
    return used


def _ignored_why(name: str) -> str:
    return {"status": "observed_status is read instead", "submitted_epoch_ms": "a cell is missing in a used row",
            "failures": "observed_status says which jobs failed", "attempts": "observed_status says which failed",
            "fail_after": "a failed job's run time is its duration"}.get(name, "not read")


def plan_column_problems(columns: Mapping[str, np.ndarray], source: str, topology: Topology | None) -> list[str]:
    """What is wrong with the ``training_plan`` column for ``fit``: a plan needs ``--topology`` (its windows say
    when each job was submitted relative to them); a plan the topology lacks, or of another instance type than the
    job's, is refused as ``simulate`` refuses it. One line per kind of problem, naming the first line."""
    plans = columns.get("training_plan")
    if plans is None:
        return []
    named = np.flatnonzero(np.asarray([p not in (None, "") for p in plans.tolist()], dtype=bool))
    if not named.size:
        return []
    if topology is None:
        return [f"{source}: line {int(named[0]) + 2}: training_plan: {named.size:,} job(s) name a training plan; give "
                "--topology (its plans' windows say when each job was submitted relative to them)"]
    problems: list[str] = []
    unknown = [int(i) for i in named if topology.plan(str(plans[i])) is None]
    if unknown:
        known = ", ".join(p.name for p in topology.training_plans) or "none defined"
        problems.append(f"{source}: line {unknown[0] + 2}: training_plan: no training plan {plans[unknown[0]]!r} in "
                        f"the topology (known: {known})" + (f" ({len(unknown) - 1} more line(s) like it)"
                                                              if len(unknown) > 1 else ""))
    types = columns.get("instance_type")
    if types is not None:
        wrong = [int(i) for i in named if (plan := topology.plan(str(plans[i]))) is not None
                 and types[i] not in (None, "") and types[i] != plan.instance_type]
        if wrong:
            plan = topology.plan(str(plans[wrong[0]]))
            assert plan is not None
            problems.append(f"{source}: line {wrong[0] + 2}: training_plan: plan {plan.name} reserves "
                            f"{plan.instance_type}; the job runs on {types[wrong[0]]}"
                            + (f" ({len(wrong) - 1} more line(s) like it)" if len(wrong) > 1 else ""))
    return problems


def _plan_names(plans: np.ndarray | None, topology: Topology | None) -> np.ndarray | None:
    """Each row's plan by the topology's name (an ARN resolved), ``None`` off plans; ``None`` without plan jobs."""
    if plans is None or topology is None:
        return None
    names = {ref: plan.name for ref in set(plans.tolist()) if ref not in (None, "")
             and (plan := topology.plan(str(ref))) is not None}
    if not names:
        return None
    return np.asarray([names.get(ref) for ref in plans.tolist()], dtype=object)


def _plan_clocks_for(topology: Topology, columns: Mapping[str, np.ndarray], usable: np.ndarray, absolute: bool,
                     start_instant: datetime | None, timezone: str, start_day: int,
                     notes: list[str]) -> dict[str, PlanClock]:
    """The topology's plans on the fit's clock: local seconds from the first day (``absolute``, from
    ``submitted_epoch_ms``) or ``submit_at`` as generate writes it."""
    origin = start_instant
    if not absolute:
        if origin is None and (origin := default_origin(topology, timezone)) is not None:
            notes.append(f"plan windows are dates and the file has no submitted_epoch_ms: submit_at 0 is read as "
                         f"{plan_time_text(origin)} (the Monday 00:00 in {timezone} on or before the first window, "
                         "as generate writes it; --start to say otherwise)")
        return plan_clocks(topology, origin)
    epoch = columns["submitted_epoch_ms"] / 1000.0
    if origin is None:  # plan windows in seconds count from submit_at's 0: the instant it stands for, from the rows
        zero = float(np.median((epoch - columns["submit_at"])[usable])) if usable.any() else 0.0
    else:
        zero = origin.timestamp()
    out = {}
    for plan in topology.training_plans:
        on_epoch = plan_clock(plan, datetime.fromtimestamp(zero, UTC))
        windows = []
        for window in on_epoch.windows:
            start_local, cutoff_local = _local_seconds(np.asarray([window.start + zero, window.cutoff + zero]),
                                                       timezone) - start_day * 86400.0
            windows.append(ClockWindow(window.index, window.instances, float(start_local), float(cutoff_local)))
        out[plan.name] = PlanClock(plan.name, plan.instance_type, tuple(windows))
    return out


def _fit_share(share: str, everything: np.ndarray, columns: Mapping[str, np.ndarray], clock: np.ndarray,
               status: np.ndarray | None, known: np.ndarray | None, start: float, end: float, span_days: float,
               weekday_offset: int, rng: np.random.Generator, plan_of: np.ndarray | None = None,
               clocks: Mapping[str, PlanClock] | None = None,
               min_jobs_per_size: int = MIN_JOBS_PER_SIZE, only_type: str | None = None) -> ShareFit:
    """One share's profile: its rate from every job, its plan jobs' ``PlanUse`` per plan, and its other laws from
    its jobs off plans (all of them when every job is on a plan). ``only_type``: the type of a job that names none."""
    notes: list[str] = []
    jobs = int(everything.sum())
    all_hours = _hours_by_type(columns, everything, only_type)
    mask = everything
    plans: dict[str, PlanUse] | None = None
    plan_jobs: dict[str, int] = {}
    if plan_of is not None and clocks:
        on_plan = everything & np.asarray(plan_of != None)  # noqa: E711 (elementwise)
        if on_plan.any():
            plans = _fit_plans(share, everything, on_plan, plan_of, columns, clock, status, known, clocks, rng, notes)
            plan_jobs = dict(Counter(plan_of[on_plan].tolist()))
            if (everything & ~on_plan).any():
                mask = everything & ~on_plan
    times = clock[mask]
    instances = columns["instances"][mask].astype(np.int64)
    durations = columns["duration"][mask]
    count = int(mask.sum())  # the jobs the laws below are read from (off plans)
    completed = np.ones(count, dtype=bool)
    failed = np.zeros(count, dtype=bool)
    if status is not None:
        st = status[mask]
        completed &= st == "SUCCEEDED"
        failed = st == "FAILED"
    if known is not None:
        cells = known[mask]
        for value in set(cells.tolist()):
            if str(value).lower() in ("false", "0", "no"):
                completed &= np.asarray(cells != value)
    planned = "failures" in columns and status is None  # a job file (generate's): failures planned per job
    if planned:
        attempts = np.nan_to_num(columns["attempts"][mask], nan=1.0) if "attempts" in columns else np.ones(count)
        failed = np.nan_to_num(columns["failures"][mask], nan=0.0) >= attempts
        completed &= ~failed
    unknown = int(count - completed.sum() - failed.sum())
    daily = weekly = None
    p_daily = p_weekly = None
    bursts, arrivals = _bursts(times, times.shape[0] / (span_days * 86400.0))
    few_daily = "flat (few jobs)" if span_days >= 2 else "flat (< 2 days)"
    if span_days >= 2 and arrivals.shape[0] >= MIN_DAILY_JOBS:
        slots = (np.floor(arrivals / 3600.0).astype(np.int64)) % HOURS_PER_DAY
        daily, p_daily = _cycle(slots, start, end, 3600.0, HOURS_PER_DAY, 0)
    few_weekly = "flat (few jobs)" if span_days >= 2 * DAYS_PER_WEEK else "flat (< 2 weeks)"
    if span_days >= 2 * DAYS_PER_WEEK and arrivals.shape[0] >= MIN_WEEKLY_JOBS:
        days = (np.floor(arrivals / 86400.0).astype(np.int64) + weekday_offset) % DAYS_PER_WEEK
        weekly, p_weekly = _cycle(days, start, end, 86400.0, DAYS_PER_WEEK, weekday_offset)
    sizes = _weights(instances)
    types = _weights(columns["instance_type"][mask]) if "instance_type" in columns else None
    if types is not None and any(k in (None, "None", "") for k in types):
        types = None
    priorities = _weights(columns["priority"][mask].astype(np.int64)) if "priority" in columns else {1: 1.0}
    run_values = durations[completed]
    p50: float | None
    p95: float | None
    if run_values.shape[0] >= MIN_RUN_TIMES:
        run_time, family, said = fit_run_time(run_values, rng, unknown)
        notes += said
        p50, p95 = (float(np.quantile(run_values, q)) for q in (0.5, 0.95))
    else:
        run_time, family = DEFAULT_RUN_TIME, "default"
        notes.append(f"{run_values.shape[0]} completed job(s), fewer than {MIN_RUN_TIMES}: run time falls back "
                     "to generate's default (exponential, mean 1h)")
        p50 = p95 = None
    by_size = _run_time_by_size(instances[completed], run_values, rng, min_jobs_per_size, notes)
    pooled_values, pooled = run_values, run_time  # the table describes all completed jobs; the file the pooled law
    if by_size:  # the sizes without a law of their own draw the law of their completed jobs, the pooled one
        rest = ~np.isin(instances[completed], np.fromiter(by_size, np.int64))
        if rest.sum() >= MIN_RUN_TIMES:
            pooled_values = run_values[rest]
            pooled, _, said = fit_run_time(pooled_values, rng, unknown)
            notes += [f"pooled sizes: {note}" for note in said]
        elif rest.any():
            notes.append(f"the sizes without a law of their own have {int(rest.sum())} completed job(s), fewer than "
                         f"{MIN_RUN_TIMES}: they draw the law of all the share's completed jobs")
    if unknown:
        notes.append(f"{unknown} job(s) without a known run time (preempted or terminated before finishing, or "
                     "still running) are left out of the run-time law")
    early = None
    finished = int(completed.sum() + failed.sum())
    if failed.any() and finished:
        if planned and "fail_after" in columns:  # the failure point is in the file: a fraction of the run time
            points = columns["fail_after"][mask][failed] / np.maximum(durations[failed], 1e-9)
            after = min(1.0, float(np.nanmedian(points))) if np.isfinite(points).any() else 1.0
        elif by_size:  # a history, run times by size: failed jobs' instance-hours over those of their sizes' means
            after = _failure_point_by_size(instances[failed], durations[failed], instances[completed], run_values,
                                           set(by_size), float(np.mean(pooled_values)), notes)
        else:  # a history: the mean time failed jobs ran over the completed ones' mean run time
            after = _failure_point(durations[failed], run_values, notes)
        early = EarlyFailures(fraction=round(float(failed.sum()) / finished, 4), after=round(after, 3))
    retries = None
    if "preemption_retries" in columns:
        given = columns["preemption_retries"][mask]
        given = given[np.isfinite(given)]
        if given.size:
            values, counts = np.unique(given.astype(np.int64), return_counts=True)
            retries = int(values[np.argmax(counts)])
    profile = ShareProfile(jobs_per_day=round(jobs / span_days, 3), daily_cycle=daily, weekly_cycle=weekly,
                           bursts=bursts, sizes=sizes, instance_types=types, run_time=pooled,
                           run_time_by_size=by_size or None, priorities=priorities, preemption_retries=retries,
                           early_failures=early, training_plans=plans)
    hours = {instance_type: total / span_days for instance_type, total in all_hours.items()}
    fit = run_time.fit
    return ShareFit(share, jobs, int(completed.sum()), unknown, hours, sizes, p50, p95, family,
                    None if fit is None else fit.statistic, None if fit is None else fit.p_value, profile, notes,
                    _cycle_text(daily, p_daily, few_daily), _cycle_text(weekly, p_weekly, few_weekly),
                    dict(sorted(plan_jobs.items())))


def _completed(rows: np.ndarray, status: np.ndarray | None, known: np.ndarray | None) -> np.ndarray:
    """Which of ``rows`` completed (their duration is a run time): SUCCEEDED where a status is given, and
    ``duration_known`` not false."""
    done = rows.copy()
    if status is not None:
        done &= status == "SUCCEEDED"
    if known is not None:
        done &= ~np.isin(known, np.asarray(["false", "0", "no", "False"], dtype=object))
    return done


def _fit_plans(share: str, everything: np.ndarray, on_plan: np.ndarray, plan_of: np.ndarray,
               columns: Mapping[str, np.ndarray], clock: np.ndarray, status: np.ndarray | None,
               known: np.ndarray | None, clocks: Mapping[str, PlanClock], rng: np.random.Generator,
               notes: list[str]) -> dict[str, PlanUse] | None:
    """Per plan the share's jobs name: their part of the share's jobs, the timing mix (``plan_timing.classify``),
    the lead of those submitted before a window, their sizes and run times."""
    jobs = int(everything.sum())
    uses: dict[str, PlanUse] = {}
    for name in sorted(set(plan_of[on_plan].tolist())):
        rows = on_plan & (plan_of == name)
        plan = clocks[name]
        timed = classify(clock[rows], plan, DEFAULT_NIGHT)
        counted = Counter(t for t in timed.timings if t is not None)
        late = sum(1 for t in timed.timings if t is None)
        if late:
            notes.append(f"{name}: {late} plan job(s) submitted after the plan's last window accepted jobs: counted in "
                         "its fraction, not in its timing")
        if not counted:
            notes.append(f"{name}: no plan job of the share was submitted before a window's cutoff: no timing to fit, "
                         f"so its {int(rows.sum())} job(s) are not drawn on the plan")
            continue
        timing = {t: round(counted[t] / sum(counted.values()), 4) for t in PlanTiming if counted[t]}
        lead = None
        if timed.leads.size:
            fitted, _, _ = (fit_run_time(timed.leads, rng, 0) if timed.leads.size >= MIN_RUN_TIMES
                            else (_quantiles_only(timed.leads), "empirical", []))
            lead = LeadTime(law=fitted.law, quantiles=fitted.quantiles)
        largest = max((w.instances for w in plan.windows), default=0)
        sizes = _weights(columns["instances"][rows].astype(np.int64))
        too_big = sorted(s for s in sizes if s > largest)
        if too_big:
            notes.append(f"{name}: size(s) {', '.join(map(str, too_big))} of its plan jobs exceed the plan's largest "
                         f"window ({largest} instance(s)): left out of the plan's size mix, they could never start")
            sizes = {s: w for s, w in sizes.items() if s <= largest}
            if not sizes:
                notes.append(f"{name}: no size of its plan jobs fits the plan: not drawn on the plan")
                continue
        run_values = columns["duration"][rows & _completed(rows, status, known)]
        run_time = None
        if run_values.shape[0] >= MIN_RUN_TIMES:
            run_time, _, said = fit_run_time(run_values, rng, 0)
            notes += [f"{name}: {note}" for note in said]
        else:
            notes.append(f"{name}: {run_values.shape[0]} completed plan job(s), fewer than {MIN_RUN_TIMES}: they draw "
                         "the share's run time")
        uses[name] = PlanUse(fraction=round(int(rows.sum()) / jobs, 4), timing=timing, lead=lead,
                             sizes=sizes, run_time=run_time)
    return uses or None


def _quantiles_only(values: np.ndarray) -> RunTime:
    quantiles = {q: max(round(float(v), 1), 0.1) for q, v in zip(QUANTILES, np.quantile(values, QUANTILES),
                                                                  strict=True)}
    return RunTime(law=Empirical(distribution="empirical"), quantiles=quantiles)
