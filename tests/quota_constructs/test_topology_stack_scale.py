"""The account-limit topology (50 queues x 20 shares): split into stacks CDK and CloudFormation accept.

One module-scoped synthesis (about 10 s) serves every test here.
"""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Template

from policy_engine.inputs.examples import large_topology
from quota_constructs import TopologyStacks
from quota_constructs.topology_stack import MAX_OUTPUTS_PER_STACK
from tests.quota_constructs.conftest import cfn_lint_errors, fast_app, resources_of

CDK_MAX_RESOURCES = 500


@pytest.fixture(scope="module")
def account():
    topology = large_topology()
    app = fast_app()
    deployed = TopologyStacks(app, topology)
    return topology, deployed, {s.stack_name: Template.from_stack(s).to_json() for s in deployed.stacks}


def test_one_stack_per_queue_each_within_cdk_and_cloudformation_limits(account):
    topology, _, templates = account
    assert len(templates) == len(topology.job_queues) == 50
    for name, template in templates.items():
        assert len(template["Resources"]) <= CDK_MAX_RESOURCES, name
        assert len(template["Outputs"]) <= MAX_OUTPUTS_PER_STACK, name


def test_every_share_queue_policy_and_environment_is_deployed_exactly_once(account):
    topology, deployed, templates = account
    def names(kind: str, key: str) -> list[str]:
        return sorted(r["Properties"][key] for t in templates.values() for r in resources_of(t, kind).values())
    assert names("AWS::Batch::QuotaShare", "QuotaShareName") == sorted(s.name for _, s in topology.shares())
    assert names("AWS::Batch::JobQueue", "JobQueueName") == sorted(q.name for q in topology.job_queues)
    assert names("AWS::Batch::ServiceEnvironment", "ServiceEnvironmentName") == sorted(
        e.name for e in topology.service_environments)
    assert len(names("AWS::Batch::SchedulingPolicy", "Name")) == 50
    assert len(deployed.shares) == 1000


def test_share_tags_from_the_model_reach_the_template(account):
    topology, _, templates = account
    tags = {r["Properties"]["QuotaShareName"]: r["Properties"].get("Tags")
            for t in templates.values() for r in resources_of(t, "AWS::Batch::QuotaShare").values()}
    assert tags == {s.name: s.tags for _, s in topology.shares()}


def test_every_stack_passes_cfn_lint(account):
    _, _, templates = account
    failures = {name: errors for name, template in templates.items() if (errors := cfn_lint_errors(template))}
    assert failures == {}
