"""Whole topologies: the default stack, findings at synth, warnings, splitting, cross-stack references."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import CfnOutput, Stack, Tags
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from policy_engine.analysis.checks import CheckReport, check_topology
from policy_engine.foundation.model import Guarantee, JobQueue, QuotaShare, ServiceEnvironment, Suppression, Topology
from policy_engine.inputs.examples import example_topology, large_topology
from policy_engine.inputs.loading import LoadError
from quota_constructs import QuotaConstructError, QuotaTopology, TopologyStacks, topology_stack
from quota_constructs.topology_stack import (
    MAX_OUTPUTS_PER_STACK,
    MAX_RESOURCES_PER_STACK,
    exports_possible,
    fits_one_stack,
    outputs_needed,
    resources_needed,
)
from tests.quota_constructs.conftest import cfn_lint_errors, fast_app, resources_of

G5 = "ml.g5.xlarge"
ROOT = Path(__file__).resolve().parents[2]


def _clean_example() -> Topology:
    """The example with QS1's borrow limit at 100 %, which the checks find nothing wrong with."""
    example = example_topology()
    queue = example.job_queues[0]
    shares = (queue.shares[0].model_copy(update={"borrow_limit": 100}), *queue.shares[1:])
    return example.model_copy(update={"job_queues": (queue.model_copy(update={"shares": shares}),)})


@pytest.fixture(scope="module")
def default():
    app = fast_app()
    deployed = TopologyStacks(app, example_topology())
    (stack,) = deployed.stacks
    return deployed, stack, Template.from_stack(stack).to_json()


def test_default_topology_is_one_stack_with_one_of_each_and_the_three_shares(default):
    _, stack, template = default
    assert stack.stack_name == "BatchQuota"
    counts = {kind: len(resources_of(template, kind)) for kind in (
        "AWS::Batch::ServiceEnvironment", "AWS::Batch::SchedulingPolicy", "AWS::Batch::JobQueue",
        "AWS::Batch::QuotaShare")}
    assert counts == {"AWS::Batch::ServiceEnvironment": 1, "AWS::Batch::SchedulingPolicy": 1,
                      "AWS::Batch::JobQueue": 1, "AWS::Batch::QuotaShare": 3}
    assert len(template["Resources"]) == 6


def test_default_shares_carry_the_examples_settings(default):
    _, _, template = default
    example = example_topology()
    queue = example.job_queues[0]
    shares = {r["Properties"]["QuotaShareName"]: r["Properties"]
              for r in resources_of(template, "AWS::Batch::QuotaShare").values()}
    assert set(shares) == {s.name for s in queue.shares}
    for share in queue.shares:
        props = shares[share.name]
        assert props["CapacityLimits"] == [{"CapacityUnit": t, "MaxCapacity": n} for t, n in share.capacity.items()]
        assert props["ResourceSharingConfiguration"].get("Strategy") == share.strategy
        assert props["ResourceSharingConfiguration"].get("BorrowLimit") == share.borrow_limit
        assert props["PreemptionConfiguration"]["InSharePreemption"] == (
            "ENABLED" if share.in_share_preemption else "DISABLED")
    (environment,) = resources_of(template, "AWS::Batch::ServiceEnvironment").values()
    assert environment["Properties"]["CapacityLimits"] == [
        {"CapacityUnit": t, "MaxCapacity": n} for t, n in example.service_environments[0].capacity.items()]
    (job_queue,) = resources_of(template, "AWS::Batch::JobQueue").values()
    assert job_queue["Properties"]["JobQueueType"] == "SAGEMAKER_TRAINING"
    assert job_queue["Properties"]["JobQueueName"] == queue.name


def test_outputs_give_the_queue_and_every_share_arn_and_name(default):
    deployed, stack, template = default
    outputs = template["Outputs"]
    values = [o["Value"] for o in outputs.values()]
    assert stack.resolve(deployed.queues["training"].job_queue.job_queue_arn) in values
    assert "training" in values
    for share_id, share in deployed.shares.items():
        assert stack.resolve(share.quota_share_arn) in values
        assert share_id.split("/")[1] in values
    assert len(outputs) == outputs_needed(example_topology())


