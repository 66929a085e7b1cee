"""Guarantees during a training plan's window (``during: PLAN[i]``): proofs worked out by hand, counterexamples, the
rules that report them, and what ``explain`` says per window."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.borrow.guarantees import refute, window_reach
from policy_engine.cli.app import main
from policy_engine.foundation.model import JobQueue, ReservedCapacity, ServiceEnvironment, Topology, TrainingPlan
from tests.builders import guarantee, run_rule, share, topology

P5 = "ml.p5.48xlarge"
HOUR = 3600.0


def night(*instances: int) -> TrainingPlan:
    return TrainingPlan(name="night", instance_type=P5, reserved_capacities=tuple(
        ReservedCapacity(instances=n, start=2 * i * HOUR, end=(2 * i + 1) * HOUR) for i, n in enumerate(instances)))


def teams(*guarantees, plan: TrainingPlan | None = None, **fields) -> Topology:
    """8 x P5; A 4 (LEND_AND_BORROW), B 2 (LEND), C 2 (RESERVE); the plan ``night`` of 6 then 2 instances."""
    return topology(share("A", 4, "LEND_AND_BORROW", instance_type=P5), share("B", 2, "LEND", instance_type=P5),
                    share("C", 2, instance_type=P5), guarantees=guarantees,
                    training_plans=(plan or night(6, 2),), **fields)


def test_window_reach_worked_by_hand():
    topo = teams()
    graph = BorrowGraph(topo)
    # window 0, 6 plan instances: B and C within their limits hold 2 + 2 of them, leaving 2 for A; reclaim alone
    # would give A its 4. With the others idle A bursts to 4 + 2 borrowed from B = 6 = the window.
    first = window_reach(topo, graph, "training/A", topo.training_plans[0], 0)
    assert (first.guaranteed, first.burst, first.others) == (2, 6, {"training/B": 2, "training/C": 2})
    # window 1, 2 plan instances: B alone fills it (declaration order), nothing is sure for A; at most 2.
    second = window_reach(topo, graph, "training/A", topo.training_plans[0], 1)
    assert (second.guaranteed, second.burst, second.others) == (0, 2, {"training/B": 2})
    # C (RESERVE, 2): A's 4 and B's 2, within their limits, fill all 6: C is sure of none of the window
    assert window_reach(topo, graph, "training/C", topo.training_plans[0], 0).guaranteed == 0


def test_a_share_of_another_queue_counts_the_plan_is_the_accounts():
    topo = teams()
    other = JobQueue(name="research", service_environment="research-env",
                     shares=(share("D", 3, instance_type=P5),))
    wider = topo.model_copy(update={"job_queues": (*topo.job_queues, other), "service_environments": (
        *topo.service_environments, ServiceEnvironment(name="research-env", capacity={P5: 3}))})
    graph = BorrowGraph(wider)
    reach = window_reach(wider, graph, "training/A", wider.training_plans[0], 0)
    assert reach.others == {"training/B": 2, "training/C": 2, "research/D": 2} and reach.guaranteed == 0


def test_min_capacity_during_a_window_is_proved_or_refuted_with_a_counterexample():
    proven = guarantee("training/A", during="night[0]", min_capacity={P5: 2})
    assert refute(teams(proven), BorrowGraph(teams(proven)), proven) == []
    promised = guarantee("training/A", during="night[0]", min_capacity={P5: 3})
    (refutation,) = refute(teams(promised), BorrowGraph(teams(promised)), promised)
    assert refutation.property == "min_capacity"
    assert refutation.counterexample == {"training/B": {P5: 2}, "training/C": {P5: 2}, "training/A": {P5: 2}}
    assert sum(u[P5] for u in refutation.counterexample.values()) <= 6  # the window holds it: a state that occurs
    assert refutation.message == (
        "min_capacity ml.p5.48xlarge during night[0]: promised 3 but only 2 is sure: when training/B holds 2 and "
        "training/C holds 2 of its 6 plan instances (within their own limits, so nothing is reclaimed), 2 remain "
        "for training/A")
    above_limit = guarantee("training/C", during="night[0]", min_capacity={P5: 3})
    (refutation,) = refute(teams(above_limit), BorrowGraph(teams(above_limit)), above_limit)
    assert "promised 3 but only 0 is sure" in refutation.message


def test_burst_capacity_during_a_window_names_the_binding_bound():
    by_window = guarantee("training/A", during="night[1]", burst_capacity={P5: 3})
    (refutation,) = refute(teams(by_window), BorrowGraph(teams(by_window)), by_window)
    assert refutation.message.endswith("reach 2: the window reserves 2")
    assert refutation.counterexample == {"training/B": {P5: 0}, "training/C": {P5: 0}, "training/A": {P5: 2}}
    by_share = guarantee("training/A", during="night[0]", burst_capacity={P5: 7}, )
    bigger = teams(by_share, plan=night(8))
    (refutation,) = refute(bigger, BorrowGraph(bigger), by_share)
    assert "reach 6: its limits and lenders reach only 6 (its burst outside the plan)" in refutation.message
    fine = guarantee("training/A", during="night[0]", burst_capacity={P5: 6})
    assert refute(teams(fine), BorrowGraph(teams(fine)), fine) == []


def test_the_rules_report_window_guarantees_on_the_guarantee():
    topo = teams(guarantee("training/A", during="night[0]", min_capacity={P5: 3}, burst_capacity={P5: 6}))
    (finding,) = run_rule("BQ401", topo)
    assert str(finding.object) == "guarantees[0] (training/A)" and "during night[0]" in finding.message
    assert finding.counterexample["training/A"] == {P5: 2}
    assert run_rule("BQ402", topo) == []


def test_bq404_a_window_that_does_not_exist_or_another_type_promises_nothing():
    cases = {
        "during nope[0]: no training plan 'nope' (known: night)": guarantee("training/A", during="nope[0]",
                                                                            min_capacity={P5: 1}),
        "during night[2]: plan night has 2 reserved capacities (windows 0-1)": guarantee(
            "training/A", during="night[2]", min_capacity={P5: 1}),
        "during night[0] narrows only min_capacity and burst_capacity": guarantee(
            "training/A", during="night[0]", never_preempted=True),
    }
    for expected, promise in cases.items():
        topo = teams(promise)
        (finding,) = run_rule("BQ404", topo)
        assert finding.message.startswith(expected), finding.message
        assert run_rule("BQ401", topo) == []  # reported once, not also refuted
    mixed = topology(share("A", capacity={P5: 2, "ml.g5.xlarge": 2}, strategy="LEND_AND_BORROW"),
                     guarantees=(guarantee("training/A", during="night[0]", min_capacity={"ml.g5.xlarge": 1}),),
                     training_plans=(night(2),))
    (finding,) = run_rule("BQ404", mixed)
    assert finding.message == ("min_capacity ml.g5.xlarge during night[0]: plan night reserves ml.p5.48xlarge, so "
                               "its window gives no ml.g5.xlarge")
    assert run_rule("BQ401", mixed) == []


def _file(tmp_path, guarantees: list[dict]) -> str:
    data = teams().model_dump(mode="json", exclude_defaults=True)
    data["guarantees"] = guarantees
    path = tmp_path / "plans.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_a_file_names_a_window_as_plan_index_and_a_bad_one_is_one_line(tmp_path):
    good = _file(tmp_path, [{"share": "training/A", "during": "night[0]", "min_capacity": {P5: 3}}])
    result = CliRunner().invoke(main, ["check", good, "--format", "json"])
    assert result.exit_code == 1
    rules = [f["rule"] for f in json.loads(result.stdout)["findings"]]
    assert "BQ401" in rules
    bad = _file(tmp_path, [{"share": "training/A", "during": "night", "min_capacity": {P5: 3}}])
    result = CliRunner().invoke(main, ["check", bad])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if "during" in line]
    assert len(lines) == 1 and "expected PLAN[index]" in lines[0]


def test_explain_says_what_each_window_gives_the_share(tmp_path):
    path = _file(tmp_path, [])
    runner = CliRunner()
    text = runner.invoke(main, ["explain", "training/A", path])
    figures = json.loads(runner.invoke(main, ["explain", "training/A", path, "--format", "json"]).stdout)
    assert text.exit_code == 0
    assert ("Training plan night window 0 (6 x ml.p5.48xlarge, 0s to 1h 00m after the scenario start): plan jobs "
            "of training/A are sure of 2 while the other shares hold plan instances up to their own limits "
            "(training/B 2, training/C 2), and reach at most 6 when every other share is idle."
            ) in " ".join(text.output.split())
    assert [(f["window"], f["guaranteed"], f["burst"]) for f in figures["training_plans"]] == [(0, 2, 6), (1, 0, 2)]
    dated = teams(plan=TrainingPlan.model_validate({"name": "night", "instance_type": P5, "reserved_capacities": [
        {"instances": 6, "start": "2026-12-03T22:00:00Z", "end": "2026-12-04T06:00:00Z"}]}))
    from policy_engine.analysis.checks import check_topology
    from policy_engine.reports.explain.view import explain_share

    sentences = dict(explain_share(dated, "training/A", check_topology(dated)))
    assert "(6 x ml.p5.48xlarge, 2026-12-03T22:00:00Z to 2026-12-04T06:00:00Z)" in sentences["plans"]
    none = topology(share("A", 1), training_plans=(night(2),), environment={"ml.g5.xlarge": 1, P5: 2})
    assert dict(explain_share(none, "training/A", check_topology(none)))["plans"] == (
        "No training plan reserves an instance type training/A runs.")
