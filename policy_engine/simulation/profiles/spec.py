"""The workload-profile file: one entry per quota share, closed and typed like a topology.

Every law is a value of its own class, so ``sampling`` draws from it and ``writing`` writes it
without parsing anything back. Multipliers and weights are relative: a daily cycle of 24 numbers
is normalised to mean 1, so ``jobs_per_day`` stays the mean rate whatever the cycle.
"""

from __future__ import annotations

from enum import StrEnum
from itertools import pairwise
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from policy_engine.foundation import bounds

HOURS_PER_DAY = 24
DAYS_PER_WEEK = 7

#: The longest run time, burst window or cap a profile may give: the job files' bound (``bounds.MAX_SECONDS``),
#: so a drawn workload always loads and every job ``fit`` reads fits in the profile it writes.
MAX_SECONDS = float(bounds.MAX_SECONDS)
#: The most jobs a day one share may submit (a million-job month is about 33,000 a day).
MAX_JOBS_PER_DAY = 10_000_000.0

PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]
#: A weight or a multiplier: relative, so bounded (``bounds.MAX_WEIGHT``) to keep their sums finite.
NonNegativeFloat = Annotated[float, Field(ge=0, le=bounds.MAX_WEIGHT, allow_inf_nan=False, strict=True)]
Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False, strict=True)]


class _Closed(BaseModel):
    """Unknown keys and wrong types are errors (numbers may be written as integers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def _positive_total(weights: dict[int, float] | dict[str, float], what: str) -> None:
    if not weights or sum(weights.values()) <= 0:
        raise ValueError(f"{what}: at least one weight must be positive")


class Exponential(_Closed):
    """Memoryless run times with this mean (seconds)."""

    distribution: Literal["exponential"]
    mean: Seconds


class LogNormal(_Closed):
    """Run times whose logarithm is normal: ``median`` seconds, ``sigma`` the spread of the log."""

    distribution: Literal["lognormal"]
    median: Seconds
    sigma: Annotated[float, Field(gt=0, le=10, allow_inf_nan=False, strict=True)]


class Pareto(_Closed):
    """Heavy-tailed run times: at least ``minimum`` seconds, tail index ``alpha`` (> 1 for a finite mean)."""

    distribution: Literal["pareto"]
    minimum: Seconds
    alpha: Annotated[float, Field(gt=1, le=100, allow_inf_nan=False, strict=True)]


class Empirical(_Closed):
    """Run times drawn from quantiles (interpolated on a log scale); nothing outside the first and last."""

    distribution: Literal["empirical"]


class FitRecord(_Closed):
    """How ``fit`` chose the law (kept for the reader; ``generate`` ignores it)."""

    test: Literal["kolmogorov-smirnov"]
    statistic: NonNegativeFloat
    p_value: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False, strict=True)]
    sample: Annotated[int, Field(ge=1, strict=True)]
    completed_jobs: Annotated[int, Field(ge=0, strict=True)]
    unknown_run_times: Annotated[int, Field(ge=0, strict=True)] = 0


class RunTime(_Closed):
    """One run-time law, plus the empirical quantiles (``fit`` always writes them; ``empirical`` draws from them)."""

    law: Exponential | LogNormal | Pareto | Empirical = Field(discriminator="distribution")
    #: quantile (0-1) -> seconds; non-decreasing in the quantile
    quantiles: dict[Annotated[float, Field(strict=True)], Seconds] = Field(default_factory=dict)
    #: no run time above this many seconds (a drawn value is capped)
    maximum: Seconds | None = None
    fit: FitRecord | None = None

    @field_validator("quantiles")
    @classmethod
    def _ordered(cls, quantiles: dict[float, float]) -> dict[float, float]:
        for q in quantiles:
            if not 0 <= q <= 1:
                raise ValueError(f"quantile {q:g} is outside 0-1")
        ordered = sorted(quantiles.items())
        for (q1, v1), (q2, v2) in pairwise(ordered):
            if v2 < v1:
                raise ValueError(f"quantiles must not decrease: {q1:g} -> {v1:g} s but {q2:g} -> {v2:g} s")
        return dict(ordered)

    @model_validator(mode="after")
    def _empirical_has_quantiles(self) -> RunTime:
        if isinstance(self.law, Empirical) and len(self.quantiles) < 2:
            raise ValueError("an empirical run time needs at least two quantiles (e.g. 0: 60, 1: 86400)")
        return self


class Bursts(_Closed):
    """Jobs arrive in batches: a geometric number of jobs (mean ``mean_jobs``) within ``spread`` seconds."""

    mean_jobs: Annotated[float, Field(ge=1, allow_inf_nan=False, strict=True)]
    spread: Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False, strict=True)] = 60.0


class EarlyFailures(_Closed):
    """That ``fraction`` of jobs fail (no retry) after ``after`` of their run time (0-1)."""

    fraction: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False, strict=True)]
    after: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False, strict=True)] = 0.1


class PlanTiming(StrEnum):
    """When a plan job is submitted relative to its window (docs/workloads.md, "Plan jobs", says why these three).

    ``before_window``: a lead time before the window's start, drawn from ``PlanUse.lead``; ``night_before``: in the
    night before the window's start day (``WorkloadProfile.night``), the pattern that holds a share's quota all
    night under ``plan_dispatch: dispatch``; ``inside_window``: while the window is Active and still accepts jobs.
    """

    BEFORE_WINDOW = "before_window"
    NIGHT_BEFORE = "night_before"
    INSIDE_WINDOW = "inside_window"


class LeadTime(RunTime):
    """How long before its window's start a ``before_window`` plan job is submitted: a law of seconds, as a run time."""