def test_name_outputs_say_which_queue_and_share_they_name(default):
    deployed, _, template = default
    descriptions = {o["Value"]: o["Description"] for o in template["Outputs"].values() if isinstance(o["Value"], str)}
    assert descriptions["training"].startswith("Name of job queue training: TrainingQueue(name)")
    for share_id in deployed.shares:
        name = share_id.split("/")[1]
        assert descriptions[name] == f"Name of quota share {share_id}: quota_share_name for job queue training"


def test_default_template_passes_cfn_lint(default):
    assert cfn_lint_errors(default[2]) == []


def test_warnings_become_cdk_warnings_on_the_queue(default):
    deployed, stack, _ = default
    assert deployed.report.warnings  # the example's QS1 may borrow more than can be lent
    annotations = Annotations.from_stack(stack)
    for finding in deployed.report.warnings:
        annotations.has_warning("/BatchQuota/Topology/training", Match.string_like_regexp(finding.rule))
    annotations.has_no_error("*", Match.any_value())


def test_a_clean_topology_synthesizes_without_any_warning():
    topology = _clean_example()
    assert check_topology(topology).findings == []
    app = fast_app()
    (stack,) = TopologyStacks(app, topology).stacks
    annotations = Annotations.from_stack(stack)
    annotations.has_no_warning("*", Match.any_value())
    annotations.has_no_error("*", Match.any_value())


def test_a_broken_guarantee_fails_synth_listing_every_error_finding():
    broken = example_topology().model_copy(update={"guarantees": (
        Guarantee(share="training/QS3", burst_capacity={G5: 3}),
        Guarantee(share="training/QS2", min_capacity={G5: 2}),
    )})
    report = check_topology(broken)
    assert len(report.errors) >= 2
    app = fast_app()
    TopologyStacks(app, broken, report=report)
    with pytest.raises(RuntimeError) as error:
        app.synth()
    message = str(error.value)
    assert "Validation failed" in message
    for finding in report.errors:
        assert finding.line() in message
        assert f"[BatchQuota/Topology/training] {finding.line()}" in message
    for finding in report.warnings:
        assert finding.line() not in message  # warnings do not fail synthesis


def test_suppressed_findings_do_not_fail_synth_and_show_as_info():
    broken = example_topology().model_copy(update={
        "guarantees": (Guarantee(share="training/QS3", burst_capacity={G5: 3}),),
        "suppress": (Suppression(rule="BQ402", object="training/QS3", reason="QS3 is capped on purpose"),
                     Suppression(rule="BQ302", object="training/QS1", reason="QS2 grows next quarter")),
    })
    app = fast_app()
    (stack,) = TopologyStacks(app, broken).stacks
    app.synth()  # no validation error: the only error is suppressed
    annotations = Annotations.from_stack(stack)
    annotations.has_no_warning("*", Match.any_value())
    for pattern in (r"BQ402 .*\[suppressed: QS3 is capped", r"BQ302 .*\[suppressed: QS2 grows"):
        annotations.has_info("/BatchQuota/Topology/training", Match.string_like_regexp(pattern))


def test_quota_topology_runs_the_checks_itself_and_exposes_shares():
    app = fast_app()
    stack = Stack(app, "Mine")
    built = QuotaTopology(stack, "Quota", topology=_clean_example())
    assert built.report.ok and set(built.shares) == {"training/QS1", "training/QS2", "training/QS3"}
    Template.from_stack(stack).resource_count_is("AWS::Batch::QuotaShare", 3)


def test_a_dangling_environment_reference_is_a_load_error_not_a_key_error():
    topology = Topology(job_queues=(JobQueue(name="q", service_environment="missing"),))
    with pytest.raises(LoadError, match="no service environment named 'missing'"):
        TopologyStacks(fast_app(), topology)


def test_queue_names_that_map_to_one_stack_name_are_refused_before_building():
    share = QuotaShare(name="s", capacity={G5: 1}, strategy="RESERVE")
    topology = Topology(
        service_environments=(ServiceEnvironment(name="e1", capacity={G5: 1}),
                              ServiceEnvironment(name="e2", capacity={G5: 1})),
        job_queues=(JobQueue(name="team_a", service_environment="e1", shares=(share,)),
                    JobQueue(name="team-a", service_environment="e2", shares=(share,))),
    )
    with pytest.raises(QuotaConstructError,
                       match="'team_a' and 'team-a' both need stack name 'BatchQuota-team-a'") as error:
        TopologyStacks(fast_app(), topology, split="per-queue")
    assert (error.value.path, error.value.field, error.value.value) == ("BatchQuota-team-a", "job_queues", "team-a")


