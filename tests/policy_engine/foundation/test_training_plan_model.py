"""Training plans in a topology: YAML, JSON and Python mean the same, and each structural problem is one line."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from policy_engine.foundation.model import ReservedCapacity, Topology, TrainingPlan, plan_seconds
from policy_engine.inputs.loading import LoadError, load_topology

ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-plan"

PLANS = f"""\
service_environments:
  - name: gpu
    capacity: {{ml.p5.48xlarge: 8}}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {{name: A, capacity: {{ml.p5.48xlarge: 4}}, strategy: LEND_AND_BORROW}}
      - {{name: B, capacity: {{ml.p5.48xlarge: 4}}, strategy: LEND_AND_BORROW}}
training_plans:
  - name: p5-plan
    arn: {ARN}
    instance_type: ml.p5.48xlarge
    reserved_capacities:
      - {{instances: 4, start: 2026-12-01T09:00:00Z, end: "2026-12-02T09:00:00+01:00"}}
      - {{instances: 8, start: 100000, end: 186400.5, availability_zone: us-east-1a}}
"""


def problems_of(write_file, text: str, name: str = "t.yaml") -> list[str]:
    path = write_file(name, text)
    with pytest.raises(LoadError) as caught:
        load_topology(path)
    return [problem.replace(f"{path.parent}/", "") for problem in caught.value.problems]


def test_plans_load_with_iso_and_second_times(write_file):
    topology = load_topology(write_file("t.yaml", PLANS))
    (plan,) = topology.training_plans
    assert plan.name == "p5-plan" and plan.arn == ARN and plan.instance_type == "ml.p5.48xlarge"
    first, second = plan.reserved_capacities
    assert first.start == datetime(2026, 12, 1, 9, tzinfo=UTC)
    assert first.end == datetime(2026, 12, 2, 9, tzinfo=timezone(timedelta(hours=1)))
    assert (first.instances, first.availability_zone) == (4, None)
    assert (second.start, second.end, second.availability_zone) == (100000.0, 186400.5, "us-east-1a")
    assert topology.plan("p5-plan") is plan and topology.plan(ARN) is plan and topology.plan("other") is None


def test_plan_times_count_from_the_scenario_start(write_file):
    (plan,) = load_topology(write_file("t.yaml", PLANS)).training_plans
    first, second = plan.reserved_capacities
    origin = datetime(2026, 12, 1, tzinfo=UTC)
    assert first.start_seconds(origin) == 9 * 3600
    assert first.end_seconds(origin) == 32 * 3600  # 09:00+01:00 is 08:00Z the next day
    assert second.start_seconds(None) == 100000.0  # seconds need no origin
    with pytest.raises(ValueError, match="give the scenario a start"):
        first.start_seconds(None)
    assert plan_seconds(7.5, origin) == 7.5


def test_json_and_python_mean_the_same_as_yaml(write_file):
    from_yaml = load_topology(write_file("t.yaml", PLANS))
    as_json = from_yaml.model_dump_json()
    assert json.loads(as_json)["training_plans"][0]["reserved_capacities"][0]["start"] == "2026-12-01T09:00:00Z"
    assert load_topology(write_file("t.json", as_json)) == from_yaml
    module = write_file("topo.py", f"""\
from datetime import datetime, timedelta, timezone, UTC
from policy_engine.inputs.loading import load_topology
from policy_engine.foundation.model import ReservedCapacity, TrainingPlan
base = load_topology({str(write_file("base.yaml", PLANS.split("training_plans:")[0]))!r})
plan = TrainingPlan(name="p5-plan", arn={ARN!r}, instance_type="ml.p5.48xlarge", reserved_capacities=[
    ReservedCapacity(instances=4, start=datetime(2026, 12, 1, 9, tzinfo=UTC),
                     end=datetime(2026, 12, 2, 9, tzinfo=timezone(timedelta(hours=1)))),
    ReservedCapacity(instances=8, start=100000, end=186400.5, availability_zone="us-east-1a")])
TOPOLOGY = base.model_copy(update={{"training_plans": (plan,)}})
""")
    assert load_topology(module) == from_yaml


def test_a_topology_without_plans_has_none():
    assert Topology().training_plans == ()


@pytest.mark.parametrize(("window", "expected"), [
    ('{instances: "4", start: 0, end: 10}', "reserved_capacities[0].instances: input should be a valid integer, "
                                            "got '4'"),
    ("{instances: 4, start: 2026-12-01T09:00:00, end: 10}", "reserved_capacities[0].start: an ISO "
                                                            "8601 time needs a time zone"),
    ("{instances: 4, start: 0, end: tomorrow}", "reserved_capacities[0].end: expected an ISO 8601 "
                                                "time with a time zone (2026-12-01T09:00:00Z) or seconds from the "
                                                "scenario start, got 'tomorrow'"),
    ("{instances: 4, start: true, end: 10}", "reserved_capacities[0].start: expected an ISO 8601 time"),
    ("{instances: 4, start: 0, end: .inf}", "reserved_capacities[0].end: .inf is not a finite number"),
    ("{instances: 4, start: 0, end: 10, zone: a}", "reserved_capacities[0].zone: unknown key 'zone'"),
    ("{instances: 4, end: 10}", "reserved_capacities[0].start: missing required key"),
])
def test_each_window_problem_is_one_line(write_file, window, expected):
    text = PLANS.split("    reserved_capacities:")[0] + f"    reserved_capacities:\n      - {window}\n"
    (problem,) = problems_of(write_file, text)
    assert problem.startswith("t.yaml:15: training_plans[p5-plan].")
    assert expected in problem


def test_plan_keys_are_checked(write_file):
    text = PLANS.replace("    instance_type: ml.p5.48xlarge\n", "    instance_typ: ml.p5.48xlarge\n")
    assert problems_of(write_file, text) == [
        "t.yaml:13: training_plans[p5-plan].instance_typ: unknown key 'instance_typ' (did you mean 'instance_type'?)"]
    text = PLANS.replace("    reserved_capacities:\n", "    reserved_capacities: {}\n    ignored:\n")
    problems = problems_of(write_file, text)
    assert any("training_plans[p5-plan].reserved_capacities: input should be a valid list, got a mapping" in p
               for p in problems)


def test_duplicate_plans_and_wrong_arns_are_load_errors(write_file):
    extra = f"""\
  - name: p5-plan
    instance_type: ml.p5.48xlarge
    reserved_capacities: []
  - name: other
    arn: {ARN}
    instance_type: ml.p5.48xlarge
    reserved_capacities: []
  - name: third
    arn: nope
    instance_type: ml.p5.48xlarge
    reserved_capacities: []
  - name: fourth
    arn: arn:aws:sagemaker:us-east-1:123456789012:training-plan/fourth
    instance_type: ml.p5.48xlarge
    reserved_capacities: []
  - name: fourth-again
    arn: arn:aws:sagemaker:us-east-1:123456789012:training-plan/fourth
    instance_type: ml.p5.48xlarge
    reserved_capacities: []
