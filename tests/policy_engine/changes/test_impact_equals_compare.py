"""``diff --scenario S --at 0`` is ``compare`` of BASE and HEAD on S, share for share, with and without plan jobs.

A deploy at 0 is HEAD from the start: every per-share figure the replay reports with the change must be
``compare``'s figure for HEAD, and without it ``compare``'s for BASE. The scenario ends at ``until`` (a
month's window) with plan jobs still waiting for a later window: a replay that ran past it charged the
tail (p5 plan jobs cut at their window's end) to a change that touches only p4d and g5.
"""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main

P4, P5, G5 = "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g5.xlarge"


def _design(vision_p4d: int, search_strategy: str) -> dict:
    return {
        "service_environments": [{"name": "gpu", "capacity": {P4: 8, P5: 6, G5: 4}}],
        "job_queues": [{"name": "training", "service_environment": "gpu", "shares": [
            {"name": "vision", "capacity": {P4: vision_p4d, P5: 2}, "strategy": "LEND_AND_BORROW",
             "in_share_preemption": True},
            {"name": "llm", "capacity": {P4: 8 - vision_p4d, P5: 4}, "strategy": "LEND_AND_BORROW",
             "in_share_preemption": True},
            {"name": "search", "capacity": {G5: 4}, "strategy": search_strategy}]}],
        "training_plans": [{"name": "p5-plan", "instance_type": P5, "reserved_capacities": [
            {"instances": 4, "start": 3600, "end": 30 * 3600}, {"instances": 4, "start": 50 * 3600,
                                                                 "end": 80 * 3600}]}],
    }


def _jobs(plans: bool) -> list[dict]:
    rows = []
    for index in range(90):
        share = ("vision", "llm", "search")[index % 3]
        kind = G5 if share == "search" else (P5 if index % 2 else P4)
        row = {"name": f"j{index}", "share": share, "instance_type": kind, "instances": 1 + index % 3,
               "priority": index % 4, "submit_at": (index * 1370) % (36 * 3600), "duration": 3600 * (2 + index % 7),
               "attempts": 3}
        if plans and kind == P5 and index % 4 == 1:
            row["training_plan"] = "p5-plan"
        rows.append(row)
    return rows


@pytest.mark.parametrize("plans", [True, False], ids=["plan jobs", "no plan jobs"])
def test_diff_at_0_equals_compare_share_for_share(write_file, plans):
    base = write_file("base.yaml", yaml.safe_dump(_design(5, "RESERVE")))
    head = write_file("head.yaml", yaml.safe_dump(_design(1, "LEND")))  # 4 p4d moved, a g5 strategy
    scenario = write_file("month.yaml", yaml.safe_dump({"topology": "base.yaml", "jobs": _jobs(plans),
                                                        "until": 40 * 3600}))
    runner = CliRunner()
    diff = runner.invoke(main, ["diff", str(base), str(head), "--scenario", str(scenario), "--at", "0",
                                "--format", "json"])
    assert diff.exit_code in (0, 1), diff.output
    impact = json.loads(diff.output)["impact"]
    compare = runner.invoke(main, ["compare", str(scenario), "--topology", str(base), "--topology", str(head),
                                   "--workers", "1", "--format", "json"])
    assert compare.exit_code in (0, 1), compare.output
    runs = {row["share"] + " " + row["instance_type"]: row["runs"] for row in json.loads(compare.output)["shares"]}
    labels = [label for label in next(iter(runs.values()))]
    assert impact["shares"] and len(impact["shares"]) == len(runs)
    for row in impact["shares"]:
        key = f"{row['share']} {row['instance_type']}"
        for side, label in (("before", labels[0]), ("after", labels[1])):
            figures = runs[key][label]
            assert row[f"wait_p50_{side}"] == pytest.approx(figures["wait_p50"]), (key, side)
            assert row[f"wait_p95_{side}"] == pytest.approx(figures["wait_p95"]), (key, side)
            assert row[f"preemptions_{side}"] == figures["preemptions"], (key, side)
            assert row[f"instance_hours_lost_{side}"] == pytest.approx(figures["instance_hours_lost"]), (key, side)
    # the change touches p4d and g5 only: p5 is the same with and without it, as compare shows
    for row in impact["shares"]:
        if row["instance_type"] == P5:
            assert row["preemptions_before"] == row["preemptions_after"]
            assert row["wait_p95_before"] == pytest.approx(row["wait_p95_after"])