def test_names_shared_by_an_environment_a_queue_and_a_share_do_not_clash():
    topology = Topology(
        service_environments=(ServiceEnvironment(name="training", capacity={G5: 2}),),
        job_queues=(JobQueue(name="training", service_environment="training", shares=(
            QuotaShare(name="JobQueue", capacity={G5: 1}, strategy="LEND"),
            QuotaShare(name="JobQueueArn", capacity={G5: 1}, strategy="LEND"),
        )),),
    )
    for split in ("single", "per-queue"):
        app = fast_app()
        deployed = TopologyStacks(app, topology, split=split)
        template = Template.from_stack(deployed.stacks[0]).to_json()
        assert len(resources_of(template, "AWS::Batch::QuotaShare")) == 2
        assert len(resources_of(template, "AWS::Batch::ServiceEnvironment")) == 1


def test_stack_names_are_checked_not_rewritten():
    with pytest.raises(QuotaConstructError,
                       match="stack_name = 'my_stack' is invalid; expected 1-128 letters") as error:
        TopologyStacks(fast_app(), example_topology(), stack_name="my_stack")
    assert (error.value.path, error.value.field, error.value.value) == ("my_stack", "stack_name", "my_stack")
    with pytest.raises(ValueError, match=r"stack name for job queue 'queue-00' = 'S+-queue-00' is invalid"):
        TopologyStacks(fast_app(), large_topology(queues=1), stack_name="S" * 120, split="per-queue")


def test_split_must_be_known():
    with pytest.raises(QuotaConstructError, match="split = 'sideways'") as error:
        TopologyStacks(fast_app(), example_topology(), split="sideways")
    assert (error.value.path, error.value.field, error.value.value) == ("BatchQuota", "split", "sideways")


@pytest.fixture(scope="module")
def five_queues():
    topology = large_topology(queues=5, shares_per_queue=20)
    app = fast_app()
    deployed = TopologyStacks(app, topology, stack_name="Acct")
    return topology, deployed, {s.stack_name: Template.from_stack(s).to_json() for s in deployed.stacks}


def test_too_many_outputs_for_one_stack_splits_per_queue(five_queues):
    topology, deployed, templates = five_queues
    assert resources_needed(topology) <= MAX_RESOURCES_PER_STACK  # fits by resources ...
    assert outputs_needed(topology) > MAX_OUTPUTS_PER_STACK and not fits_one_stack(topology)  # ... not by outputs
    assert list(templates) == [f"Acct-queue-{q:02d}" for q in range(5)]
    for template in templates.values():
        assert len(resources_of(template, "AWS::Batch::QuotaShare")) == 20
        assert len(resources_of(template, "AWS::Batch::JobQueue")) == 1
        assert len(template["Outputs"]) == 42
    assert len(deployed.shares) == 100


def test_fit_is_decided_by_resources_and_by_outputs_including_the_exports_grants_add():
    three = large_topology(queues=3, shares_per_queue=20)  # 69 resources, 126 outputs + 66 possible exports
    assert (resources_needed(three), outputs_needed(three), exports_possible(three)) == (69, 126, 66)
    assert fits_one_stack(three)
    four = large_topology(queues=4, shares_per_queue=20)  # 168 outputs fit, but not with 88 exports
    assert outputs_needed(four) <= MAX_OUTPUTS_PER_STACK < outputs_needed(four) + exports_possible(four)
    assert not fits_one_stack(four)
    many_small = large_topology(queues=50, shares_per_queue=1)  # 200 outputs, no room for a single export
    assert outputs_needed(many_small) == MAX_OUTPUTS_PER_STACK and not fits_one_stack(many_small)
    wide = Topology(service_environments=tuple(ServiceEnvironment(name=f"e{i}", capacity={G5: 1}) for i in range(500)))
    assert resources_needed(wide) == 500 and not fits_one_stack(wide)  # 500 + CDK metadata > 500


