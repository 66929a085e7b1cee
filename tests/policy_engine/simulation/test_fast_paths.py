"""The simulator core's hand-inlined fast paths decide exactly as the named methods they copy.

A few methods on the hot path copy a small method's body instead of calling it; a comment
``# NAME, inline`` marks each copy. ``PlainEngine`` runs the engine with those methods written
as plain calls of the named ones instead (here in the test, so that nothing in the engine pays
for a switch: a subclass of the engine and of its steps, and its pools' class swapped after
construction, as ``test_backfill_index`` does for backfill). Hypothesis draws scenarios (deep
lines, preemption, delays, time limits, priority and topology changes) and every job record,
metric, usage sample and state change must be the same both ways.
"""

from __future__ import annotations

import ast
import heapq
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policy_engine.simulation.causes import Cause
from policy_engine.simulation.core import capacity, lifecycle, placement, preemption, steps
from policy_engine.simulation.core.agenda import Agenda
from policy_engine.simulation.core.capacity import Pool, ShareCapacity
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.jobs import AttemptRecord, Job, Status
from policy_engine.simulation.core.steps import Steps
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.settings import SimulationSettings
from policy_engine.simulation.topology_changes import ShareUpdate
from tests.builders import job, simulated_topology
from tests.builders import share as quota_share
from tests.policy_engine.simulation.test_properties import contended, scenarios

#: the reference subclasses the engine, its steps and its pools: from source only
pytestmark = pytest.mark.interpreted

CORE = Path(capacity.__file__).parent
#: ``module.Class.method`` with a fast path -> the named methods (or functions) it copies, as its comments say
FAST_PATHS = {
    "capacity.Pool.change": {"adjust"},
    "lifecycle.JobLifecycle.place": {"_occupy", "_run"},
    "lifecycle.JobLifecycle._release": {"_uncount", "touch", "capacity_freed"},
    "steps.Steps.classify": {"placement.own_fits", "placement.under_ceiling", "has_lower_priority"},
    "steps.Steps.own": {"_is_head", "placement.own_fits"},
}
_INLINE = re.compile(r"#\s*(?:self\.)?([A-Za-z_.]+)(?:\([^)]*\))?, inline")


class PlainPool(Pool):
    """``change`` as integration, then ``adjust`` (the fast path updates the counters itself)."""

    __slots__ = ()

    def change(self, share: ShareCapacity, delta: int, now: float) -> None:
        last = self.last_t
        if now != last:
            dt = now - last
            borrowed = self.borrowed
            if borrowed and self.lender_idle > 0:
                self.r_int += borrowed / self.lender_idle * dt
            self.last_t = now
        used, limit = share.used, share.limit
        last = share.last_t
        if now != last:
            span = now - last
            if used > limit:
                share.own_int += limit * span
                share.borrowed_int += (used - limit) * span
            else:
                share.own_int += used * span
            share.last_t = now
        if used < limit and share.lends:
            share.lent_int += (limit - used) * (self.r_int - share.last_r)
        share.last_r = self.r_int
        self.adjust(share, delta)
        if self.recorded:
            if self.series is not None:
                self.record(now)
            if self.log is not None:
                self.log.record(now, share.number, share.used)


class PlainSteps(Steps):
    """``classify`` and ``own`` with ``placement``'s tests, ``has_lower_priority`` and ``_is_head`` called."""

    __slots__ = ()

    def classify(self, agenda: Agenda) -> bool:
        pool = agenda.pool
        dirty = agenda.dirty
        agenda.dirty = {}
        lone = len(dirty) == 1 and not agenda.own
        for share in dirty:
            line = share.line
            while True:
                job = line.first
                if job is None or job.misconfigured:
                    break
                spec = job.spec
                n = spec.instances
                if placement.within_own_limit(share, n):
                    if placement.own_fits(pool, share, n):
                        if not lone:
                            heapq.heappush(agenda.own, (-job.priority, spec.submit_at, job.seq, job, share))
                            break
                        self.engine.place(share, job, False, False)
                        changed = agenda.dirty
                        if len(changed) != 1 or share not in changed:
                            return True
                        agenda.dirty = {}
                        continue
                    heapq.heappush(agenda.reclaim, (-job.priority, spec.submit_at, job.seq, job, share))
                elif (share.borrows and placement.under_ceiling(share, n)
                      and agenda.borrow_member.get(share) is not job):
                    agenda.borrow_member[share] = job
                    heapq.heappush(agenda.borrow, (spec.submit_at, job.seq, job, share))
                if preemption.has_lower_priority(share, job) and agenda.preempt_member.get(share) is not job:
                    agenda.preempt_member[share] = job
                    heapq.heappush(agenda.preempt, (-job.priority, spec.submit_at, job.seq, job, share))
                break
        return False

    def own(self, agenda: Agenda) -> bool:
        pool = agenda.pool
        while agenda.own:
            entry = heapq.heappop(agenda.own)
            job, share = entry[3], entry[4]
            if not steps._is_head(share, job):
                continue
            if placement.own_fits(pool, share, job.spec.instances):
                self.engine.place(share, job, False, False)
                return True
            agenda.dirty[share] = None
        return False


