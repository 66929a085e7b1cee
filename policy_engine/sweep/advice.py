"""The knobs ``explain SHARE --scenario S`` tries: each a one-change topology, written as the ``--vary`` a user
would give ``sweep`` or ``tune`` (and built by the same code, ``grammar.parse_vary`` and ``candidate.topology_for``),
and what a replay of the same workload with that one change did to the share's wait.

The attribution's figures (averages of idle and lendable capacity while a cause held) only choose which knobs to
try and at which value; whether a knob helps is decided by the replay (``HelpsRule``), never by those averages,
which miss what a change does over time (who borrows first, what is reclaimed, how the line drains).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from policy_engine.foundation.model import QuotaShare, Topology, share_id
from policy_engine.simulation.causes import Cause
from policy_engine.simulation.results.metrics import ShareMetrics
from policy_engine.simulation.results.wait_causes import ShareWaits
from policy_engine.sweep.candidate import topology_for
from policy_engine.sweep.grammar import Axis, parse_vary, vary_text

#: The causes a limit, a borrow limit, a transfer or the strategy could change (the share waited for capacity).
CAPACITY_CAUSES = (Cause.SHARE_AT_LIMIT, Cause.NOTHING_LENDABLE, Cause.LENDABLE_TAKEN, Cause.ENVIRONMENT_FULL)


@dataclass(frozen=True)
class HelpsRule:
    """When a replay counts as helping (docs/simulator.md "Advice"): the share's wait p50 on the type falls by more
    than ``fraction`` of what it was and by at least ``seconds``; a rise by as much counts as harm. A setting
    (``explain --helps-above``), since AWS documents nothing of the kind."""

    fraction: float = 0.05
    seconds: float = 60.0

    def _moved(self, before: float, after: float) -> bool:
        change = abs(before - after)
        return change > self.fraction * before and change >= self.seconds

    def helps(self, before: float, after: float) -> bool:
        return after < before and self._moved(before, after)

    def harms(self, before: float, after: float) -> bool:
        return after > before and self._moved(before, after)


@dataclass(frozen=True)
class Trial:
    """One knob at one value: the ``--vary`` argument, its axis, and the knob's value before and after."""

    knob: str  # borrow_limit | transfer | strategy | in_share_preemption | environment_capacity | limit
    vary: str  # exactly what a user would write: ``q/a.borrow_limit=100``
    axis: Axis
    value: Any
    #: the knob before (a transfer: the share's own limit of the type, which grows by ``value``)
    was: Any
    #: why the heuristic picked the value (shown beside the figures, never as the verdict)
    why: str


@dataclass(frozen=True)
class Advice:
    """One knob tried: the share's wait p50 on one instance type (and the run's end) before and after its replay."""

    knob: str
    vary: str
    value: Any
    was: Any
    why: str
    share: str
    instance_type: str
    figure: str  # one of ``JUDGED_FIGURES``
    before: float
    after: float
    end_before: float
    end_after: float
    helps: bool
    harms: bool
    #: the one-change topology's check errors (rule IDs): a replay of a design AWS would refuse, said so
    check_errors: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"knob": self.knob, "value": self.value, "was": self.was, "vary": self.vary, "share": self.share,
                "instance_type": self.instance_type, "figure": self.figure, "before": self.before,
                "after": self.after, "helps": self.helps, "harms": self.harms,
                "end_of_run": {"before": self.end_before, "after": self.end_after},
                "check_errors": list(self.check_errors)}


def _share(topology: Topology, node: str) -> QuotaShare:
    return next(s for q in topology.job_queues for s in q.shares if share_id(q, s) == node)


def _environment_of(topology: Topology, node: str) -> str:
    return next(q.service_environment for q in topology.job_queues for s in q.shares if share_id(q, s) == node)


def _most_idle_lender(topology: Topology, node: str, instance_type: str, metrics: Sequence[ShareMetrics]
                      ) -> tuple[str, float] | None:
    """The other share of the environment whose own limit of the type sat idlest on average in the run."""
    environment = _environment_of(topology, node)
    peers = {share_id(q, s) for q in topology.job_queues if q.service_environment == environment for s in q.shares
             if share_id(q, s) != node and s.capacity.get(instance_type, 0) > 0}
    idle = [(m.share, m.limit - m.mean_own) for m in metrics if m.share in peers and m.instance_type == instance_type]
    best = max(idle, key=lambda item: (item[1], item[0]), default=None)
    return best if best is not None and best[1] >= 1 else None


def _axis(vary: str, topology: Topology) -> Axis:
    [axis] = parse_vary([vary], topology)
    return axis