def test_auto_split_leaves_room_for_the_exports_of_grants_from_another_stack():
    """4 queues x 20 shares, every share granted to a role in a Teams stack: once 252 outputs, fatal F0004."""
    app = fast_app()
    deployed = TopologyStacks(app, large_topology(queues=4, shares_per_queue=20, instance_types=1))
    teams = Stack(app, "Teams")
    for index, share in enumerate(deployed.shares.values()):
        share.grant_submit(iam.Role(teams, f"Team{index}", assumed_by=iam.AccountRootPrincipal()))
    templates = {stack.stack_name: stack.template for stack in app.synth().stacks}
    assert sorted(templates) == ["BatchQuota-queue-00", "BatchQuota-queue-01", "BatchQuota-queue-02",
                                 "BatchQuota-queue-03", "Teams"]
    for name in sorted(templates)[:4]:
        exports = [o for o in templates[name]["Outputs"].values() if "Export" in o]
        assert len(exports) == 21  # every share's ARN and the queue's, imported by Teams
        assert len(templates[name]["Outputs"]) <= MAX_OUTPUTS_PER_STACK
    assert "Fn::ImportValue" in json.dumps(templates["Teams"])
    assert {name: cfn_lint_errors(t) for name, t in templates.items()} == {name: [] for name in templates}


def test_every_split_stack_passes_cfn_lint(five_queues):
    _, _, templates = five_queues
    assert {name: cfn_lint_errors(t) for name, t in templates.items()} == {name: [] for name in templates}


def test_single_split_keeps_a_small_multi_queue_topology_together():
    topology = large_topology(queues=3, shares_per_queue=4)
    app = fast_app()
    deployed = TopologyStacks(app, topology, split="single")
    (stack,) = deployed.stacks
    template = Template.from_stack(stack).to_json()
    assert len(resources_of(template, "AWS::Batch::JobQueue")) == 3
    assert len(resources_of(template, "AWS::Batch::QuotaShare")) == 12
    assert cfn_lint_errors(template) == []


def test_a_second_queue_on_one_environment_is_refused_even_when_the_report_says_nothing():
    share = QuotaShare(name="s", capacity={G5: 1}, strategy="RESERVE")
    topology = Topology(
        service_environments=(ServiceEnvironment(name="shared", capacity={G5: 2}),),
        job_queues=(JobQueue(name="a", service_environment="shared", shares=(share,)),
                    JobQueue(name="b", service_environment="shared", shares=(share,))),
    )
    assert [f.rule for f in check_topology(topology).errors] == ["BQ107"]
    app = fast_app()
    # AWS allows one queue per quota-managed environment; the construct refuses the second one itself.
    deployed = TopologyStacks(app, topology, split="per-queue", report=CheckReport(findings=[]))
    assert deployed.queues["b"].job_queue is None and deployed.queues["a"].job_queue is not None
    with pytest.raises(RuntimeError) as error:
        app.synth()
    assert ("[BatchQuota-b/b] TrainingJobQueue 'b': service_environment = 'shared' is invalid; expected a service "
            "environment no other job queue uses: job queue 'a' already uses it") in str(error.value)
    app = fast_app()
    TopologyStacks(app, topology, split="per-queue")  # with the engine's BQ107, that is the one line
    with pytest.raises(RuntimeError) as error:
        app.synth()
    reported = [line for line in str(error.value).splitlines() if " error " in line or "is invalid" in line]
    assert len(reported) == 1 and "BQ107" in reported[0]


def test_errors_are_reported_on_the_stack_of_the_queue_or_environment_they_name():
    topology = large_topology(queues=2, shares_per_queue=20)
    environment = topology.service_environments[1].model_copy(update={"capacity": {G5: 1}})
    broken = topology.model_copy(update={"service_environments": (topology.service_environments[0], environment)})
    report = check_topology(broken)
    assert report.errors and all("01" in str(f.object) for f in report.errors)  # only queue-01 / env-01 is broken
    app = fast_app()
    TopologyStacks(app, broken, split="per-queue", report=report)
    with pytest.raises(RuntimeError) as error:
        app.synth()
    reported = [line.strip() for line in str(error.value).splitlines() if " error " in line]
    assert len(reported) == len(report.errors)
    assert all(line.startswith(("[BatchQuota-queue-01/queue-01]", "[BatchQuota-queue-01/Environment:env-01]"))
               for line in reported)