class PlainEngine(Engine):
    """``place`` with ``_occupy`` and the ordinary transitions; ``_release`` with ``_uncount``, ``touch`` and
    ``capacity_freed``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.steps = PlainSteps(self)
        for pool in self.pools:
            pool.__class__ = PlainPool

    def place(self, share: ShareCapacity, job: Job, borrowed: bool, after_preemption: bool,
              remove: bool = False) -> None:
        line = share.line
        if remove:
            line.remove(job)
        else:
            line.pop_known_head()
        now = self.now
        self._occupy(job, share)
        self._start_counter += 1
        job.start_order = self._start_counter
        job.attempt_start = now
        job.placed_borrowed = borrowed
        if job.placed_at is None:
            job.placed_at = now
        agenda = self._agendas[share.pool.index]
        if (line.waiting and (not remove or share.in_share or share in agenda.protected)
                and (share.used < share.limit or share.borrows or share.in_share)):
            agenda.dirty[share] = None
        if borrowed:
            agenda.retry_waiting()
        if self.time_limits is not None:
            self.time_limits.touched[share] = None
        delay = self.settings.preemption_delay if after_preemption else 0.0
        job.run_started = None
        self.transition(job, Status.SCHEDULED,
                        Cause.PLACED_ON_BORROWED_CAPACITY if borrowed else Cause.PLACED_ON_OWN_CAPACITY)
        if delay > 0:
            self._advance_at(job, self.now + delay)
            return
        self.transition(job, Status.STARTING, Cause.STARTED)
        self._after_starting(job)

    def _release(self, job: Job, outcome: str) -> None:
        share = job.share
        pool = share.pool
        pool.change(share, -job.spec.instances, self.now)
        del share.active[job]
        lifecycle._uncount(share.active_priorities, job.priority)
        job.start_order = 0
        if outcome is not lifecycle.SUCCEEDED:
            job.segments += (AttemptRecord(job.attempt_start, self.now, outcome, job.placed_borrowed),)
        job.version += 1
        agenda = self._agendas[pool.index]
        if (outcome is lifecycle.SUCCEEDED and not share.line.waiting and not agenda.borrow and not agenda.waiting
                and not self._backfill and self.time_limits is None and pool.env_alone):
            return
        self.touch(share)
        self.capacity_freed(pool)


@st.composite
def changing(draw):
    """A scenario with usage, limits and strategies changed mid-run (usage above a lowered limit)."""
    topology, jobs, updates, base = draw(scenarios())
    shares = topology.job_queues[0].shares
    changes = []
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(shares))
        update = draw(st.sampled_from([
            {"capacity": {t: draw(st.integers(0, 3)) for t in target.capacity}},
            {"strategy": "LEND"}, {"strategy": "RESERVE"}, {"state": "DISABLED"}, {"in_share_preemption": True}]))
        changes.append(ShareUpdate(draw(st.integers(0, 60)), f"q/{target.name}", update))
    return topology, jobs, [*updates, *changes], base


def _outcome(engine_class, topology, jobs, updates, sim_settings, transitions):
    """The run's result as JSON (records, metrics, the usage series) and its state changes when observed."""
    sim_settings = replace(sim_settings, utilisation_series=True)
    engine = engine_class(topology, jobs, updates, sim_settings)
    events: list = []
    if transitions:  # with an observer the engine skips the fast transitions of ``place``: both are compared
        engine.on_transition = lambda now, j, before, after, reason: events.append((now, j.spec.name, after, reason))
    engine.run()
    result = build_result(engine)
    return json.dumps(result.to_json(), sort_keys=True), json.dumps(result.utilisation), events


