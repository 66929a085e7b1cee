"""BQ609 (shapes AWS sells), BQ610 and BQ611 (hazards of a share that uses a plan): docs/training_plans.md#checks."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.analysis.checks import check_topology
from policy_engine.cli.app import main
from policy_engine.foundation.model import Guarantee, PlanWindow, Suppression
from tests.builders import run_rule, share, topology
from tests.policy_engine.analysis.rules.test_training_plans import HOUR, P5, plan, window

DAY = 86400.0


@pytest.mark.parametrize("instances", [1, 2, 4, 8, 16, 32, 64])
def test_bq609_passes_the_shapes_aws_sells(instances):
    """"Reservation durations are available in 1-day increments from 1 to 182 days. The reservation instance
    quantity options are 1, 2, 4, 8, 16, 32 or 64 instances." (search-training-plan-offerings-api-cli-sdk)"""
    sold = topology(share("T", 64, instance_type=P5),
                    training_plans=(plan(windows=(window(instances, 0, DAY), window(instances, 2 * DAY, 184 * DAY))),))
    assert run_rule("BQ609", sold) == []


def test_bq609_warns_of_a_count_or_a_length_no_offering_has():
    unsold = topology(share("T", 8, instance_type=P5),
                      training_plans=(plan(windows=(window(6, 0, 4 * HOUR), window(4, DAY, 184 * DAY))),))
    found = run_rule("BQ609", unsold)
    assert [(f.severity.value, str(f.object), f.message) for f in found] == [
        ("warning", "training_plans[night-plan]", "reserved_capacities[0] holds 6 instances; AWS sells 1, 2, 4, 8, "
         "16, 32, 64"),
        ("warning", "training_plans[night-plan]", "reserved_capacities[0] lasts 4h 00m; AWS sells whole days, "
         "1-182 days"),
        ("warning", "training_plans[night-plan]", "reserved_capacities[1] lasts 183d 0h; AWS sells whole days, "
         "1-182 days")]
    assert found[0].hint.startswith("reserve 8 instances")  # 6 is as far from 4 as from 8: the larger
    assert found[1].hint == "make it 1 day(s) long" and found[2].hint == "make it 182 day(s) long"
    assert run_rule("BQ609", unsold)[0].rule == "BQ609"


def test_bq609_reads_iso_windows_and_leaves_mixed_ones_to_bq604():
    start = datetime(2026, 12, 7, 8, tzinfo=UTC)
    iso = plan(windows=(window(4, start, start.replace(day=8)),))  # type: ignore[arg-type]
    assert run_rule("BQ609", topology(share("T", 4, instance_type=P5), training_plans=(iso,))) == []
    mixed = plan(windows=(window(4, 0, start),))  # type: ignore[arg-type]
    assert run_rule("BQ609", topology(share("T", 4, instance_type=P5), training_plans=(mixed,))) == []


def _users(*, in_share: bool = False, limit: int = 4, largest: int = 4, how: str = "shares"):
    night = plan(windows=(window(largest, DAY, 2 * DAY),))
    user = share("U", limit, instance_type=P5, in_share_preemption=in_share)
    other = share("O", 4, instance_type=P5, in_share_preemption=True)  # preempts in-share, uses no plan
    fields: dict = {}
    if how == "shares":
        night = night.model_copy(update={"shares": ("U",)})
    else:
        fields["guarantees"] = (Guarantee(share="U", during=PlanWindow("night-plan", 0), min_capacity={P5: 4}),)
    return topology(user, other, environment={P5: 16}, training_plans=(night,), **fields)


@pytest.mark.parametrize("how", ["shares", "during"])
def test_bq610_a_share_known_to_use_a_plan_with_in_share_preemption_on(how):
    """A higher-priority job can throw away paid reserved hours; a share that uses no plan is not flagged."""
    (finding,) = run_rule("BQ610", _users(in_share=True, how=how))
    assert str(finding.object) == "training/U" and finding.severity.value == "warning"
    declared = "the plan's shares" if how == "shares" else "a guarantee during the plan"
    assert finding.message == (f"uses training plan night-plan ({declared}) and has in_share_preemption on: a "
                               "higher-priority job can preempt its plan jobs and throw away paid reserved hours")
    assert run_rule("BQ610", _users(in_share=False, how=how)) == []


def test_bq611_plan_jobs_before_their_window_would_hold_all_of_the_shares_quota():
    """docs/training_plans.md: "jobs submitted the night before a window block their share's other work all night"
    (plan_dispatch: dispatch). check knows the share's limit and the plan's largest window, not submission times."""
    (finding,) = run_rule("BQ611", _users(limit=4, largest=4))
    assert str(finding.object) == "training/U"
    assert "would hold all 4 of the share's instances of the type SCHEDULED until the window opens" in finding.message
    assert run_rule("BQ611", _users(limit=8, largest=4)) == []  # room beyond a full window
    assert run_rule("BQ611", _users(limit=4, largest=8, how="during"))  # the guarantee's share too


def test_the_hazards_are_suppressible_like_other_rules():
    accepted = _users(in_share=True).model_copy(update={"suppress": (
        Suppression(rule="BQ610", object="training/U", reason="plan jobs run at the top priority"),
        Suppression(rule="BQ611", object="training/U", reason="plan jobs are submitted inside the window"))})
    found = {f.rule: f for f in check_topology(accepted).findings if f.rule in ("BQ610", "BQ611")}
    assert found["BQ610"].suppressed == "plan jobs run at the top priority"
    assert found["BQ611"].suppressed == "plan jobs are submitted inside the window"


def test_the_shipped_example_plan_is_one_aws_sells():
    example = Path(__file__).resolve().parents[4] / "examples" / "training_plans" / "topology.yaml"
    result = CliRunner().invoke(main, ["check", str(example), "--format", "json"])
    rules = {f["rule"] for f in json.loads(result.output)["findings"]}
    assert "BQ609" not in rules and "BQ611" in rules  # the example shows the night-before hazard it is about