def trials(topology: Topology, node: str, waits: Sequence[ShareWaits], metrics: Sequence[ShareMetrics]
           ) -> list[Trial]:
    """Every knob the advice would suggest or dismiss for ``node``'s waits, each at one value, once."""
    share = _share(topology, node)
    out: dict[str, Trial] = {}

    def add(knob: str, path: str, value: Any, was: Any, why: str) -> None:
        vary = f"{path}={vary_text(value)}"
        if vary not in out:
            out[vary] = Trial(knob, vary, _axis(vary, topology), value, was, why)

    for item in waits:
        causes = {c for c, seconds in {**item.by_cause, **item.behind_by_head_cause}.items() if seconds > 0}
        if item.blocker is not None:
            causes.add(item.blocker.cause)
        kind = item.instance_type
        if causes & set(CAPACITY_CAUSES):
            if share.strategy == "LEND_AND_BORROW" and share.borrow_limit is not None:
                was = share.borrow_limit
                add("borrow_limit", f"{node}.borrow_limit", max(2 * was, 100), was, "twice the borrow limit")
            elif share.strategy != "LEND_AND_BORROW":
                add("strategy", f"{node}.strategy", "LEND_AND_BORROW", share.strategy, "a share that borrows")
            lender = _most_idle_lender(topology, node, kind, metrics)
            if lender is not None:
                giver, idle = lender
                count = min(math.floor(idle), _share(topology, giver).capacity.get(kind, 0))
                add("transfer", f"transfer({giver},{node}).capacity.{kind}", count, share.capacity.get(kind, 0),
                    f"{giver}'s limit sat {idle:.1f} {kind} idle on average: the most idle of the environment")
        if Cause.ENVIRONMENT_FULL in causes:
            environment = topology.environment(_environment_of(topology, node))
            if environment is not None:
                was = environment.capacity.get(kind, 0)
                grown = was + max(1, share.capacity.get(kind, 0))
                add("environment_capacity", f"{environment.name}.capacity.{kind}", grown, was,
                    "the environment grown by the share's limit")
        if Cause.MISCONFIGURED in causes and item.largest_misconfigured > share.capacity.get(kind, 0):
            add("limit", f"{node}.capacity.{kind}", item.largest_misconfigured, share.capacity.get(kind, 0),
                "its largest job never fit")
        if Cause.REQUEUED_AFTER_PREEMPTION in causes and item.preempted_own and share.in_share_preemption:
            add("in_share_preemption", f"{node}.in_share_preemption", False, True,
                "its own attempts were preempted")
    return list(out.values())


def one_change(topology: Topology, trial: Trial) -> Topology:
    """The topology with the trial's one change, as ``sweep`` and ``tune`` build a candidate."""
    return topology_for(topology, [trial.axis], {trial.axis.path: trial.value})


#: The wait figures a replay is judged on, in order: the first the baseline has above 0 (a share whose median job
#: never waited has a p50 of 0, which no knob can cut, while its waiting jobs' p95 or longest wait can fall).
JUDGED_FIGURES = ("wait_p50", "wait_p95", "wait_max")


def judged_figure(metric: ShareMetrics) -> str:
    """The figure of ``JUDGED_FIGURES`` a replay of this share and type is judged on."""
    return next((name for name in JUDGED_FIGURES if getattr(metric, name) > 0), JUDGED_FIGURES[0])


def judged(trial: Trial, node: str, waited: Collection[str], before: Sequence[ShareMetrics],
           after: Sequence[ShareMetrics], ends: tuple[float, float], rule: HelpsRule, check_errors: Sequence[str] = ()
           ) -> list[Advice]:
    """The trial's advice per instance type the share's jobs ``waited`` for: its wait figure (``judged_figure``)
    before and after the replay (a type nobody of the share waited for has nothing to cut)."""
    after_by_type = {m.instance_type: m for m in after if m.share == node}
    out = []
    for metric in before:
        if metric.share != node or metric.instance_type not in waited or metric.instance_type not in after_by_type:
            continue
        if trial.knob == "transfer" and trial.axis.instance_type != metric.instance_type:
            continue
        name = judged_figure(metric)
        was, now = getattr(metric, name), getattr(after_by_type[metric.instance_type], name)
        out.append(Advice(trial.knob, trial.vary, trial.value, trial.was, trial.why, node, metric.instance_type,
                          name, was, now, ends[0], ends[1], rule.helps(was, now), rule.harms(was, now),
                          tuple(check_errors)))
    return out