def _same(case) -> None:
    for transitions in (False, True):
        fast, plain = _outcome(Engine, *case, transitions), _outcome(PlainEngine, *case, transitions)
        assert fast == plain


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_fast_paths_decide_as_the_plain_methods(case):
    _same(case)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contended())
def test_fast_paths_decide_as_the_plain_methods_under_contention(case):
    _same(case)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changing())
def test_fast_paths_decide_as_the_plain_methods_when_limits_change(case):
    _same(case)


def test_a_share_that_stops_borrowing_above_its_limit_borrows_nothing_when_its_job_ends():
    """Found by the property above: a LEND_AND_BORROW share turned LEND while a 2-instance job runs on its
    limit of 1. Its usage above the limit is no longer borrowed capacity, so the job's end must not take an
    instance off the pool's borrowed count (the inlined ``adjust`` once did, and the count went to -1)."""
    topology = simulated_topology(2, quota_share("S0", 1, "LEND_AND_BORROW"), quota_share("S1", 1, "LEND"))
    jobs = [job(f"j{i}", "S0", at=0, duration=2 if i == 5 else 1, instances=2 if i == 5 else 1) for i in range(8)]
    case = (topology, jobs, [ShareUpdate(4, "q/S0", {"strategy": "LEND"})], SimulationSettings())
    _same(case)
    engine = Engine(*case)
    engine.run()
    assert [pool.borrowed for pool in engine.pools] == [0]


def test_the_reference_runs_through_the_plain_methods(monkeypatch):
    """Control: the plain engine's pools, steps and lifecycle really call the named methods."""
    calls: set[str] = set()
    for owner, name in ((Pool, "adjust"), (Engine, "_occupy"), (Engine, "touch"), (Engine, "capacity_freed")):
        original = getattr(owner, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            calls.add(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
    for module, name in ((placement, "own_fits"), (steps, "_is_head"), (lifecycle, "_uncount")):
        original = getattr(module, name)

        def counted_function(*args, _original=original, _name=name, **kwargs):
            calls.add(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted_function)
    topology = simulated_topology(4, quota_share("A", 2, "LEND_AND_BORROW"), quota_share("B", 2, "LEND"))
    jobs = [job(f"j{i}", "AB"[i % 2], at=i // 6, duration=100) for i in range(12)]  # lines in both shares at once
    PlainEngine(topology, jobs, (), SimulationSettings()).run()
    assert calls == {"adjust", "_occupy", "touch", "capacity_freed", "own_fits", "_is_head", "_uncount"}


def _inline_comments() -> dict[str, set[str]]:
    """``module.Class.method`` -> the names its ``# NAME, inline`` comments give, read from the core's source."""
    found: dict[str, set[str]] = {}
    for path in sorted(CORE.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.ClassDef):
                continue
            for method in node.body:
                if isinstance(method, ast.FunctionDef):
                    body = lines[method.lineno - 1:method.end_lineno]
                    names = {m[1] for line in body for m in _INLINE.finditer(line)}
                    if names:
                        found[f"{path.stem}.{node.name}.{method.name}"] = names
    return found


def test_every_fast_path_names_a_method_that_exists_and_the_reference_mirrors_it():
    assert _inline_comments() == FAST_PATHS
    modules = {"capacity": capacity, "lifecycle": lifecycle, "steps": steps, "placement": placement}
    for where, names in FAST_PATHS.items():
        module_name, class_name, _ = where.split(".")
        owner = getattr(modules[module_name], class_name)
        for name in names:
            home, _, attribute = name.rpartition(".")
            target = getattr(modules[home], attribute) if home else (
                getattr(owner, name, None) or getattr(modules[module_name], name, None)
                or getattr(preemption, name, None))
            assert callable(target), f"{where}: {name} names nothing"
    # the reference classes replace exactly the methods with fast paths
    assert {name for name in vars(PlainPool) if not name.startswith("__")} == {"change"}
    assert {name for name in vars(PlainSteps) if not name.startswith("__")} == {"classify", "own"}
    assert {name for name in vars(PlainEngine) if not name.startswith("__")} == {"place", "_release"}
