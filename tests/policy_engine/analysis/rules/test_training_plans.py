"""Training-plan rules BQ601-BQ608: one failing and one passing fixture per rule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from policy_engine.foundation.limits import PLAN_INSTANCES, PLAN_RESERVED_CAPACITIES
from policy_engine.foundation.model import ReservedCapacity, TrainingPlan
from tests.builders import run_rule, share, topology

P5 = "ml.p5.48xlarge"
HOUR = 3600.0


def window(instances: int = 4, start: float = 0.0, end: float = HOUR) -> ReservedCapacity:
    return ReservedCapacity(instances=instances, start=start, end=end)


def plan(name: str = "night-plan", instance_type: str = P5, windows: tuple[ReservedCapacity, ...] | None = None,
         ) -> TrainingPlan:
    return TrainingPlan(name=name, instance_type=instance_type,
                        reserved_capacities=windows if windows is not None else (window(),))


def with_plans(*plans: TrainingPlan, capacity: int = 4, shares: int = 1):
    """One queue whose shares run ``P5`` (``capacity`` each), the environment exactly their sum."""
    return topology(*(share(f"T{i}", capacity, instance_type=P5) for i in range(shares)), training_plans=plans)


def test_a_valid_plan_passes_every_plan_rule():
    good = with_plans(plan(windows=(window(4, 0, HOUR), window(2, 2 * HOUR, 3 * HOUR))))
    for rule_id in ("BQ601", "BQ602", "BQ603", "BQ604", "BQ605", "BQ606", "BQ607", "BQ608"):
        assert run_rule(rule_id, good) == [], rule_id


@pytest.mark.parametrize("name", ["night_plan", "-night", "night-", "", "a" * 65, "nacht plan", "plän"])
def test_bq601_plan_name_is_a_training_plan_name(name):
    (finding,) = run_rule("BQ601", with_plans(plan(name)))
    assert finding.rule == "BQ601" and str(finding.object) == f"training_plans[{name}]"
    assert "is not a SageMaker TrainingPlanName" in finding.message and "pattern" in finding.hint


@pytest.mark.parametrize("name", ["a", "night--plan", "N1-2-3", "a" * 64])
def test_bq601_accepts_the_pattern(name):
    assert run_rule("BQ601", with_plans(plan(name))) == []


def test_bq602_instance_type_is_reservable_from_the_botocore_model():
    (finding,) = run_rule("BQ602", topology(share("T", 1), training_plans=(plan(instance_type="ml.g5.xlarge"),)))
    assert str(finding.object) == "training_plans[night-plan]"
    assert finding.message == "instance_type 'ml.g5.xlarge' cannot be reserved by a training plan"
    assert "ml.p5.48xlarge" in finding.hint and "ReservedCapacityInstanceType" in finding.hint
    (typo,) = run_rule("BQ602", with_plans(plan(instance_type="ml.p5.48xlarg")))
    assert "did you mean 'ml.p5.48xlarge'" in typo.message


def test_bq603_at_most_five_reserved_capacities():
    six = tuple(window(1, i * 2 * HOUR, (i * 2 + 1) * HOUR) for i in range(PLAN_RESERVED_CAPACITIES.at_most + 1))
    (finding,) = run_rule("BQ603", with_plans(plan(windows=six)))
    assert finding.message == "has 6 reserved capacities; SageMaker allows 1-5 per plan" and finding.hint
    (empty,) = run_rule("BQ603", with_plans(plan(windows=())))
    assert empty.message.startswith("has 0 reserved capacities")
    assert run_rule("BQ603", with_plans(plan(windows=six[:5]))) == []


def test_bq604_windows_in_order_and_apart():
    overlapping = (window(2, 0, 2 * HOUR), window(2, HOUR, 3 * HOUR))
    (finding,) = run_rule("BQ604", with_plans(plan(windows=overlapping)))
    assert finding.message == ("reserved_capacities[1] overlaps reserved_capacities[0] (it starts 1h 00m before that "
                               "one ends)")
    unordered = (window(2, 4 * HOUR, 5 * HOUR), window(2, 0, HOUR))
    (finding,) = run_rule("BQ604", with_plans(plan(windows=unordered)))
    assert finding.message == "reserved_capacities[1] starts 4h 00m before reserved_capacities[0]"
    (backwards,) = run_rule("BQ604", with_plans(plan(windows=(window(2, HOUR, 0),))))
    assert backwards.message == "reserved_capacities[0] ends 1h 00m before or when it starts"
    touching = (window(2, 0, HOUR), window(2, HOUR, 2 * HOUR))  # back to back: the plan never returns to Scheduled
    assert run_rule("BQ604", with_plans(plan(windows=touching))) == []


def test_bq604_reads_iso_times_and_refuses_a_mix():
    day = datetime(2026, 12, 3, 9, tzinfo=UTC)
    later = datetime(2026, 12, 3, 8, tzinfo=UTC)
    iso = (ReservedCapacity(instances=2, start=day, end=day.replace(hour=12)),
           ReservedCapacity(instances=2, start=later, end=day.replace(hour=18)))
    (finding,) = run_rule("BQ604", with_plans(plan(windows=iso)))
    assert finding.message == "reserved_capacities[1] starts 1h 00m before reserved_capacities[0]"
    mixed = (ReservedCapacity(instances=2, start=day, end=day.replace(hour=12)), window(2, 0, HOUR))
    (finding,) = run_rule("BQ604", with_plans(plan(windows=mixed)))
    assert "mixes ISO 8601 times and seconds" in finding.message


@pytest.mark.parametrize("instances", [0, PLAN_INSTANCES.at_most + 1])
def test_bq605_instances_per_window(instances):
    (finding,) = run_rule("BQ605", with_plans(plan(windows=(window(instances),)), capacity=300))
    assert finding.message == f"reserved_capacities[0] holds {instances} instances; SageMaker reserves 1-256"
    assert run_rule("BQ605", with_plans(plan(windows=(window(256),)), capacity=256)) == []


def test_bq606_environment_below_the_largest_window_is_paid_capacity_never_used():
    small = with_plans(plan(windows=(window(2, 0, HOUR), window(6, 2 * HOUR, 3 * HOUR))), capacity=4)
    (finding,) = run_rule("BQ606", small)
    assert finding.severity.value == "error" and str(finding.object) == "training_plans[night-plan]"
    assert finding.message == ("reserved_capacities[1] reserves 6 x ml.p5.48xlarge; service environment(s) gpu-env "
                               "have 4: 2 paid instance(s) can never be used")
    (none,) = run_rule("BQ606", topology(share("T", 1), training_plans=(plan(),)))
    assert "no service environment has it: 4 paid instance(s)" in none.message
    assert run_rule("BQ606", with_plans(plan(windows=(window(4),)), capacity=4)) == []


def test_bq607_no_share_can_reach_the_plans_type_is_a_warning():
    (finding,) = run_rule("BQ607", topology(share("T", 1), environment={"ml.g5.xlarge": 1, P5: 4},
                                            training_plans=(plan(),)))
    assert finding.severity.value == "warning"
    assert finding.message == "no quota share has a capacity limit for ml.p5.48xlarge: no job can use the plan"
    assert run_rule("BQ607", with_plans(plan())) == []


def test_bq608_ultraserver_plans_are_refused_in_one_line():
    ultra = "ml.p6e-gb200.36xlarge"
    ultra_plan = plan(instance_type=ultra)
    (finding,) = run_rule("BQ608", topology(share("T", 4, instance_type=ultra), training_plans=(ultra_plan,)))
    assert finding.message == f"{ultra} is reserved as UltraServers, which batch-quota does not model"
    assert run_rule("BQ608", with_plans(plan())) == []


def test_two_plans_of_one_name_are_told_apart_by_position():
    findings = run_rule("BQ601", with_plans(plan("bad_name"), plan("bad_name")))
    assert [str(f.object) for f in findings] == ["training_plans[0]", "training_plans[1]"]
