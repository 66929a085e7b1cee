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

from hypothesis import HealthCheck, given, settings

from policy_engine.simulation.causes import Cause
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.wait_sweep import HEAD_CAUSES, classify, excess
from policy_engine.simulation.reasons import waiting
from tests.policy_engine.simulation.test_properties import contended, scenarios

WITHIN_LIMIT = {Cause.WAITING_FOR_RECLAIM, Cause.ENVIRONMENT_FULL}


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
@given(contended())
def test_alike_under_contention(scenario) -> None:
    _run(scenario)


def test_the_comparison_reaches_every_cause() -> None:
    """The property is not vacuous: over a few contended runs, heads wait for each of the sweep's causes."""
    from hypothesis import find, strategies as st

    seen: set[Cause] = set()

    def collect(scenario: tuple) -> bool:
        seen.update(_run(scenario))
        return seen >= set(HEAD_CAUSES[1:])

    find(st.one_of(contended(), scenarios()), collect, settings=settings(max_examples=500, deadline=None,
                                                                          database=None))