class PlanUse(_Closed):
    """One share's jobs on one training plan: which part of its jobs, when they are submitted, their sizes and run
    times (the share's own when not given)."""

    #: the part of the share's jobs (``jobs_per_day``) that run on the plan, 0-1
    fraction: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False, strict=True)]
    #: timing -> weight (a single timing is a weight of 1)
    timing: dict[PlanTiming, NonNegativeFloat]
    #: the lead of ``before_window`` jobs (required when that timing has a weight)
    lead: LeadTime | None = None
    #: instances per plan job -> weight; default: the share's ``sizes`` (a size must fit the plan's largest window)
    sizes: dict[Annotated[int, Field(ge=1, le=bounds.MAX_INSTANCES, strict=True)], NonNegativeFloat] | None = None
    #: the plan jobs' run time; default: the share's ``run_time``
    run_time: RunTime | None = None

    @field_validator("timing", mode="before")
    @classmethod
    def _one_timing(cls, timing: Any) -> Any:
        return {timing: 1.0} if isinstance(timing, str) else timing

    @field_validator("timing", "sizes")
    @classmethod
    def _weights(cls, weights: dict[Any, float] | None) -> dict[Any, float] | None:
        if weights is not None:
            _positive_total(weights, "weights")
        return weights

    @model_validator(mode="after")
    def _lead_for_before(self) -> PlanUse:
        before = self.timing.get(PlanTiming.BEFORE_WINDOW, 0) > 0
        if before and self.lead is None:
            raise ValueError("a before_window timing needs lead: the law of how long before the window's start "
                             "(e.g. {law: {distribution: lognormal, median: 43200, sigma: 0.8}})")
        if not before and self.lead is not None:
            raise ValueError("lead is for a before_window timing, which has no weight here: it would draw nothing")
        return self

    def timing_weights(self) -> dict[PlanTiming, float]:
        """The timings with a positive weight, normalised to sum 1, in the enum's order."""
        total = sum(self.timing.values())
        return {t: self.timing[t] / total for t in PlanTiming if self.timing.get(t, 0) > 0}