def test_cfn_lint_judge_rejects_what_cloudformation_would(default):
    template = json.loads(json.dumps(default[2]))
    (queue,) = resources_of(template, "AWS::Batch::JobQueue").values()
    queue["Properties"]["Priority"] = 1001
    share = next(iter(resources_of(template, "AWS::Batch::QuotaShare").values()))
    share["Properties"]["ResourceSharingConfiguration"]["Strategy"] = "BORROW"
    errors = cfn_lint_errors(template)
    assert len(errors) == 2 and any("Priority" in e for e in errors) and any("Strategy" in e for e in errors)


def test_tags_of_the_app_reach_every_batch_resource_and_model_tags_stay():
    topology = large_topology(queues=1, shares_per_queue=3)
    app = fast_app()
    (stack,) = TopologyStacks(app, topology).stacks
    Tags.of(app).add("cost-center", "ml-platform")
    resources = Template.from_stack(stack).to_json()["Resources"].values()
    batch = [r for r in resources if r["Type"].startswith("AWS::Batch::")]
    assert len(batch) == 6
    assert all(r["Properties"]["Tags"].get("cost-center") == "ml-platform" for r in batch)
    shares = {r["Properties"]["QuotaShareName"]: r["Properties"]["Tags"] for r in batch
              if r["Type"] == "AWS::Batch::QuotaShare"}
    assert shares == {s.name: {**s.tags, "cost-center": "ml-platform"} for s in topology.job_queues[0].shares}


def test_system_tags_are_kept_apart_and_never_deployed():
    system = {"aws:cloudformation:stack-name": "old-stack"}
    example = example_topology()
    queue = example.job_queues[0]
    shares = (queue.shares[0].model_copy(update={"tags": {"team": "a"}, "system_tags": system}), *queue.shares[1:])
    topology = example.model_copy(update={
        "service_environments": (example.service_environments[0].model_copy(update={"system_tags": system}),),
        "job_queues": (queue.model_copy(update={"shares": shares, "system_tags": system}),),
    })
    assert [f for f in check_topology(topology).errors if f.rule == "BQ116"] == []
    (stack,) = TopologyStacks(fast_app(), topology).stacks
    template = json.dumps(Template.from_stack(stack).to_json())
    assert "aws:cloudformation" not in template and "old-stack" not in template
    Template.from_stack(stack).has_resource_properties("AWS::Batch::QuotaShare", {"Tags": {"team": "a"}})


def test_no_python_callbacks_from_the_kernel_except_one_validate_per_failing_queue(monkeypatch):
    """Every jsii callback is a round trip to Node; the design allows only the precomputed validations."""
    import jsii._kernel as kernel  # internal, but the only place all callbacks pass through

    calls: list[str] = []
    original = kernel._handle_callback

    def counting(k, callback):
        calls.append(callback.cookie)
        return original(k, callback)

    monkeypatch.setattr(kernel, "_handle_callback", counting)
    app = fast_app()
    TopologyStacks(app, large_topology(queues=3, shares_per_queue=20), split="per-queue")
    app.synth()
    assert calls == []
    broken = example_topology().model_copy(update={"guarantees": (
        Guarantee(share="training/QS3", burst_capacity={G5: 3}), Guarantee(share="training/QS2", min_capacity={G5: 2}),
    )})
    app = fast_app()
    TopologyStacks(app, broken)
    with pytest.raises(RuntimeError):
        app.synth()
    assert calls == ["validate"]  # two findings on one queue: one callback


def _aws_limit_errors() -> Topology:
    """The example with a LEND share that sets borrow_limit (BQ111) and a share name with a space (BQ101)."""
    example = example_topology()
    queue = example.job_queues[0]
    shares = (queue.shares[0], queue.shares[1].model_copy(update={"borrow_limit": 50}),
              queue.shares[2].model_copy(update={"name": "QS 3"}))
    return example.model_copy(update={"guarantees": (), "job_queues": (queue.model_copy(update={"shares": shares}),)})


