"""A topology's targets judged on a finished run: each criterion met or missed, with the margin.

Read after the run from the job records and the share metrics, never on the hot path. A target holds
one share (or its jobs of one instance type) to up to four criteria; each is one ``TargetResult``.
Waits are the nearest-rank percentiles ``simulate`` reports of each job's time RUNNABLE (``wait_seconds``:
submission to placement plus every requeue to the next placement, to the end of the run for a job never
placed again; before this release, to the first start only); a utilisation target without an instance type is judged per
type of the share (never summed across types), so it yields one result per type.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from policy_engine.foundation.json_data import JsonObject
from policy_engine.foundation.units import Unit
from policy_engine.simulation.results.metrics import percentile

if TYPE_CHECKING:
    from policy_engine.foundation.model import Target, Topology
    from policy_engine.simulation.results.records import JobRecord, SimulationResult


class Criterion(Enum):
    """What a target holds a share to; the value is the topology's key."""

    WAIT_P95 = "wait_p95"
    WAIT_P50 = "wait_p50"
    MAX_PREEMPTIONS = "max_preemptions_per_job"
    MIN_UTILISATION = "min_utilisation"

    @property
    def at_least(self) -> bool:
        """The figure must reach the goal (utilisation), not stay under it (waits, preemptions)."""
        return self is Criterion.MIN_UTILISATION

    @property
    def unit(self) -> Unit:
        if self is Criterion.MIN_UTILISATION:
            return Unit.FRACTION
        return Unit.COUNT if self is Criterion.MAX_PREEMPTIONS else Unit.SECONDS

    @property
    def label(self) -> str:
        return {Criterion.WAIT_P95: "wait p95", Criterion.WAIT_P50: "wait p50",
                Criterion.MAX_PREEMPTIONS: "preemptions per job", Criterion.MIN_UTILISATION: "own utilisation"}[self]


@dataclass(frozen=True)
class TargetResult:
    """One criterion of one target on one run; ``margin`` > 0 is headroom, < 0 how far it is missed."""

    index: int  # the target's position in the topology's ``targets``
    share: str  # QUEUE/SHARE
    instance_type: str | None  # the type judged (``None``: every job of the share)
    criterion: Criterion
    goal: float
    actual: float
    jobs: int  # jobs the figure is computed from (for utilisation: those of the type)

    @property
    def margin(self) -> float:
        difference = self.actual - self.goal if self.criterion.at_least else self.goal - self.actual
        return 0.0 if abs(difference) < 1e-12 else difference

    @property
    def met(self) -> bool:
        return self.margin >= 0

    @property
    def subject(self) -> str:
        """``training/A ml.p4d.24xlarge``: what the target is about."""
        return self.share + (f" {self.instance_type}" if self.instance_type else "")

    def to_json(self) -> JsonObject:
        """Seconds, counts and fractions as numbers (``margin``: positive is headroom)."""
        return {"target": self.index, "share": self.share, "instance_type": self.instance_type,
                "criterion": self.criterion.value, "goal": self.goal, "actual": self.actual, "jobs": self.jobs,
                "met": self.met, "margin": round(self.margin, 9) + 0.0}


def _resolved(topology: Topology) -> list[tuple[int, Target, str]]:
    """Each target with its canonical share (the loader refused targets naming no share)."""
    out = []
    for index, target in enumerate(topology.targets):
        share = topology.find_share(target.share).share_id
        if share is not None:
            out.append((index, target, share))
    return out


def _outcomes(jobs: Sequence[JobRecord]) -> Iterator[tuple[str, str, float, int]]:
    """``(share, type, wait, preemptions)`` per job; from the record columns when the records are columns."""
    outcomes = getattr(jobs, "outcomes", None)
    if outcomes is not None:
        return outcomes()
    return ((job.share, job.instance_type, job.wait_seconds, job.preemptions) for job in jobs)


def evaluate_targets(topology: Topology, result: SimulationResult) -> list[TargetResult]:
    """Every criterion of every target of ``topology`` on ``result``, in declaration order."""
    targets = _resolved(topology)
    if not targets:
        return []
    wanted = {share for _, _, share in targets}
    waits: defaultdict[tuple[str, str], list[float]] = defaultdict(list)
    most: defaultdict[tuple[str, str], int] = defaultdict(int)
    for share, instance_type, wait, preemptions in _outcomes(result.jobs):
        if share in wanted:
            key = (share, instance_type)
            waits[key].append(wait)
            if preemptions > most[key]:
                most[key] = preemptions
    utilisation = {(m.share, m.instance_type): (m.own_utilisation, m.jobs) for m in result.shares}
    ran = {m.share for m in result.shares}
    out: list[TargetResult] = []
    for index, target, share in targets:
        if share not in ran:  # a run of another topology (diff's replay without the change): nothing to judge
            continue
        keys = [key for key in waits if key[0] == share and target.instance_type in (None, key[1])]
        values = sorted(value for key in keys for value in waits[key])
        for criterion, goal in ((Criterion.WAIT_P95, target.wait_p95), (Criterion.WAIT_P50, target.wait_p50)):
            if goal is not None:
                quantile = 0.95 if criterion is Criterion.WAIT_P95 else 0.50
                out.append(TargetResult(index, share, target.instance_type, criterion, float(goal),
                                        percentile(values, quantile), len(values)))
        if target.max_preemptions_per_job is not None:
            out.append(TargetResult(index, share, target.instance_type, Criterion.MAX_PREEMPTIONS,
                                    float(target.max_preemptions_per_job),
                                    float(max((most[key] for key in keys), default=0)), len(values)))
        if target.min_utilisation is not None:
            types = [target.instance_type] if target.instance_type else \
                [t for s, t in utilisation if s == share]
            for instance_type in types:
                used, jobs = utilisation.get((share, instance_type), (0.0, 0))
                out.append(TargetResult(index, share, instance_type, Criterion.MIN_UTILISATION,
                                        float(target.min_utilisation), used, jobs))
    return out


def from_json(entry: Mapping[str, Any]) -> TargetResult:
    """A ``TargetResult`` back from its ``to_json`` (a report that carries runs as JSON, e.g. ``diff``'s impact)."""
    return TargetResult(int(entry["target"]), entry["share"], entry["instance_type"], Criterion(entry["criterion"]),
                        float(entry["goal"]), float(entry["actual"]), int(entry["jobs"]))


def missed(results: Iterable[TargetResult]) -> list[TargetResult]:
    return [result for result in results if not result.met]
