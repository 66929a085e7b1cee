"""``QuotaMonitoring`` synthesized once beside a quota stack: cfn-lint clean, cdk-nag AwsSolutions clean (one
acknowledged forced wildcard), the rules' patterns matched (moto's EventBridge matcher) against the documented
events, the alarms' defaults and props, and the dashboard's rows."""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Duration, Stack, Validations
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks
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


#: The cdk-nag rules (other packs than AwsSolutions) that hold the monitoring stack's hardening: log groups
#: encrypted with a KMS key, the function's dead-letter queue and its concurrency limit.
HELD_RULES = {
    "NIST.800.53.R5": ["NIST.800.53.R5-CloudWatchLogGroupEncrypted", "NIST.800.53.R5-LambdaDLQ",
                       "NIST.800.53.R5-LambdaConcurrency", "NIST.800.53.R5-SNSEncryptedKMS"],
    "HIPAA.Security": ["HIPAA.Security-CloudWatchLogGroupEncrypted", "HIPAA.Security-LambdaDLQ",
                       "HIPAA.Security-LambdaConcurrency"],
    "Serverless": ["Serverless-LambdaDLQ"],
}


def _temporary_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("batch-quota-monitoring-*")}


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("monitoring")
    before = _temporary_folders()
    app = App(outdir=str(out), builtin_cloud_formation_validation=False, context=CDK_CONTEXT)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), BatchQuotaChecks(), NIST80053R5Checks(app),
                                    HIPAASecurityChecks(app), ServerlessChecks(app))
    stack = Stack(app, "Quota")
    env = ServiceEnvironment(stack, "Env", service_environment_name="gpu", capacity={GPU: 4, BIG: 4})
    queue = TrainingJobQueue(stack, "Queue", job_queue_name="training", service_environment=env)
    shares = [QuotaShare(stack, "A", quota_share_name="A", job_queue=queue, capacity={GPU: 2, BIG: 2},
                         strategy="LEND_AND_BORROW"),
              QuotaShare(stack, "B", quota_share_name="B", job_queue=queue, capacity={GPU: 2, BIG: 2},
                         strategy="LEND")]
    QuotaMonitoring(stack, "Monitoring", [queue], shares=shares, wait_targets={"training/B": Duration.minutes(30)})
    with contextlib.suppress(Exception):  # the other packs find what the project does not hold (VPC, tracing, ...)
        app.synth()
    report = json.loads((out / "validation-report.json").read_text())
    return {"template": json.loads((out / "Quota.template.json").read_text()),
            "reports": {r["pluginName"]: r for r in report["pluginReports"]}, "out": out,
            "new_temporary_folders": _temporary_folders() - before}


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
    with pytest.raises(QuotaConstructError, match="wait_targets key = 'training/X'"):
        QuotaMonitoring(stack, "Monitoring", [queue], wait_targets={"training/X": Duration.hours(2)})


def _other_queue_share(stack: Stack):
    return QuotaShare.from_quota_share_arn(
        stack, "Elsewhere", "arn:aws:batch:us-east-1:123456789012:job-queue/other/quota-share/Z")


@pytest.mark.parametrize(("props", "field", "expected"), [
    ({"namespace": ""}, "namespace", "a string of 1-255 characters"),
    ({"namespace": "AWS/Batch"}, "namespace", "a namespace not starting with 'AWS/'"),
    ({"namespace": "n" * 256}, "namespace", "a string of 1-255 characters"),
    ({"namespace": "team's"}, "namespace", "printable ASCII, not starting with ':', without quotes"),
    ({"namespace": 'a"b'}, "namespace", "without quotes or backslashes"),
    ({"namespace": "tab\there"}, "namespace", "printable ASCII"),
    ({"namespace": ":x"}, "namespace", "not starting with ':'"),
    ({"wait_target": Duration.seconds(0)}, "wait_target", "a duration above zero"),
    ({"shares": "other"}, "shares", "a share of a monitored job queue (training)"),
    ({"blocked_events": 0}, "blocked_events", "an integer of at least 1"),
])
def test_refused_props_are_refused_before_anything_is_built(props, field, expected):
    stack = Stack(fast_app(), "S")
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Q", QUEUE_ARN)
    if props.get("shares") == "other":
        props = {"shares": [_other_queue_share(stack)]}
    with pytest.raises(QuotaConstructError) as caught:
        QuotaMonitoring(stack, "Monitoring", [queue], **props)
    message = str(caught.value)
    assert message.startswith(f"QuotaMonitoring 'Monitoring': {field} = ") and expected in message, message
    assert (caught.value.path, caught.value.field) == ("S/Monitoring", field)
    assert stack.node.try_find_child("Monitoring") is None  # nothing half-built


