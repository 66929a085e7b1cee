"""``QuotaMonitoring`` synthesized once beside a quota stack: cfn-lint clean, cdk-nag AwsSolutions clean (one
acknowledged forced wildcard), the rules' patterns matched (moto's EventBridge matcher) against the documented
events, the alarms' defaults and props, and the dashboard's rows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import App, Duration, Stack, Validations
from cdk_nag import AwsSolutionsChecks
from moto.events.models import EventPattern

from policy_engine.events import patterns as event_patterns
from quota_constructs import (
    BatchQuotaChecks,
    QuotaMonitoring,
    QuotaShare,
    ServiceEnvironment,
    TrainingJobQueue,
    monitoring,
)
from quota_constructs.errors import QuotaConstructError
from tests.quota_constructs.conftest import CDK_CONTEXT, cfn_lint_errors, fast_app, resources_of

QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/training"
OTHER_QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/other"
JOB_ARN = "arn:aws:batch:us-east-1:123456789012:service-job/0123456789abcdef"
GPU, BIG = "ml.g5.xlarge", "ml.g5.2xlarge"


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("monitoring")
    app = App(outdir=str(out), builtin_cloud_formation_validation=False, context=CDK_CONTEXT)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), BatchQuotaChecks())
    stack = Stack(app, "Quota")
    env = ServiceEnvironment(stack, "Env", service_environment_name="gpu", capacity={GPU: 4, BIG: 4})
    queue = TrainingJobQueue(stack, "Queue", job_queue_name="training", service_environment=env)
    shares = [QuotaShare(stack, "A", quota_share_name="A", job_queue=queue, capacity={GPU: 2, BIG: 2},
                         strategy="LEND_AND_BORROW"),
              QuotaShare(stack, "B", quota_share_name="B", job_queue=queue, capacity={GPU: 2, BIG: 2},
                         strategy="LEND")]
    QuotaMonitoring(stack, "Monitoring", [queue], shares=shares, wait_targets={"training/B": Duration.minutes(30)})
    app.synth()  # raises when a plugin reports an error
    report = json.loads((out / "validation-report.json").read_text())
    return {"template": json.loads((out / "Quota.template.json").read_text()),
            "reports": {r["pluginName"]: r for r in report["pluginReports"]}}


def test_the_monitoring_stack_is_cfn_lint_clean(synthesized):
    assert cfn_lint_errors(synthesized["template"]) == []


def test_the_monitoring_stack_is_cdk_nag_clean_but_for_the_acknowledged_star(synthesized):
    nag = synthesized["reports"].get("AwsSolutions", {"violations": [], "suppressedViolations": []})
    assert nag["violations"] == []
    acknowledged = {v["ruleName"]: v for v in nag.get("suppressedViolations") or []}
    assert set(acknowledged) == {"AwsSolutions-IAM5[Resource::*]"}
    star = acknowledged["AwsSolutions-IAM5[Resource::*]"]
    assert monitoring.PUT_METRIC_DATA_REASON in star["reason"]
    assert [c["constructPath"] for c in star["violatingConstructs"]] == [
        "Quota/Monitoring/FunctionRole/DefaultPolicy/Resource"]
    assert "batch-quota" not in synthesized["reports"]  # the quota resources pass the engine's rules


def _resolved(value: Any) -> Any:
    """The pattern as EventBridge gets it: the queue's ``Fn::GetAtt`` is its ARN."""
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return QUEUE_ARN
    if isinstance(value, dict):
        return {k: _resolved(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v) for v in value]
    return value