@pytest.mark.parametrize("split", ["auto", "per-queue"])
def test_aws_limit_errors_fail_synth_listing_every_finding_instead_of_raising_on_the_first(split):
    topology = _aws_limit_errors()
    report = check_topology(topology)
    assert {f.rule for f in report.errors} == {"BQ101", "BQ111"}
    app = fast_app()
    deployed = TopologyStacks(app, topology, split=split)  # the constructs' eager checks would raise here
    assert set(deployed.shares) == {"training/QS1"}  # what AWS would refuse is left out, not half-built
    with pytest.raises(RuntimeError) as error:
        app.synth()
    reported = [line.strip() for line in str(error.value).splitlines() if " error " in line]
    assert sorted(reported) == sorted(f"[{deployed.stacks[0].stack_name}/"
                                      f"{'Topology/' if split == 'auto' else ''}training] {f.line()}"
                                      for f in report.errors)


def test_every_aws_limit_finding_is_listed_when_environments_and_queues_are_refused_too():
    share = QuotaShare(name="s", capacity={G5: 1}, strategy="RESERVE")
    topology = Topology(
        service_environments=(ServiceEnvironment(name="e", capacity={G5: 0}),
                              ServiceEnvironment(name="bad env", capacity={G5: 1})),
        job_queues=(JobQueue(name="q", service_environment="e", shares=(share,)),
                    JobQueue(name="bad queue", service_environment="bad env", priority=1001, shares=(share,))),
    )
    report = check_topology(topology)
    assert len(report.errors) >= 4
    for split in ("single", "per-queue"):
        app = fast_app()
        TopologyStacks(app, topology, split=split)
        with pytest.raises(RuntimeError) as error:
            app.synth()
        reported = [line for line in str(error.value).splitlines() if " error " in line]
        assert len(reported) == len(report.errors), split
        for finding in report.errors:
            assert finding.line() in str(error.value), split


def _with_qs1_tags(tags: dict[str, str]) -> Topology:
    topology = _clean_example()
    queue = topology.job_queues[0]
    shares = (queue.shares[0].model_copy(update={"tags": tags}), *queue.shares[1:])
    return topology.model_copy(update={"job_queues": (queue.model_copy(update={"shares": shares}),)})


def test_a_tag_aws_refuses_is_a_policy_engine_error_listed_once_at_synth():
    topology = _with_qs1_tags({"aws:team": "a"})
    (error_finding,) = check_topology(topology).errors  # `check` refuses it, not only the construct
    assert error_finding.rule == "BQ116" and str(error_finding.object) == "training/QS1"
    app = fast_app()
    deployed = TopologyStacks(app, topology)
    assert set(deployed.shares) == {"training/QS2", "training/QS3"}
    with pytest.raises(RuntimeError) as error:
        app.synth()
    assert error_finding.line() in str(error.value)
    assert "QuotaShare 'QS1': tags" not in str(error.value)  # the construct's refusal is the same problem


def test_a_construct_check_no_rule_mirrors_is_its_own_line_and_nothing_is_dropped(monkeypatch):
    from quota_constructs import quota_share
    from quota_constructs.validation import Where

    original = Where.tags_ok

    def stricter(self, tags):  # a construct check the policy engine has no rule for
        if tags and "team" in tags:
            self.fail("tags key", "team", "a key other than 'team'")
        return original(self, tags)

    monkeypatch.setattr(quota_share.Where, "tags_ok", stricter)
    topology = _with_qs1_tags({"team": "a"})
    assert check_topology(topology).errors == []
    app = fast_app()
    deployed = TopologyStacks(app, topology)
    assert set(deployed.shares) == {"training/QS2", "training/QS3"}
    with pytest.raises(RuntimeError) as error:
        app.synth()
    assert "[BatchQuota/Topology/training] QuotaShare 'QS1': tags key = 'team' is invalid" in str(error.value)


def test_a_warning_on_an_environment_lands_on_the_queue_using_it_not_on_a_queue_of_the_same_name():
    shares = tuple(QuotaShare(name=f"s{i}", capacity={G5: 2}, strategy="RESERVE") for i in (1, 2))
    topology = Topology(
        service_environments=(ServiceEnvironment(name="a", capacity={G5: 2}),
                              ServiceEnvironment(name="e2", capacity={G5: 2})),
        job_queues=(JobQueue(name="a", service_environment="e2", shares=shares[:1]),
                    JobQueue(name="b", service_environment="a", shares=shares)),
        allow_oversubscription=True,  # BQ201 (s1 + s2 > environment a) is then a warning on service_environments[a]
    )
    deployed = TopologyStacks(fast_app(), topology)
    (stack,) = deployed.stacks
    (warning,) = [f for f in deployed.report.warnings if str(f.object) == "service_environments[a]"]
    annotations = Annotations.from_stack(stack)
    annotations.has_warning("/BatchQuota/Topology/b", Match.string_like_regexp(warning.rule))
    annotations.has_no_warning("/BatchQuota/Topology/a", Match.any_value())


