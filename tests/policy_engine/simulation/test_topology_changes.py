"""Topology changes at a time: lowered limits, capacity cuts, DISABLED shares; invariants after every event."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policy_engine.foundation.diagnostics import Problem
from policy_engine.inputs.loading import LoadError
from policy_engine.simulation.core.engine import Engine, SimulationSettings
from policy_engine.simulation.core.jobs import ACTIVE, JobSpec, Status
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.scenarios.workload import load_scenario
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate
from tests.builders import GPU, job, share
from tests.builders import simulated_topology as topology

LOWERED = topology(3, share("S1", 2, "RESERVE"), share("S2", 1, "LEND"))


def _run(topo, jobs, actions, until=None):
    engine = Engine(topo, jobs, actions, SimulationSettings())
    events = []
    engine.on_transition = lambda now, j, before, after, reason: events.append((now, j.spec.name, after, reason))
    engine.run(until)
    return engine, build_result(engine), events


def test_a_lowered_limit_preempts_nothing_by_itself():
    jobs = [job("a", "S1", duration=100), job("b", "S1", duration=100), job("x", "S2", duration=100)]
    _, result, events = _run(LOWERED, jobs, [ShareUpdate(10, "q/S1", {"capacity": {GPU: 1}})])
    assert all("preempted" not in reason for *_, reason in events)
    assert {r.name: r.status for r in result.jobs} == {"a": "SUCCEEDED", "b": "SUCCEEDED", "x": "SUCCEEDED"}


@pytest.mark.parametrize("strategy", ["RESERVE", "LEND"])
def test_jobs_above_a_lowered_limit_become_reclaim_victims_even_for_reserve_and_lend(strategy):
    topo = topology(3, share("S1", 2, strategy), share("S2", 1, "LEND"))
    jobs = [job("a", "S1", duration=100), job("b", "S1", duration=100), job("x", "S2", duration=100),
            job("y", "S2", at=30, duration=10)]
    actions = [ShareUpdate(10, "q/S1", {"capacity": {GPU: 1}}), ShareUpdate(10, "q/S2", {"capacity": {GPU: 2}})]
    _, result, events = _run(topo, jobs, actions)
    preempted = [(now, name, reason) for now, name, after, reason in events if reason.startswith("preempted")]
    assert preempted == [(30, "b", "preempted (reclaim) by y")]  # the newest of the share above its limit
    assert result.job("y").wait_seconds == 0
    # S1 now places nothing until it is back under its limit: b waits for a
    assert result.job("b").finished_at == 200


def test_usage_above_a_lowered_reserve_limit_is_not_taken_when_the_environment_has_room():
    jobs = [job("a", "S1", duration=100), job("b", "S1", duration=100), job("x", "S2", at=20, duration=10)]
    _, result, events = _run(LOWERED, jobs, [ShareUpdate(10, "q/S1", {"capacity": {GPU: 1}})])
    assert not any(reason.startswith("preempted") for *_, reason in events)
    assert result.job("x").started_at == 20


def test_a_capacity_cut_places_nothing_new_until_usage_is_under_and_preempts_nothing():
    topo = topology(3, share("S1", 2, "LEND_AND_BORROW"), share("S2", 1, "LEND"))
    jobs = [job("a", "S1", duration=100), job("b", "S1", duration=50), job("c", "S2", duration=60),
            job("d", "S2", at=55, duration=10)]
    _, result, events = _run(topo, jobs, [EnvironmentUpdate(10, "env", {GPU: 1})])
    assert not any(reason.startswith("preempted") for *_, reason in events)
    # b ends at 50 (2 used of 1), c at 60 (1 used of 1): d can only start at 100 when a ends
    assert result.job("d").started_at == 100
    assert result.summary["cluster_utilisation"] > 0


def test_a_disabled_share_rejects_new_jobs_and_runs_its_queued_ones():
    topo = topology(1, share("S1", 1, "RESERVE"))
    jobs = [job("running", "S1", duration=100), job("queued", "S1", duration=10), job("late", "S1", at=50)]
    _, result, _ = _run(topo, jobs, [ShareUpdate(20, "q/S1", {"state": "DISABLED"})])
    assert result.job("late").status == "FAILED" and "DISABLED" in result.job("late").reason
    assert result.job("queued").status == "SUCCEEDED" and result.job("queued").started_at == 100


def test_strategy_change_stops_borrowing():
    topo = topology(2, share("S1", 1, "LEND_AND_BORROW"), share("S2", 1, "LEND"))
    jobs = [job("a", "S1", duration=100), job("b", "S1", duration=100), job("x", "S2", at=30, duration=10)]
    _, _, events = _run(topo, jobs, [ShareUpdate(10, "q/S1", {"strategy": "RESERVE", "borrow_limit": None})])
    assert [name for _, name, _, reason in events if reason.startswith("preempted")] == ["b"]


def test_scenario_actions_are_loaded_and_validated(write_file):
    write_file("t.yaml", (
        "service_environments: [{name: env, capacity: {ml.g5.xlarge: 2}}]\n"
        "job_queues: [{name: q, service_environment: env, shares: [{name: S1, capacity: {ml.g5.xlarge: 2}, "
        "strategy: LEND}]}]\n"))
    good = write_file("good.yaml", (
        "topology: t.yaml\njobs: [{name: a, share: S1, duration: 10}]\n"
        "actions:\n  - {at: 5, update_share: {share: S1, capacity: {ml.g5.xlarge: 1}, state: DISABLED}}\n"
        "  - {at: 6, update_environment: {name: env, capacity: {ml.g5.xlarge: 1}}}\n"))
    scenario = load_scenario(good)
    assert scenario.updates == [ShareUpdate(5, "q/S1", {"capacity": {GPU: 1}, "state": "DISABLED"}),
                                EnvironmentUpdate(6, "env", {GPU: 1})]
    bad = write_file("bad.yaml", (
        "topology: t.yaml\njobs: [{name: a, share: S1, duration: 10}]\n"
        "actions:\n  - {at: 5, update_share: {share: S9, capacity: {ml.g5.xlarge: 1}}}\n"
        "  - {at: 5, update_share: {share: S1, capacity: {ml.p4d.24xlarge: 1}, stratgy: LEND, borrow_limit: 5}}\n"
        "  - {at: 5, update_environment: {name: nowhere, capacity: {}}}\n"
        "  - {at: 5, update_share: {share: S1, state: PAUSED}, update_environment: {name: env}}\n"))
    with pytest.raises(LoadError) as error:
        load_scenario(bad)
    problems = error.value.problems
    text = "\n".join(problems)
    assert "actions[0].update_share.share: no quota share 'S9'" in text
    assert "actions[1].update_share.capacity.ml.p4d.24xlarge: share q/S1 has no 'ml.p4d.24xlarge'" in text
    assert "unknown key 'stratgy' (did you mean 'strategy'?)" in text
    assert "borrow_limit: only valid with strategy LEND_AND_BORROW" in text
    assert "actions[2].update_environment.name: no service environment 'nowhere'" in text
    assert "one action per entry" in text
    assert all(line.startswith(str(bad)) for line in problems)
    # kept as located problems: the action's line, and the field as a data path (not a rendered string)
    located = {(p.line, p.path) for p in error.value.located if isinstance(p, Problem)}
    assert (5, ("actions", 1, "update_share", "capacity", "ml.p4d.24xlarge")) in located
    assert (6, ("actions", 2, "update_environment", "name")) in located


# --- invariants after every event, on random topologies with random changes --------------------------------


@st.composite
def changing_scenarios(draw):
    shares = []
    for index in range(draw(st.integers(2, 4))):
        strategy = draw(st.sampled_from(["RESERVE", "LEND", "LEND_AND_BORROW"]))
        shares.append(share(f"S{index}", draw(st.integers(1, 3)), strategy,
                            borrow_limit=draw(st.sampled_from([None, 0, 100])) if strategy == "LEND_AND_BORROW"
                            else None, in_share_preemption=draw(st.booleans())))
    environment = sum(s.capacity[GPU] for s in shares) + draw(st.integers(0, 2))
    topo = topology(environment, *shares)
    jobs = [JobSpec(f"j{i}", f"q/{draw(st.sampled_from(shares)).name}", GPU, draw(st.integers(1, 3)),
                    draw(st.integers(0, 3)), draw(st.integers(0, 40)), draw(st.integers(1, 60)))
            for i in range(draw(st.integers(1, 12)))]
    actions = []
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, 60))
        if draw(st.booleans()):
            actions.append(EnvironmentUpdate(at, "env", {GPU: draw(st.integers(0, environment))}))
            continue
        target = draw(st.sampled_from(shares))
        changes = {"capacity": {GPU: draw(st.integers(1, 3))}}
        if draw(st.booleans()):
            strategy = draw(st.sampled_from(["RESERVE", "LEND", "LEND_AND_BORROW"]))
            changes |= {"strategy": strategy, "borrow_limit": 100 if strategy == "LEND_AND_BORROW" else None}
        if draw(st.booleans()):
            changes["in_share_preemption"] = draw(st.booleans())
        actions.append(ShareUpdate(at, f"q/{target.name}", changes))
    return topo, jobs, sorted(actions, key=lambda a: a.at)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changing_scenarios())
def test_invariants_hold_after_every_event_while_limits_and_capacity_change(case):
    topo, jobs, actions = case
    engine = Engine(topo, jobs, actions, SimulationSettings())
    environment = engine.pools[0].env
    seen = {"used": 0, "cut": False}
    capacities = [a for a in actions if isinstance(a, EnvironmentUpdate)]

    def after_instant(e):
        for pool in e.pools:
            for s in pool.shares:
                assert s.used == sum(j.spec.instances for j in s.active)
        if environment.used > environment.capacity:
            # usage above capacity only after a capacity cut, and never growing while above
            assert any(a.at <= e.now for a in capacities)
            assert environment.used <= seen["used"]
        seen["used"] = environment.used

    def on_transition(now, j, before, after, reason):
        if before == Status.RUNNABLE.value and after in {s.value for s in ACTIVE}:
            # no new placement in a pool above its current capacity
            assert environment.used <= environment.capacity, (j, reason)
        if reason.startswith("preempted (reclaim)"):
            # preempted across shares only while its share is above its current limit
            assert j.share.used + j.spec.instances > j.share.limit, (j, reason)

    engine.observers.append(after_instant)
    engine.on_transition = on_transition
    engine.run()
    result = build_result(engine)
    assert sum(1 for r in result.jobs if r.status in ("SUCCEEDED", "FAILED", "RUNNABLE")) == len(jobs)