def _rules(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {rule["Properties"]["Description"]: rule["Properties"]
            for rule in resources_of(template, "AWS::Events::Rule").values()}


def _event(kind: str, **detail: Any) -> dict[str, Any]:
    return {"version": "0", "id": "1", "source": "aws.batch", "detail-type": event_patterns.kind(kind).detail_type,
            "account": "123456789012", "time": "2026-12-01T00:00:00Z", "region": "us-east-1", "resources": [JOB_ARN],
            "detail": detail}


#: The documented samples ("Service job preemption events", "Service job queue blocked events").
STARTED = _event("preemption_started", statusReason="PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to "
                 "reclaim borrowed capacity", preemptedJobArn=JOB_ARN, status="RUNNING")
COMPLETED = _event("preemption_completed", preemptedJobArn=JOB_ARN,
                   preemptionSummary={"preemptedAttemptCount": 1})
BLOCKED = _event("queue_blocked", jobArn=JOB_ARN, jobQueue=QUEUE_ARN, status="RUNNABLE",
                 statusReason="CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY")
CHANGED = _event("state_change", jobArn=JOB_ARN, jobQueue=QUEUE_ARN, status="RUNNING")


@pytest.mark.parametrize(("kind", "sample"), [("preemption_started", STARTED), ("preemption_completed", COMPLETED),
                                              ("queue_blocked", BLOCKED), ("state_change", CHANGED)])
def test_each_documented_event_matches_its_rule_only(synthesized, kind, sample):
    rules = _rules(synthesized["template"])
    matched = sorted(description for description, rule in rules.items() if "EventPattern" in rule
                     and EventPattern.load(json.dumps(_resolved(rule["EventPattern"]))).matches_event(sample))
    expected = [f"batch-quota: {event_patterns.kind(kind).detail_type}"]
    if kind == "preemption_started":
        expected.append("batch-quota: reclaim preemptions (counted)")
    assert matched == sorted(expected)
    if event_patterns.kind(kind).queue_field:
        other = {**sample, "detail": {**sample["detail"], "jobQueue": OTHER_QUEUE_ARN}}
        rule = rules[expected[0]]
        assert not EventPattern.load(json.dumps(_resolved(rule["EventPattern"]))).matches_event(other)


def test_an_in_share_preemption_is_not_counted_as_a_reclaim(synthesized):
    rule = _rules(synthesized["template"])["batch-quota: reclaim preemptions (counted)"]
    in_share = {**STARTED, "detail": {**STARTED["detail"], "statusReason": "PREEMPTION_IN_PROGRESS: In-share "
                                      "preemption triggered by a higher-priority job"}}
    assert not EventPattern.load(json.dumps(rule["EventPattern"])).matches_event(in_share)
    assert "Targets" not in rule


def test_alerts_go_to_the_encrypted_tls_only_topic_and_every_event_to_the_log_group(synthesized):
    template = synthesized["template"]
    (topic,) = resources_of(template, "AWS::SNS::Topic").values()
    assert "KmsMasterKeyId" in topic["Properties"]
    (policy,) = resources_of(template, "AWS::SNS::TopicPolicy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert any(s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
               for s in statements)
    groups = resources_of(template, "AWS::Logs::LogGroup")
    (events_group,) = [g for g in groups.values() if g["Properties"].get("LogGroupName", "").startswith("/aws/events/")]
    assert events_group["Properties"]["RetentionInDays"] == 30
    for description, rule in _rules(template).items():
        if "EventPattern" in rule and "reclaim" not in description:
            arns = json.dumps([t["Arn"] for t in rule["Targets"]])
            assert "log-group" in arns, description


def test_the_function_reads_read_only_and_publishes_only_to_its_namespace(synthesized):
    template = synthesized["template"]
    (function,) = resources_of(template, "AWS::Lambda::Function").values()
    assert function["Properties"]["Environment"]["Variables"]["NAMESPACE"] == "BatchQuota"
    policies = [p for p in resources_of(template, "AWS::IAM::Policy").values()]
    actions = {a: s for p in policies for s in p["Properties"]["PolicyDocument"]["Statement"]
               for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    assert sorted(a for a in actions if a.startswith("batch:")) == sorted(
        ["batch:DescribeJobQueues", "batch:DescribeServiceEnvironments", "batch:DescribeSchedulingPolicies",
         "batch:ListQuotaShares", "batch:GetJobQueueSnapshot", "batch:ListServiceJobs", "batch:DescribeServiceJob"])
    assert actions["cloudwatch:PutMetricData"]["Condition"] == {"StringEquals": {"cloudwatch:namespace": "BatchQuota"}}
    (schedule,) = [r for r in _rules(template).values() if "ScheduleExpression" in r]
    assert schedule["ScheduleExpression"] == "rate(1 minute)"


def test_the_alarms_defaults_and_a_share_wait_target(synthesized):
    alarms = {a["Properties"]["AlarmDescription"]: a["Properties"]
              for a in resources_of(synthesized["template"], "AWS::CloudWatch::Alarm").values()}
    blocked = alarms["batch-quota: a job queue was blocked"]
    assert (blocked["Period"], blocked["Threshold"], blocked["ComparisonOperator"]) == (
        300, 1, "GreaterThanOrEqualToThreshold")
    reclaims = alarms["batch-quota: more than 10 reclaim preemptions in an hour"]
    assert (reclaims["Period"], reclaims["Threshold"], reclaims["MetricName"]) == (3600, 10, "MatchedEvents")
    waits = {d: a for d, a in alarms.items() if "head-of-line" in d}
    assert {(a["Dimensions"][1]["Value"], a["Threshold"], a["EvaluationPeriods"]) for a in waits.values()} == {
        ("A", 3600, 15), ("B", 1800, 15)}
    assert all(a["AlarmActions"] for a in alarms.values())


def test_the_dashboard_has_a_row_per_share_and_a_widget_per_instance_type(synthesized):
    (dashboard,) = resources_of(synthesized["template"], "AWS::CloudWatch::Dashboard").values()
    body = dashboard["Properties"]["DashboardBody"]
    text = "".join(part if isinstance(part, str) else "${x}" for part in body["Fn::Join"][1]) \
        if isinstance(body, dict) else body
    widgets = json.loads(text)["widgets"]
    titles = [(w["properties"]["title"], w["y"]) for w in widgets]
    assert [t for t, _ in titles] == [f"training/A {GPU}", f"training/A {BIG}", f"training/B {GPU}",
                                      f"training/B {BIG}"]
    assert titles[0][1] == titles[1][1] < titles[2][1] == titles[3][1]  # A's widgets on one row, B's below


def test_refused_props_raise_the_construct_error_with_its_path():
    stack = Stack(fast_app(), "S")
    with pytest.raises(QuotaConstructError) as caught:
        QuotaMonitoring(stack, "Monitoring", [])
    assert (caught.value.path, caught.value.field) == ("S/Monitoring", "queues")
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Q", QUEUE_ARN)
    with pytest.raises(QuotaConstructError, match="wait_targets key 'training/X'"):
        QuotaMonitoring(stack, "Monitoring", [queue], wait_targets={"training/X": Duration.hours(2)})