def _creation_traces(construct) -> int:
    return sum(entry.type == "aws:cdk:creationStack" for entry in construct.node.metadata)


def test_a_topology_records_no_creation_stack_traces_of_jsii_frames_and_templates_do_not_change(monkeypatch):
    """CDK's creation traces of constructs built from Python show only the jsii kernel's Node frames; skipping them
    saves about 0.15 s at 1,000 shares. Elements outside the topology's stacks keep theirs."""
    with monkeypatch.context() as patched:
        patched.setattr(topology_stack, "_without_creation_traces", lambda scope: None)
        traced = TopologyStacks(fast_app(), _clean_example())
    assert _creation_traces(traced.shares["training/QS1"].resource) == 1
    app = fast_app()
    deployed = TopologyStacks(app, _clean_example())
    theirs = CfnOutput(Stack(app, "Own"), "Out", value="x")
    assert _creation_traces(deployed.shares["training/QS1"].resource) == 0
    assert _creation_traces(deployed.stacks[0]) == 1  # created before the context is set on it
    assert _creation_traces(theirs) == 1
    inside = QuotaTopology(Stack(app, "Inside"), "Topology", topology=_clean_example())
    assert _creation_traces(inside.shares["training/QS1"].resource) == 0
    assert Template.from_stack(deployed.stacks[0]).to_json() == Template.from_stack(traced.stacks[0]).to_json()


DEBUG_RUN = """
from tests.quota_constructs.conftest import fast_app
from tests.quota_constructs.test_topology_stack import _clean_example, _creation_traces
from quota_constructs import TopologyStacks
print(_creation_traces(TopologyStacks(fast_app(), _clean_example()).shares["training/QS1"].resource))
"""


def test_cdk_debug_mode_still_records_the_creation_stack_traces():
    """``cdk synth --debug`` sets CDK_DEBUG for the app; CDK then records the traces whatever the context says."""
    env = {**os.environ, "CDK_DEBUG": "true"}
    run = subprocess.run([sys.executable, "-c", DEBUG_RUN], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-1] == "1"


def test_targets_are_never_deployed(default):
    """A topology's targets judge simulated runs only: the synthesized template is the same without them."""
    from policy_engine.foundation.model import Target

    _, _, template = default
    targeted = example_topology().model_copy(update={"targets": (
        Target(share="training/QS1", wait_p95="1h", max_preemptions_per_job=1, min_utilisation=0.5),)})
    (stack,) = TopologyStacks(fast_app(), targeted).stacks
    assert Template.from_stack(stack).to_json() == template


def test_training_plans_are_never_deployed():
    """A plan is bought, not created: the same topology with a plan gives exactly the same template. (The plan
    passes the plan rules, BQ601-BQ608, whose errors would stop the synth: a reservable type, an environment and a
    share that can run it.)"""
    from policy_engine.foundation.model import ReservedCapacity, TrainingPlan

    p5 = "ml.p5.48xlarge"
    base = example_topology()
    queue, env = base.job_queues[0], base.service_environments[0]
    first = queue.shares[0].model_copy(update={"capacity": {**queue.shares[0].capacity, p5: 1}})
    topology = base.model_copy(update={
        "service_environments": (env.model_copy(update={"capacity": {**env.capacity, p5: 1}}),),
        "job_queues": (queue.model_copy(update={"shares": (first, *queue.shares[1:])}),)})
    plan = TrainingPlan(name="p5-plan", instance_type=p5,
                        reserved_capacities=(ReservedCapacity(instances=1, start=0, end=86400),))
    (without,) = TopologyStacks(fast_app(), topology).stacks
    (with_plan,) = TopologyStacks(fast_app(), topology.model_copy(update={"training_plans": (plan,)})).stacks
    assert Template.from_stack(with_plan).to_json() == Template.from_stack(without).to_json()