def test_a_zero_wait_target_for_one_share_is_refused():
    stack = Stack(fast_app(), "S")
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Q", QUEUE_ARN)
    share = QuotaShare.from_quota_share_arn(stack, "A", QUEUE_ARN + "/quota-share/A")
    with pytest.raises(QuotaConstructError, match=r"wait_targets\[training/A\] = '0 minutes' is invalid"):
        QuotaMonitoring(stack, "Monitoring", [queue], shares=[share], wait_targets={"training/A": Duration.minutes(0)})


def test_a_namespace_with_spaces_and_slashes_is_quoted_in_the_dashboards_search():
    stack = Stack(fast_app(), "S")
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Q", QUEUE_ARN)
    share = QuotaShare.from_quota_share_arn(stack, "A", QUEUE_ARN + "/quota-share/A")
    QuotaMonitoring(stack, "Monitoring", [queue], shares=[share], namespace="Team A/Batch-Quota#1")
    (dashboard,) = resources_of(Template.from_stack(stack).to_json(), "AWS::CloudWatch::Dashboard").values()
    parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"][1]
    body = json.loads("".join(part if isinstance(part, str) else "x" for part in parts))
    (expression,) = [m[0]["expression"] for w in body["widgets"] for m in w["properties"]["metrics"]]
    assert expression.startswith("""SEARCH('{"Team A/Batch-Quota#1",JobQueue,QuotaShare,InstanceType} """)


def test_synthesizing_leaves_no_folder_of_its_own_the_cdk_stages_the_function(synthesized):
    assert synthesized["new_temporary_folders"] == set()
    (asset,) = [p for p in synthesized["out"].glob("asset.*") if (p / "index.py").is_file()]
    assert list(asset.glob("models/batch/*/service-2.json"))


def test_the_other_cdk_nag_packs_hold_the_hardening(synthesized):
    for pack, rules in HELD_RULES.items():
        found = {v["ruleName"] for v in synthesized["reports"][pack]["violations"]}
        assert found.isdisjoint(rules), (pack, found & set(rules))


def _key_statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    (key,) = resources_of(template, "AWS::KMS::Key").values()
    return key["Properties"]["KeyPolicy"]["Statement"]


