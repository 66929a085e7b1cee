"""Backfill through the lines' size index decides exactly as a scan of every line would.

``ScanningBackfill`` keeps the simple definition (walk each line in order behind its head and
place the first job that fits on own, else borrowed capacity); hypothesis draws topologies and
workloads with deep lines, and every job's record and every state change must be the same.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policy_engine.simulation.core import placement
from policy_engine.simulation.core.agenda import Agenda
from policy_engine.simulation.core.engine import Engine, PriorityUpdate, SimulationSettings
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.core.steps import Steps
from policy_engine.simulation.results.records import build_result
from tests.builders import job, share
from tests.builders import simulate as run
from tests.builders import simulated_topology as topology
from tests.policy_engine.simulation.test_properties import scenarios, topologies

#: the reference subclasses the engine and its steps, and a test replaces a line method: from source only
pytestmark = pytest.mark.interpreted


class _NeverSettled(Agenda):
    """The reference looks every time: no skipping after a backfill that found nothing."""

    __slots__ = ()
    settled = property(lambda self: False, lambda self, value: None)


class _ScanningSteps(Steps):
    """The reference: O(line) per look on every pass, the definition the index must reproduce."""

    __slots__ = ()

    def fill(self, agenda: Agenda) -> bool:
        pool = agenda.pool
        for capacity in pool.shares:
            if capacity.line.waiting < 2:
                continue
            jobs = capacity.line.in_order()
            next(jobs, None)  # the head: handled by the scheduling steps
            for waiting in jobs:
                if waiting.misconfigured:
                    continue
                n = waiting.spec.instances
                if placement.own_fits(pool, capacity, n):
                    self.engine.place(capacity, waiting, borrowed=False, after_preemption=False, remove=True)
                    return True
                if placement.borrow_fits(pool, capacity, n):
                    self.engine.place(capacity, waiting, borrowed=True, after_preemption=False, remove=True)
                    return True
        return False


class ScanningBackfill(Engine):
    """An engine whose backfill scans every line (``_ScanningSteps``) and never skips a look."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.steps = _ScanningSteps(self)
        for agenda in self._agendas:
            agenda.__class__ = _NeverSettled


@st.composite
def deep_lines(draw):
    """Bursts of mixed sizes into few shares: lines a few dozen deep, blocked heads, priority updates."""
    topo = draw(topologies())
    shares = topo.job_queues[0].shares
    jobs = []
    for index in range(draw(st.integers(5, 60))):
        quota = draw(st.sampled_from(shares))
        jobs.append(JobSpec(
            f"j{index}", f"q/{quota.name}", draw(st.sampled_from(sorted(quota.capacity))),
            draw(st.sampled_from([1, 1, 1, 2, 3, 4, 6])), draw(st.integers(0, 3)),
            draw(st.sampled_from([0, 0, 5, 10, 20, 40])), draw(st.integers(1, 90)),
            draw(st.sampled_from([None, 0, 2])), draw(st.sampled_from([None, 10.0])),
        ))
    updates = [PriorityUpdate(target.submit_at + draw(st.integers(0, 30)), target.name, draw(st.integers(0, 4)))
               for target in draw(st.lists(st.sampled_from(jobs), max_size=4))]
    _, _, _, base = draw(scenarios())
    return topo, jobs, updates, replace(base, backfill=True)


def _outcome(engine_class, topo, jobs, updates, sim_settings):
    events = []
    engine = engine_class(topo, jobs, updates, sim_settings)
    engine.on_transition = lambda now, j, before, after, reason: events.append((now, j.spec.name, after, reason))
    engine.run()
    return json.dumps(build_result(engine).to_json()), events


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deep_lines())
def test_indexed_backfill_matches_the_scanning_reference(scenario):
    indexed, reference = _outcome(Engine, *scenario), _outcome(ScanningBackfill, *scenario)
    assert indexed[1] == reference[1]
    assert indexed[0] == reference[0]


def test_behind_a_blocked_head_the_first_job_that_fits_runs():
    """Control: backfill changes outcomes, and both engines pick the first fitting job, not the first behind."""
    topo = topology(4, share("A", 4, "LEND"))
    jobs = [job("big", "A", instances=3, at=0), job("head", "A", instances=2, at=1),
            job("two", "A", instances=2, at=2), job("one", "A", instances=1, at=3), job("late", "A", at=4)]
    without = run(topo, jobs, backfill=False)
    assert without.job("one").started_at == 7200  # strictly in line order
    for engine_class in (Engine, ScanningBackfill):
        engine = engine_class(topo, jobs, (), SimulationSettings(backfill=True))
        engine.run()
        result = build_result(engine)
        assert result.job("one").started_at == 3
        assert result.job("late").started_at == 3600 and result.job("two").started_at == 7200


def test_no_line_is_scanned_and_no_reason_is_written_while_the_run_goes_on(monkeypatch):
    """Reasons are computed when reported, and backfill, time limits and priority updates never walk a line."""
    from policy_engine.simulation import reasons as reason_texts
    from policy_engine.simulation.core.queues import Line

    topo = topology(4, share("A", 2, "LEND_AND_BORROW", borrow_limit=200, in_share_preemption=True),
                    share("B", 2, "LEND"), time_limit=5000)
    jobs = [job(f"j{i}", "AB"[i % 2], instances=1 + (i % 3 == 0), priority=i % 4, at=i % 50, duration=100 + i % 70)
            for i in range(400)]
    updates = [PriorityUpdate(60 + i, f"j{i}", 3) for i in range(0, 400, 7)]
    engine = Engine(topo, jobs, updates, SimulationSettings(backfill=True))
    reasons = []
    original = reason_texts.waiting_reason

    def counted(engine, waiting):
        reasons.append(waiting.spec.name)
        return original(engine, waiting)

    def scanned(self):
        raise AssertionError("a waiting line was scanned during the run")

    monkeypatch.setattr(reason_texts, "waiting_reason", counted)
    monkeypatch.setattr(Line, "in_order", scanned)
    engine.run(until=500)
    assert reasons == []
    waiting = [j for j in engine.jobs if j.status.value == "RUNNABLE"]
    assert len(waiting) > 100  # deep lines at the report time
    result = build_result(engine)
    assert sorted(reasons) == sorted(j.spec.name for j in waiting)  # one reason per waiting job, when reported
    assert sum(r.reason.startswith("BLOCKED") for r in result.jobs) > 50
