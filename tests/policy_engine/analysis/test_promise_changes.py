"""Guarantee declarations are promises: each kind of change, its exit code, and how a review accepts it."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.analysis.checks import check_topology
from policy_engine.analysis.promise_changes import PromiseKind
from policy_engine.changes import compare
from policy_engine.cli.app import main
from policy_engine.foundation.model import Suppression
from policy_engine.testing import assert_no_regression
from tests.builders import GPU, guarantee, share, topology

SHARES = (share("A", 8, "LEND"), share("B", 4, "LEND_AND_BORROW"))


def _topology(*promises, suppress=()):
    return topology(*SHARES, guarantees=promises, suppress=tuple(suppress))


BASE = _topology(guarantee("training/A", min_capacity={GPU: 8}, burst_capacity={GPU: 12}),
                 guarantee("training/B", min_capacity={GPU: 4}))


@pytest.mark.parametrize(("head", "expected"), [
    (_topology(guarantee("training/A", min_capacity={GPU: 6}, burst_capacity={GPU: 9}),
               guarantee("training/B", min_capacity={GPU: 4})),
     {("training/A", "min_capacity"): (PromiseKind.WEAKENED, 8, 6),
      ("training/A", "burst_capacity"): (PromiseKind.WEAKENED, 12, 9)}),
    (_topology(guarantee("training/A", min_capacity={GPU: 8}),
               guarantee("training/B", min_capacity={GPU: 4})),
     {("training/A", "burst_capacity"): (PromiseKind.REMOVED, 12, None)}),
    (_topology(guarantee("training/A", min_capacity={GPU: 8}, burst_capacity={GPU: 12})),
     {("training/B", "min_capacity"): (PromiseKind.REMOVED, 4, None)}),
    (_topology(guarantee("training/A", min_capacity={GPU: 8}, burst_capacity={GPU: 12}),
               guarantee("training/B", min_capacity={GPU: 4}, burst_capacity={GPU: 12})),
     {("training/B", "burst_capacity"): (PromiseKind.ADDED, None, 12)}),
    (_topology(guarantee("training/A", min_capacity={GPU: 8}, burst_capacity={GPU: 12}),
               guarantee("training/B", min_capacity={GPU: 3}), guarantee("training/B", min_capacity={GPU: 2})),
     {("training/B", "min_capacity"): (PromiseKind.WEAKENED, 4, 3)}),  # several on one share: the strongest
    (_topology(guarantee("training/A", min_capacity={GPU: 8}, burst_capacity={GPU: 12}, never_preempted=True),
               guarantee("training/B", min_capacity={GPU: 4})),
     {("training/A", "never_preempted"): (PromiseKind.NEVER_PREEMPTED_ADDED, None, True)}),
])
def test_each_kind_of_promise_change(head, expected):
    report = compare(BASE, head)
    assert {(p.share, p.property): (p.kind, p.before, p.after) for p in report.promises} == expected


def test_strengthened_and_never_preempted_removed_beside_their_proofs():
    base = _topology(guarantee("training/A", min_capacity={GPU: 6}, never_preempted=True))
    head = _topology(guarantee("training/A", min_capacity={GPU: 8}))
    report = compare(base, head)
    found = {p.property: p for p in report.promises}
    assert found["min_capacity"].kind is PromiseKind.STRENGTHENED
    assert (found["min_capacity"].proven_before, found["min_capacity"].proven_after) == ("held", "held")
    assert found["never_preempted"].kind is PromiseKind.NEVER_PREEMPTED_REMOVED
    assert found["never_preempted"].proven_after == "absent"
    assert report.failures() == ["1 declared guarantee(s) dropped (accept with a suppression of BQ502 in HEAD)"]
    assert report.failures(("guarantee-weakened",)) == []


def test_strengthened_beyond_what_holds_is_lost_once():
    head = _topology(guarantee("training/A", min_capacity={GPU: 9}, burst_capacity={GPU: 12}),
                     guarantee("training/B", min_capacity={GPU: 4}))
    report = compare(BASE, head)
    [promise] = report.promises
    assert promise.kind is PromiseKind.STRENGTHENED and promise.proven_after == "refuted"
    assert [g.property for g in report.lost_guarantees] == ["min_capacity"]
    assert report.new_findings == []  # the BQ401 refutation is listed under guarantees lost only


def test_a_reviewed_suppression_in_head_accepts_it_and_check_does_not_call_it_stale():
    lowered = (guarantee("training/A", min_capacity={GPU: 6}, burst_capacity={GPU: 12}),)
    accepted = _topology(*lowered, suppress=[
        Suppression(rule="BQ501", object="training/A", reason="A shrinks in Q3"),
        Suppression(rule="BQ502", object="training/B", reason="B is best effort from now on")])
    report = compare(BASE, accepted)
    assert {p.accepted for p in report.promises} == {"A shrinks in Q3", "B is best effort from now on"}
    assert report.failures() == []
    rules = {f.rule for f in check_topology(accepted).findings}
    assert not rules & {"BQ002", "BQ003", "BQ501", "BQ502"}
    # the wrong rule accepts nothing
    wrong = _topology(*lowered, suppress=[Suppression(rule="BQ502", object="training/A", reason="x")])
    assert compare(BASE, wrong).failing_promises("guarantee-weakened")


def test_a_diff_rule_suppression_must_name_a_share():
    bad = _topology(suppress=[Suppression(rule="BQ501", object="job_queues[training]", reason="x")])
    [finding] = [f for f in check_topology(bad).findings if f.rule == "BQ002"]
    assert "QUEUE/SHARE" in finding.message


def test_assert_no_regression_fails_on_weakened_and_dropped_by_default():
    head = _topology(guarantee("training/A", min_capacity={GPU: 6}, burst_capacity={GPU: 12}))
    with pytest.raises(AssertionError) as caught:
        assert_no_regression(BASE, head)
    assert "guarantee weakened: training/A min_capacity ml.g5.xlarge: 8 -> 6" in str(caught.value)
    assert "guarantee dropped: training/B min_capacity ml.g5.xlarge: 4 -> None" in str(caught.value)
    assert assert_no_regression(BASE, head, fail_on=("guarantee", "finding", "hazard")).promises


def _yaml(text_topology) -> str:
    from policy_engine.cli.commands.tune import topology_yaml

    return topology_yaml(text_topology, "")


@pytest.mark.parametrize(("head", "fail_on", "code", "says"), [
    (_topology(guarantee("training/A", min_capacity={GPU: 6}, burst_capacity={GPU: 12}),
               guarantee("training/B", min_capacity={GPU: 4})), (), 1, "1 declared guarantee(s) weakened"),
    (_topology(), (), 1, "3 declared guarantee(s) dropped"),
    (_topology(), ("--fail-on", "guarantee-weakened"), 0, "OK: nothing got worse"),
    (_topology(), ("--fail-on", "guarantee-dropped"), 1, "dropped"),
    (_topology(), ("--fail-on", "never"), 0, "OK"),
])
def test_cli_exit_codes(write_file, head, fail_on, code, says):
    base = write_file("base.yaml", _yaml(BASE))
    after = write_file("head.yaml", _yaml(head))
    result = CliRunner().invoke(main, ["diff", str(base), str(after), *fail_on])
    assert result.exit_code == code, result.output
    assert says in result.output
    data = json.loads(CliRunner().invoke(main, ["diff", str(base), str(after), "--format", "json", *fail_on]).output)
    assert data["ok"] is (code == 0)
    assert {p["kind"] for p in data["promises"]} <= {k.value for k in PromiseKind} and data["promises"]


def test_deleting_every_guarantee_is_not_ok(write_file):
    base = write_file("base.yaml", _yaml(BASE))
    after = write_file("head.yaml", _yaml(_topology()))
    result = CliRunner().invoke(main, ["diff", str(base), str(after)])
    assert result.exit_code == 1
    assert "REMOVED" in result.output and "needs review (BQ502)" in result.output
    assert "OK: nothing got worse" not in result.output


def test_shares_changed_directly_apart_from_those_affected_through_the_borrow_graph():
    base = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("B", 2, "LEND"), share("C", 1))
    head = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("B", 1, "LEND"), share("C", 1),
                    environment=5)
    report = compare(base, head)
    assert [c.name for c in report.changed_shares] == ["training/B"]
    assert [c.name for c in report.affected_shares] == ["training/A"]  # its max burst moves with B's limit
    summary = report.to_dict()["summary"]
    assert (summary["shares_changed"], summary["shares_affected"]) == (1, 1)


def _template(policy: dict) -> str:
    env = {"Type": "AWS::Batch::ServiceEnvironment",
           "Properties": {"ServiceEnvironmentName": "gpu-env", "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
                          "CapacityLimits": [{"CapacityUnit": GPU, "MaxCapacity": 12}]}}
    queue = {"Type": "AWS::Batch::JobQueue",
             "Properties": {"JobQueueName": "training", "JobQueueType": "SAGEMAKER_TRAINING", "Priority": 1,
                            "SchedulingPolicyArn": {"Ref": "Policy"},
                            "ServiceEnvironmentOrder": [{"ServiceEnvironment": {"Ref": "Env"}, "Order": 1}]}}
    shares = {f"Share{name}": {"Type": "AWS::Batch::QuotaShare",
                               "Properties": {"QuotaShareName": name, "JobQueue": {"Ref": "Queue"},
                                              "CapacityLimits": [{"CapacityUnit": GPU, "MaxCapacity": count}],
                                              "ResourceSharingConfiguration": {"Strategy": "LEND"}}}
              for name, count in (("A", 8), ("B", 4)) if "QuotaSharePolicy" in policy}  # a fair-share queue has none
    return json.dumps({"Resources": {"Env": env, "Policy": {"Type": "AWS::Batch::SchedulingPolicy",
                                                            "Properties": {"Name": "shared-policy", **policy}},
                                     "Queue": queue, **shares}})


@pytest.mark.parametrize("fair_share_side", ["base", "head"])
def test_a_policy_that_changes_type_is_replaced_with_its_queues(write_file, fair_share_side):
    fair = write_file("fair.json", _template({"FairsharePolicy": {"ShareDecaySeconds": 3600}}))
    quota = write_file("quota.json", _template({"QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"}}))
    sides = [str(fair), str(quota)] if fair_share_side == "base" else [str(quota), str(fair)]
    result = CliRunner().invoke(main, ["diff", *sides, "--format", "json"])
    assert result.exit_code == 1, result.output
    replaced = {(h["resource_type"], h["object"]) for h in json.loads(result.stdout)["hazards"]
                if h["kind"] == "replace"}
    assert replaced == {("AWS::Batch::SchedulingPolicy", "shared-policy"), ("AWS::Batch::JobQueue", "training")}
    # the same template on both sides: no type change, no hazard
    same = json.loads(CliRunner().invoke(main, ["diff", str(fair), str(fair), "--format", "json"]).stdout)
    assert same["hazards"] == []