def test_the_log_groups_are_encrypted_with_the_topics_key(synthesized):
    template = synthesized["template"]
    (key_id,) = resources_of(template, "AWS::KMS::Key")
    (topic,) = resources_of(template, "AWS::SNS::Topic").values()
    assert topic["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    groups = resources_of(template, "AWS::Logs::LogGroup").values()
    assert [g["Properties"]["KmsKeyId"] for g in groups] == [{"Fn::GetAtt": [key_id, "Arn"]}] * 2
    (logs_statement,) = [s for s in _key_statements(template) if "logs." in json.dumps(s["Principal"])]
    assert "kms:EncryptionContext:aws:logs:arn" in logs_statement["Condition"]["ArnLike"]


def test_every_grant_to_a_service_names_this_account_and_its_sources(synthesized):
    """The confused deputy: no statement lets events.amazonaws.com or cloudwatch.amazonaws.com act for another
    account's rule or alarm."""
    template = synthesized["template"]
    statements = list(_key_statements(template))
    (topic_policy,) = resources_of(template, "AWS::SNS::TopicPolicy").values()
    statements += topic_policy["Properties"]["PolicyDocument"]["Statement"]
    (logs_policy,) = resources_of(template, "AWS::Logs::ResourcePolicy").values()
    document = logs_policy["Properties"]["PolicyDocument"]
    tokens = {f"@{i}@": part for i, part in enumerate(document["Fn::Join"][1]) if not isinstance(part, str)}
    text = "".join(part if isinstance(part, str) else f"@{i}@" for i, part in enumerate(document["Fn::Join"][1]))
    statements += json.loads(text, object_hook=lambda o: {k: tokens.get(v, v) if isinstance(v, str) else v
                                                          for k, v in o.items()})["Statement"]
    granted = 0
    for statement in statements:
        principal = statement.get("Principal", {})
        services = principal.get("Service", []) if isinstance(principal, dict) else []
        services = [services] if isinstance(services, (str, dict)) else services
        named = {service for service in services if isinstance(service, str)}
        if statement["Effect"] == "Allow" and {"events.amazonaws.com", "cloudwatch.amazonaws.com"} & named:
            granted += 1
            condition = statement["Condition"]
            assert condition["StringEquals"]["aws:SourceAccount"] == {"Ref": "AWS::AccountId"}, statement
            (operator,) = set(condition) - {"StringEquals"}
            assert operator in ("ArnEquals", "ArnLike") and condition[operator]["aws:SourceArn"], statement
    assert granted == 5  # key: events, cloudwatch; topic: events, cloudwatch; logs: events


def test_the_topic_names_exactly_the_alerting_rules_and_the_alarms(synthesized):
    template = synthesized["template"]
    (topic_policy,) = resources_of(template, "AWS::SNS::TopicPolicy").values()
    allowed = {s["Principal"]["Service"]: s["Condition"]["ArnEquals"]["aws:SourceArn"]
               for s in topic_policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Allow"}
    rules = {k for k, r in resources_of(template, "AWS::Events::Rule").items()
             if any("Ref" in json.dumps(t["Arn"]) and "Topic" in json.dumps(t["Arn"]) for t in
                    r["Properties"].get("Targets", []))}
    assert {a["Fn::GetAtt"][0] for a in allowed["events.amazonaws.com"]} == rules
    assert {a["Fn::GetAtt"][0] for a in allowed["cloudwatch.amazonaws.com"]} == set(
        resources_of(template, "AWS::CloudWatch::Alarm"))


def test_the_function_runs_once_at_a_time_fails_into_a_queue_and_its_errors_alarm(synthesized):
    template = synthesized["template"]
    (function,) = resources_of(template, "AWS::Lambda::Function").values()
    (queue_id,) = resources_of(template, "AWS::SQS::Queue")
    assert function["Properties"]["ReservedConcurrentExecutions"] == 1
    (key_id,) = resources_of(template, "AWS::KMS::Key")
    assert function["Properties"]["KmsKeyArn"] == {"Fn::GetAtt": [key_id, "Arn"]}  # its environment
    (dead_letters,) = resources_of(template, "AWS::SQS::Queue").values()
    assert dead_letters["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert function["Properties"]["DeadLetterConfig"] == {"TargetArn": {"Fn::GetAtt": [queue_id, "Arn"]}}
    (config,) = resources_of(template, "AWS::Lambda::EventInvokeConfig").values()
    assert config["Properties"]["MaximumRetryAttempts"] == 0
    alarms = [a["Properties"] for a in resources_of(template, "AWS::CloudWatch::Alarm").values()
              if a["Properties"].get("MetricName") == "Errors"]
    (errors,) = alarms
    assert (errors["Namespace"], errors["Threshold"], errors["Statistic"]) == ("AWS/Lambda", 1, "Sum")
    assert errors["AlarmActions"]