"""
    assert problems_of(write_file, PLANS + extra) == [
        "t.yaml:17: training_plans[1]: duplicate name 'p5-plan' (first at [0])",
        f"t.yaml:21: training_plans[other].arn: {ARN!r} names plan 'p5-plan', not 'other'",
        "t.yaml:25: training_plans[third].arn: 'nope' is no training plan ARN "
        "(expected arn:aws:sagemaker:REGION:ACCOUNT:training-plan/NAME)",
        "t.yaml:33: training_plans[fourth-again].arn: 'arn:aws:sagemaker:us-east-1:123456789012:training-plan/fourth' "
        "names plan 'fourth', not 'fourth-again'",
    ]


def test_an_arn_used_twice_is_named(write_file):
    extra = f"""\
  - name: p5-plan
    arn: {ARN}
    instance_type: ml.p5.48xlarge
    reserved_capacities: []
"""
    assert problems_of(write_file, PLANS + extra) == [
        "t.yaml:17: training_plans[1]: duplicate name 'p5-plan' (first at [0])",
        f"t.yaml:18: training_plans[p5-plan].arn: duplicate ARN {ARN!r} (first at [0])",
    ]


def test_semantic_limits_are_left_to_the_rules(write_file):
    """Structure only: an odd name, 300 instances, six or unordered windows still load (the BQ rules judge them)."""
    windows = "".join(f"      - {{instances: 300, start: {10 - i}, end: {5 - i}}}\n" for i in range(6))
    text = PLANS.split("    reserved_capacities:")[0].replace("name: p5-plan", "name: 'bad name!'").replace(
        f"arn: {ARN}", "arn: arn:aws:sagemaker:us-east-1:123456789012:training-plan/bad name!")
    topology = load_topology(write_file("t.yaml", text + "    reserved_capacities:\n" + windows))
    assert len(topology.training_plans[0].reserved_capacities) == 6


def test_plan_records_are_frozen():
    plan = TrainingPlan(name="p", instance_type="ml.p5.48xlarge",
                        reserved_capacities=(ReservedCapacity(instances=1, start=0, end=10),))
    with pytest.raises(ValueError, match="frozen"):
        plan.name = "q"  # type: ignore[misc]


def test_a_plans_fee_owners_and_idle_policy_load_and_are_checked(write_file):
    """``upfront_fee`` (a number of 0 or more), ``currency`` (ISO 4217), ``shares`` (the shares that use or own it:
    each must exist, once) and ``idle_to`` (``owners`` needs ``shares``): one line per problem."""
    extra = "    upfront_fee: 164505.60\n    currency: USD\n    shares: [A, training/B]\n    idle_to: owners\n"
    (plan,) = load_topology(write_file("t.yaml", PLANS.replace("    instance_type:", extra + "    instance_type:"))
                            ).training_plans
    assert (plan.upfront_fee, plan.currency, plan.shares, plan.idle_to) == (164505.6, "USD", ("A", "training/B"),
                                                                             "owners")
    bad = ("    upfront_fee: -1\n    currency: usd\n    shares: [C, A, training/A]\n    idle_to: owners\n")
    problems = problems_of(write_file, PLANS.replace("    instance_type:", bad + "    instance_type:"))
    assert any("training_plans[p5-plan].upfront_fee" in p and "greater than or equal to 0" in p for p in problems)
    assert any("training_plans[p5-plan].currency" in p for p in problems)
    assert any("training_plans[p5-plan].shares[0]" in p and "'C'" in p for p in problems), problems
    assert any("training_plans[p5-plan].shares[2]" in p and "listed twice" in p for p in problems), problems
    lonely = problems_of(write_file, PLANS.replace("    instance_type:", "    idle_to: owners\n    instance_type:"))
    assert len(lonely) == 1 and "idle_to: owners needs the plan's shares:" in lonely[0], lonely
    typo = problems_of(write_file, PLANS.replace("    instance_type:", "    idle_to: owner\n    instance_type:"))
    assert len(typo) == 1 and "idle_to" in typo[0], typo
