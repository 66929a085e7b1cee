"""The wait sweep and the live reasons decide alike what a waiting head waits for.

``reasons.waiting`` (a job's live reason, with ``Cause`` values and the figures behind them) and
``wait_sweep.classify`` (the compiled pass after a run, with ``HEAD_CAUSES`` numbers for its flat tables)
each write the rule down; the sweep keeps integer codes on its hot loop. Hypothesis draws scenarios, and
after every instant of the run every share's head that waits for capacity is classified both ways:

- within its limit, the live reason says ``ENVIRONMENT_FULL`` capacity; the sweep splits it into
  ``WAITING_FOR_RECLAIM`` exactly when the idle instances and what shares above their limits hold
  (the live figures ``idle`` and ``reclaimable``) cover what the head needs, else ``ENVIRONMENT_FULL``;
- above its limit, both say the same cause: ``NOTHING_LENDABLE``, ``LENDABLE_TAKEN`` or ``SHARE_AT_LIMIT``.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from policy_engine.simulation.causes import Cause
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.wait_sweep import HEAD_CAUSES, classify, excess
from policy_engine.simulation.reasons import waiting
from tests.policy_engine.simulation.test_properties import contended, scenarios

WITHIN_LIMIT = {Cause.WAITING_FOR_RECLAIM, Cause.ENVIRONMENT_FULL}


@st.composite
def undersized(draw):
    """``scenarios()`` whose environment holds fewer instances than its shares' limits add up to, so that a head
    within its limit can find the environment full (or held by borrowers that reclaim may not take yet)."""
    topology, jobs, updates, chosen = draw(scenarios())
    environment = topology.service_environments[0]
    capacity = {t: max(1, n - draw(st.integers(0, n))) for t, n in environment.capacity.items()}
    smaller = environment.model_copy(update={"capacity": capacity})
    return topology.model_copy(update={"service_environments": (smaller,)}), jobs, updates, chosen


@st.composite
def protected(draw):
    """``contended()`` with a long minimum run time: heads within their limits wait while reclaim may not take
    the borrowers' instances yet."""
    topology, jobs, updates, chosen = draw(contended())
    return topology, jobs, updates, replace(chosen, min_runtime=draw(st.sampled_from([50.0, 200.0])))


def _compare_heads(engine: Engine, seen: list[Cause]) -> None:
    for pool in engine.pools:
        for share in pool.shares:
            head = share.line.first
            if head is None or head.misconfigured:
                continue
            live = waiting(engine, head)
            swept = HEAD_CAUSES[classify(share, head.spec.instances, excess(pool))]
            assert live.capacity is not None, live
            if live.capacity is Cause.ENVIRONMENT_FULL:
                assert swept in WITHIN_LIMIT, (live, swept)
                covered = live.idle + live.reclaimable >= live.needs
                assert (swept is Cause.WAITING_FOR_RECLAIM) == covered, (live, swept)
            else:
                assert swept is live.capacity, (live, swept)
            seen.append(swept)


def _run(scenario: tuple) -> list[Cause]:
    engine = Engine(*scenario)
    seen: list[Cause] = []
    engine.observers.append(lambda e: _compare_heads(e, seen))
    engine.run()
    return seen


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_sweep_and_live_reasons_classify_every_head_alike(scenario) -> None:
    _run(scenario)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(contended(), undersized(), protected()))
def test_alike_under_contention_and_in_a_full_environment(scenario) -> None:
    _run(scenario)


def test_the_comparison_reaches_every_cause() -> None:
    """The property is not vacuous: over a few contended runs, heads wait for each of the sweep's causes."""
    seen: set[Cause] = set()

    def collect(scenario: tuple) -> bool:
        seen.update(_run(scenario))
        return seen >= set(HEAD_CAUSES[1:])

    find(st.one_of(undersized(), protected()), collect, settings=settings(max_examples=500, deadline=None,
                                                                          database=None))