class ShareProfile(_Closed):
    """How one team submits: arrivals, sizes, instance types, run times, priorities, failures."""

    jobs_per_day: Annotated[float, Field(ge=0, le=MAX_JOBS_PER_DAY, allow_inf_nan=False, strict=True)]
    #: 24 multipliers, one per hour of the day (the profile's ``timezone``); normalised to mean 1
    daily_cycle: tuple[NonNegativeFloat, ...] | None = None
    #: 7 multipliers, Monday first; normalised to mean 1
    weekly_cycle: tuple[NonNegativeFloat, ...] | None = None
    bursts: Bursts | None = None
    #: instances per job -> weight
    sizes: dict[Annotated[int, Field(ge=1, le=bounds.MAX_INSTANCES, strict=True)], NonNegativeFloat] = Field(
        default_factory=lambda: {1: 1.0})
    #: instance type -> weight; default: the share's limits of each type
    instance_types: dict[str, NonNegativeFloat] | None = None
    run_time: RunTime = Field(default_factory=lambda: RunTime(law=Exponential(distribution="exponential",
                                                                              mean=3600.0)))
    #: priority -> weight
    priorities: dict[Annotated[int, Field(ge=0, le=9999, strict=True)], NonNegativeFloat] = Field(
        default_factory=lambda: {1: 1.0})
    #: AWS's preemptionRetriesBeforeTermination for every job (None: unlimited)
    preemption_retries: Annotated[int, Field(ge=0, strict=True)] | None = None
    early_failures: EarlyFailures | None = None
    #: training plan (its name in the topology) -> how the share's jobs use it (docs/workloads.md, "Plan jobs")
    training_plans: dict[Annotated[str, Field(strict=True, min_length=1)], PlanUse] | None = None

    @field_validator("training_plans")
    @classmethod
    def _plan_fractions(cls, plans: dict[str, PlanUse] | None) -> dict[str, PlanUse] | None:
        if plans is not None and sum(use.fraction for use in plans.values()) > 1 + 1e-9:
            total = sum(use.fraction for use in plans.values())
            raise ValueError(f"the plans' fractions add up to {total:g}; at most 1 (each is a part of the share's "
                             "jobs)")
        return plans

    @field_validator("daily_cycle")
    @classmethod
    def _day(cls, cycle: tuple[float, ...] | None) -> tuple[float, ...] | None:
        if cycle is not None and (len(cycle) != HOURS_PER_DAY or sum(cycle) <= 0):
            raise ValueError(f"expected {HOURS_PER_DAY} multipliers (one per hour), not all 0; {len(cycle)} given")
        return cycle

    @field_validator("weekly_cycle")
    @classmethod
    def _week(cls, cycle: tuple[float, ...] | None) -> tuple[float, ...] | None:
        if cycle is not None and (len(cycle) != DAYS_PER_WEEK or sum(cycle) <= 0):
            raise ValueError(f"expected {DAYS_PER_WEEK} multipliers (Monday first), not all 0; {len(cycle)} given")
        return cycle

    @field_validator("sizes", "priorities", "instance_types")
    @classmethod
    def _weights(cls, weights: dict[Any, float] | None) -> dict[Any, float] | None:
        if weights is not None:
            _positive_total(weights, "weights")
        return weights


class Night(_Closed):
    """The night a ``night_before`` plan job is submitted in: from ``from_hour`` on the day before its window's start
    day to ``to_hour`` on that day (the profile's time zone), and never after the window's start."""

    from_hour: Annotated[int, Field(ge=0, le=HOURS_PER_DAY, strict=True)] = 18
    to_hour: Annotated[int, Field(ge=0, le=HOURS_PER_DAY, strict=True)] = 6


class WorkloadProfile(_Closed):
    """A profile file: the shares it describes (``QUEUE/SHARE``, or ``SHARE`` when unique)."""

    #: the zone the cycles are read in (an IANA name); generated time 0 is a Monday 00:00 there
    timezone: str = "UTC"
    #: what ``night_before`` means for plan jobs (``None``: ``Night()``, 18:00 to 06:00; docs/workloads.md)
    night: Night | None = None
    shares: dict[str, ShareProfile]