def _random_case(seed: int):
    import random

    from policy_engine.foundation.model import JobQueue, ReservedCapacity, ServiceEnvironment, Topology, TrainingPlan
    from policy_engine.simulation.settings import PlanDispatch, SimulationSettings
    from tests.builders import job, share

    rng = random.Random(seed)
    names = [f"t{i}" for i in range(rng.randint(3, 5))]
    caps = {n: {t: rng.randint(1, 4) for t in rng.sample([P4, P5, G5], rng.randint(1, 3))} for n in names}
    strategies = ("RESERVE", "LEND", "LEND_AND_BORROW")
    strategy = {n: rng.choice(strategies) for n in names}
    in_share = {n: rng.random() < 0.5 for n in names}
    plan = TrainingPlan(name="plan", instance_type=P5, reserved_capacities=(
        ReservedCapacity(instances=2, start=rng.choice([0, 7200]), end=30 * 3600),))

    def design(caps: dict, strategy: dict) -> Topology:
        environment = ServiceEnvironment(name="env", capacity={t: sum(c.get(t, 0) for c in caps.values())
                                                              for t in (P4, P5, G5)})
        shares = tuple(share(n, capacity=caps[n], strategy=strategy[n], in_share_preemption=in_share[n])
                       for n in names)
        return Topology(service_environments=(environment,), allow_oversubscription=True, training_plans=(plan,),
                        job_queues=(JobQueue(name="q", service_environment="env", shares=shares),))

    moved = {n: dict(c) for n, c in caps.items()}
    p4d = [n for n in names if P4 in caps[n]]
    if len(p4d) >= 2 and moved[p4d[0]][P4] > 1:
        moved[p4d[0]][P4] -= 1
        moved[p4d[1]][P4] += 1
    changed = dict(strategy)
    if g5 := [n for n in names if G5 in caps[n]]:
        changed[g5[0]] = rng.choice(strategies)
    jobs = []
    for index in range(200):
        name = rng.choice(names)
        kind = rng.choice(list(caps[name]))
        extra = {"training_plan": "plan"} if kind == P5 and rng.random() < 0.5 else {}
        jobs.append(job(f"j{index}", name, rng.randint(1, 2), priority=rng.randint(0, 2), instance_type=kind,
                        at=float(rng.choice([0, rng.uniform(0, 24 * 3600)])), duration=rng.uniform(600, 5 * 3600),
                        **extra))
    settings = SimulationSettings(plan_dispatch=rng.choice(list(PlanDispatch)))
    return design(caps, strategy), design(moved, changed), jobs, settings, rng.choice([None, 20 * 3600.0])


@pytest.mark.parametrize("seed", range(8))
def test_a_replay_at_0_is_heads_own_run_on_random_plan_scenarios(seed):
    from policy_engine.changes.impact import replay
    from policy_engine.inputs.renames import Renames
    from policy_engine.simulation.core.engine import Engine
    from policy_engine.simulation.results.records import build_result
    from policy_engine.simulation.scenarios.workload import Scenario

    base, head, jobs, settings, until = _random_case(seed)
    impact = replay(Scenario(topology=base, jobs=jobs, settings=settings, until=until), base, head, Renames(), 0.0)
    engine = Engine(head, jobs, [], settings)
    engine.run(until)
    result = build_result(engine)
    own = {(m.share, m.instance_type): m for m in result.shares}
    waits: dict[tuple[str, str], list[float]] = {}
    for record in result.jobs:
        waits.setdefault((record.share, record.instance_type), []).append(record.wait_seconds)
    for row in impact.shares:
        key = (row["share"], row["instance_type"])
        metrics = own[key]
        assert row["preemptions_after"] == metrics.preemptions
        assert row["wait_p95_after"] == pytest.approx(metrics.wait_p95)
        assert row["instance_hours_lost_after"] == pytest.approx(metrics.instance_hours_lost)
        # the mean wait is the mean of simulate's wait_seconds (time RUNNABLE, requeues included): one definition
        assert row["mean_wait_after"] == pytest.approx(sum(waits[key]) / len(waits[key])), key
