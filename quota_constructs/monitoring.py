"""``QuotaMonitoring``: quota operations as code beside a quota stack: events, per-share metrics, alarms, dashboard.

- EventBridge rules for AWS Batch's four service-job events, from the patterns the project ships
  (``policy_engine.events.patterns``; a queue filter only where the event's detail names the queue), delivered
  to an SNS topic (created KMS-encrypted and TLS-only, or given) and a CloudWatch Logs group;
- one KMS key (created, or ``encryption_key``) for the topic it creates and both log groups;
- a Python Lambda function (``monitoring_function/index.py``) every minute publishing each share's own use,
  borrowed, lent, waiting jobs and head-of-line age per instance type (its docstring lists the dimensions),
  with least-privilege IAM: the read-only actions the connectors use and ``cloudwatch:PutMetricData``
  conditioned on its namespace; one run at a time (reserved concurrency 1: overlapping runs would publish
  twice), a failed run is not retried and lands in a dead-letter queue, and an alarm reports its errors;
- alarms (props to tune): any Queue Blocked event in 5 minutes; a share's head-of-line age above its wait
  target for 15 minutes; more than 10 reclaim preemptions in an hour; the function's errors;
- a dashboard: one row per share, one widget per instance type.

Every grant to a service principal (the topic policy, the key policy, the logs resource policy) names this
account (``aws:SourceAccount``) and the rules or alarms that may use it (``aws:SourceArn``), so another
account's rule cannot publish to the on-call topic (the confused deputy).
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import botocore
import jsii
from aws_cdk import ArnFormat, BundlingOptions, DockerImage, Duration, ILocalBundling, Names, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from policy_engine.events import patterns as event_patterns
from quota_constructs.base import QuotaShareBase, TrainingJobQueueBase
from quota_constructs.grants import STAR_WILDCARD_REASON, acknowledge_wildcard
from quota_constructs.validation import Where, is_token

DEFAULT_NAMESPACE = "BatchQuota"
#: The documented reason of a reclaim ("Service job preemption events"): in-share preemptions say otherwise.
RECLAIM_REASON_PREFIX = "PREEMPTION_IN_PROGRESS: Cross-share preemption"
FUNCTION_SOURCE = Path(__file__).parent / "monitoring_function"
#: Why PutMetricData has ``Resource: *`` (cdk-nag AwsSolutions-IAM5): CloudWatch has no metric resources.
PUT_METRIC_DATA_REASON = ("cloudwatch:PutMetricData supports no resource-level permissions; the statement is "
                          "confined to the monitoring namespace by the cloudwatch:namespace condition")
#: Why the function's log permissions end in ``:*`` (AwsSolutions-IAM5): its log streams are created at run time.
LOG_STREAMS_REASON = "the function's log streams are named by Lambda at run time, inside its own log group"
#: CloudWatch's namespace length (PutMetricData's ``Namespace`` shape: 1-255).
NAMESPACE_LENGTH = (1, 255)
#: The prefix CloudWatch keeps for AWS's own namespaces (PutMetricData refuses it).
RESERVED_NAMESPACE_PREFIX = "AWS/"
#: Characters a namespace may not hold here: CloudWatch takes any ASCII but control characters, and the
#: dashboard's ``SEARCH('{"NAMESPACE",...}')`` expression would break on a quote or a backslash.
NAMESPACE_REFUSED = frozenset("'\"\\")
#: The function runs once at a time: overlapping runs would publish every metric twice.
FUNCTION_CONCURRENCY = 1


@jsii.implements(ILocalBundling)
class _StageFunction:
    """Stages the function's asset through the CDK's own asset staging (into the cloud assembly, never a folder
    of its own): ``index.py`` and botocore's Batch model (``AWS_DATA_PATH``), so that the runtime's boto3 knows
    the quota-share operations whatever its version."""

    def try_bundle(self, output_dir: str, *args: Any, **options: Any) -> bool:
        staged = Path(output_dir)
        shutil.copy(FUNCTION_SOURCE / "index.py", staged / "index.py")
        model_dir = Path(botocore.__file__).parent / "data" / "batch"
        version = sorted(p.name for p in model_dir.iterdir() if p.is_dir())[-1]
        target = staged / "models" / "batch" / version
        target.mkdir(parents=True)
        source = model_dir / version / "service-2.json.gz"
        if source.exists():
            (target / "service-2.json").write_bytes(gzip.decompress(source.read_bytes()))
        else:
            shutil.copy(model_dir / version / "service-2.json", target / "service-2.json")
        return True


def _function_code() -> lambda_.Code:
    """The function's code, bundled locally (``_StageFunction``: no Docker; the image is never pulled)."""
    return lambda_.Code.from_asset(str(FUNCTION_SOURCE), bundling=BundlingOptions(
        image=DockerImage.from_registry("local-bundling-only"), local=cast(ILocalBundling, _StageFunction())))


@jsii.implements(events.IRuleTarget)
class _TopicTarget:
    """A rule delivering to a topic. CDK's ``SnsTopic`` target grants ``events.amazonaws.com`` the topic without a
    condition; ``QuotaMonitoring`` grants it once for its rules, with ``aws:SourceAccount`` and ``aws:SourceArn``."""

    def __init__(self, topic: sns.ITopic) -> None:
        self._topic = topic

    def bind(self, rule: events.IRule, id: str | None = None) -> events.RuleTargetConfig:
        return events.RuleTargetConfig(arn=self._topic.topic_arn)


@jsii.implements(events.IRuleTarget)
class _LogGroupTarget:
    """A rule delivering to a log group. CDK's ``CloudWatchLogGroup`` target writes the log group's resource
    policy through a custom-resource Lambda; ``QuotaMonitoring`` writes it as a plain ``AWS::Logs::ResourcePolicy``."""

    def __init__(self, log_group: logs.ILogGroup) -> None:
        self._log_group = log_group

    def bind(self, rule: events.IRule, id: str | None = None) -> events.RuleTargetConfig:
        stack = Stack.of(self._log_group)
        arn = stack.format_arn(service="logs", resource="log-group", resource_name=self._log_group.log_group_name,
                               arn_format=ArnFormat.COLON_RESOURCE_NAME)
        return events.RuleTargetConfig(arn=arn)


class QuotaMonitoring(Construct):
    """Alerts, metrics and a dashboard for ``queues`` (built here or imported by ARN).

    ``shares``: the shares the dashboard and the wait-target alarms cover (a ``QuotaShare`` built here knows its
    instance types; an imported one gets one widget listing every instance type the function publishes).
    ``wait_targets``: per share (``QUEUE/SHARE``) the head-of-line age its alarm allows; ``wait_target`` for the
    others (default one hour; a topology's targets feed this when the topology declares them).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        queues: Sequence[TrainingJobQueueBase],
        topic: sns.ITopic | None = None,
        *,
        shares: Sequence[QuotaShareBase] = (),
        namespace: str = DEFAULT_NAMESPACE,
        wait_target: Duration | None = None,
        wait_targets: Mapping[str, Duration] | None = None,
        blocked_events: int = 1,
        reclaims_per_hour: int = 10,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        schedule: Duration | None = None,
        encryption_key: kms.IKey | None = None,
    ) -> None:
        _validate(Where("QuotaMonitoring", id, scope, id), queues, shares, namespace, wait_target,
                  dict(wait_targets or {}), blocked_events, reclaims_per_hour)
        super().__init__(scope, id)
        self.namespace = namespace
        queue_arns = [queue.job_queue_arn for queue in queues]
        #: the key of the topic created here and of both log groups (``encryption_key``, or one created here)
        self.key = encryption_key if encryption_key is not None else kms.Key(
            self, "TopicKey", enable_key_rotation=True,
            description="batch-quota monitoring: encrypts the alert topic and the log groups")
        self._grant_logs_the_key()
        self.topic = topic if topic is not None else self._topic()
        self.log_group = logs.LogGroup(
            self, "Events", retention=log_retention, removal_policy=RemovalPolicy.RETAIN, encryption_key=self.key,
            log_group_name=f"/aws/events/{Names.unique_resource_name(self, max_length=200, separator='-')}")
        self.rules = {kind.key: self._rule(kind.key, queue_arns) for kind in event_patterns.kinds()}
        reclaim = event_patterns.pattern("preemption_started")
        self.reclaim_rule = events.Rule(  # no target: the alarm counts its matches
            self, "ReclaimPreemptions", description="batch-quota: reclaim preemptions (counted)",
            event_pattern=_pattern({**reclaim, "detail": {"statusReason": [{"prefix": RECLAIM_REASON_PREFIX}]}}))
        self._log_group_policy()
        self.dead_letters = sqs.Queue(self, "FunctionDeadLetters", encryption=sqs.QueueEncryption.KMS,
                                      encryption_master_key=self.key, enforce_ssl=True,
                                      retention_period=Duration.days(14))
        self.function = self._function(queues, schedule or Duration.minutes(1))
        self.alarms = self._alarms(shares, wait_target or Duration.hours(1), dict(wait_targets or {}),
                                   blocked_events, reclaims_per_hour)
        self._topic_policy()
        self.dashboard = self._dashboard(shares)

    def _source(self, service: str, resource: str, sep: str = "/") -> str:
        """``arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE/*``: any such resource of this account (a key policy
        cannot name the rules or alarms themselves: they depend on the topic, which depends on the key)."""
        return Stack.of(self).format_arn(service=service, resource=resource, resource_name="*",
                                         arn_format=ArnFormat.SLASH_RESOURCE_NAME if sep == "/" else
                                         ArnFormat.COLON_RESOURCE_NAME)

    def _conditions(self, arn_operator: str, sources: list[str] | str) -> dict[str, Any]:
        return {"StringEquals": {"aws:SourceAccount": Stack.of(self).account},
                arn_operator: {"aws:SourceArn": sources}}

    def _topic(self) -> sns.Topic:
        """KMS-encrypted (the key EventBridge and CloudWatch of this account may use), TLS-only (``enforce_ssl``)."""
        for service, source in (("events.amazonaws.com", self._source("events", "rule")),
                                ("cloudwatch.amazonaws.com", self._source("cloudwatch", "alarm", ":"))):
            self.key.add_to_resource_policy(iam.PolicyStatement(
                principals=[iam.ServicePrincipal(service)], actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"], conditions=self._conditions("ArnLike", source)))
        return sns.Topic(self, "Topic", master_key=self.key, enforce_ssl=True,
                         display_name="batch-quota: queue blocked, reclaims, wait targets")

    def _grant_logs_the_key(self) -> None:
        """CloudWatch Logs of this Region may use the key for this account's log groups (AWS's documented
        statement, conditioned on the encryption context)."""
        stack = Stack.of(self)
        self.key.add_to_resource_policy(iam.PolicyStatement(
            principals=[iam.ServicePrincipal(f"logs.{stack.region}.amazonaws.com")],
            actions=["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
            resources=["*"],
            conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn": self._source("logs", "log-group", ":")}}))

    def _log_group_policy(self) -> None:
        """EventBridge delivers to the events log group, for this construct's rules only."""
        rules = [rule.rule_arn for rule in self.rules.values()]
        logs.ResourcePolicy(self, "EventsToLogs", policy_statements=[iam.PolicyStatement(
            principals=[iam.ServicePrincipal("events.amazonaws.com"),
                        iam.ServicePrincipal("delivery.logs.amazonaws.com")],
            actions=["logs:CreateLogStream", "logs:PutLogEvents"],
            resources=[self.log_group.log_group_arn], conditions=self._conditions("ArnEquals", rules))])

    def _topic_policy(self) -> None:
        """EventBridge (this construct's alerting rules) and CloudWatch (its alarms) may publish to the topic."""
        rules = [rule.rule_arn for key, rule in self.rules.items() if key != "state_change"]
        alarms = [alarm.alarm_arn for alarm in self.alarms.values()]
        for service, sources in (("events.amazonaws.com", rules), ("cloudwatch.amazonaws.com", alarms)):
            self.topic.add_to_resource_policy(iam.PolicyStatement(
                principals=[iam.ServicePrincipal(service)], actions=["sns:Publish"],
                resources=[self.topic.topic_arn], conditions=self._conditions("ArnEquals", sources)))

    def _rule(self, key: str, queue_arns: list[str]) -> events.Rule:
        kind = event_patterns.kind(key)
        rule = events.Rule(self, _rule_id(key), description=f"batch-quota: {kind.detail_type}",
                           event_pattern=_pattern(event_patterns.pattern(key, queue_arns)))
        if key != "state_change":  # every job's every transition: logged, not mailed
            rule.add_target(cast(events.IRuleTarget, _TopicTarget(self.topic)))  # jsii.implements: untyped
        rule.add_target(cast(events.IRuleTarget, _LogGroupTarget(self.log_group)))
        return rule

    def _function(self, queues: Sequence[TrainingJobQueueBase], schedule: Duration) -> lambda_.Function:
        role = iam.Role(self, "FunctionRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                        description="batch-quota monitoring: reads the queues, publishes metrics")
        log_group = logs.LogGroup(self, "FunctionLogs", retention=logs.RetentionDays.ONE_MONTH,
                                  removal_policy=RemovalPolicy.DESTROY, encryption_key=self.key)
        function = lambda_.Function(
            self, "Function", runtime=lambda_.Runtime.PYTHON_3_14, handler="index.handler",
            code=_function_code(), role=role, log_group=log_group,
            timeout=Duration.seconds(50), memory_size=256, reserved_concurrent_executions=FUNCTION_CONCURRENCY,
            # the next scheduled run publishes fresh figures: a failed or throttled run goes to the queue, unretried
            dead_letter_queue=self.dead_letters, retry_attempts=0, max_event_age=Duration.minutes(1),
            environment_encryption=self.key,
            description="batch-quota: per-share metrics from GetJobQueueSnapshot",
            environment={"QUEUE_ARNS": ",".join(q.job_queue_arn for q in queues), "NAMESPACE": self.namespace,
                         "AWS_DATA_PATH": "/var/task/models"})
        log_group.grant_write(role)
        for queue in queues:
            queue.grant_read(role)
        queues[0].grant_read_account_service_jobs(role)
        role.add_to_principal_policy(iam.PolicyStatement(
            actions=["cloudwatch:PutMetricData"], resources=["*"],
            conditions={"StringEquals": {"cloudwatch:namespace": self.namespace}}))
        acknowledge_wildcard(role, self, "*", f"{STAR_WILDCARD_REASON}; {PUT_METRIC_DATA_REASON}")
        events.Rule(self, "EveryMinute", schedule=events.Schedule.rate(schedule),
                    description="batch-quota: publish per-share metrics", targets=[targets.LambdaFunction(function)])
        return function

    def _metric(self, name: str, dimensions: Mapping[str, str], statistic: str = "Maximum") -> cloudwatch.Metric:
        return cloudwatch.Metric(namespace=self.namespace, metric_name=name, dimensions_map=dict(dimensions),
                                 statistic=statistic, period=Duration.minutes(1))

    def _alarms(self, shares: Sequence[QuotaShareBase], wait_target: Duration, wait_targets: dict[str, Duration],
                blocked_events: int, reclaims_per_hour: int) -> dict[str, cloudwatch.Alarm]:
        action = actions.SnsAction(self.topic)
        alarms = {
            "queue_blocked": cloudwatch.Alarm(
                self, "QueueBlockedAlarm", alarm_description="batch-quota: a job queue was blocked",
                metric=_matched(self.rules["queue_blocked"], Duration.minutes(5)),
                threshold=blocked_events, evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING),
            "reclaims": cloudwatch.Alarm(
                self, "ReclaimsAlarm", alarm_description=f"batch-quota: more than {reclaims_per_hour} reclaim "
                "preemptions in an hour", metric=_matched(self.reclaim_rule, Duration.hours(1)),
                threshold=reclaims_per_hour, evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING),
            "function_errors": cloudwatch.Alarm(
                self, "FunctionErrorsAlarm", alarm_description="batch-quota: the monitoring function failed (its "
                "metrics are missing; the failed runs are in its dead-letter queue)",
                metric=self.function.metric_errors(period=Duration.minutes(5), statistic="Sum"),
                threshold=1, evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING),
        }
        for share in shares:
            share_id = f"{share.job_queue_name}/{share.quota_share_name}"
            target = wait_targets.get(share_id, wait_target)
            alarms[f"wait:{share_id}"] = cloudwatch.Alarm(
                self, f"WaitAlarm:{share_id}", alarm_description=f"batch-quota: {share_id}'s head-of-line job has "
                f"waited more than {target.to_human_string()} for 15 minutes",
                metric=self._metric("HeadOfLineAge", {"JobQueue": share.job_queue_name,
                                                      "QuotaShare": share.quota_share_name}),
                threshold=target.to_seconds(), evaluation_periods=15, datapoints_to_alarm=15,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING)
        for alarm in alarms.values():
            alarm.add_alarm_action(action)
        return alarms

    def _dashboard(self, shares: Sequence[QuotaShareBase]) -> cloudwatch.Dashboard:
        dashboard = cloudwatch.Dashboard(self, "Dashboard")
        for share in shares:
            dims = {"JobQueue": share.job_queue_name, "QuotaShare": share.quota_share_name}
            widgets: list[cloudwatch.IWidget] = []
            for unit in share.instance_types or ():
                typed = {**dims, "InstanceType": unit}
                widgets.append(cloudwatch.GraphWidget(
                    title=f"{share.job_queue_name}/{share.quota_share_name} {unit}", width=8,
                    left=[self._metric(name, typed, "Average") for name in ("OwnUse", "Borrowed", "Lent",
                                                                            "WaitingJobs")],
                    right=[self._metric("HeadOfLineAge", typed)]))
            if not widgets:  # an imported share: its instance types are not known here
                widgets.append(cloudwatch.GraphWidget(
                    title=f"{share.job_queue_name}/{share.quota_share_name}", width=24,
                    left=[cloudwatch.MathExpression(
                        expression=f"SEARCH('{{\"{self.namespace}\",JobQueue,QuotaShare,InstanceType}} "
                                   f"JobQueue=\"{share.job_queue_name}\" QuotaShare=\"{share.quota_share_name}\" "
                                   "MetricName=\"OwnUse\"', 'Average', 60)",
                        label="OwnUse", period=Duration.minutes(1))]))
            dashboard.add_widgets(cast(cloudwatch.IWidget, cloudwatch.Row(*widgets)))  # a Row is an IWidget
        return dashboard


def _validate(where: Where, queues: Sequence[TrainingJobQueueBase], shares: Sequence[QuotaShareBase],
              namespace: str, wait_target: Duration | None, wait_targets: dict[str, Duration],
              blocked_events: int, reclaims_per_hour: int) -> None:
    """Every prop before ``super().__init__`` (CONTRIBUTING: a refused prop leaves no half-built construct)."""
    if not queues:
        where.fail("queues", [], "at least one job queue")
    if not is_token(namespace):
        if not isinstance(namespace, str) or not NAMESPACE_LENGTH[0] <= len(namespace) <= NAMESPACE_LENGTH[1]:
            where.fail("namespace", namespace, f"a string of {NAMESPACE_LENGTH[0]}-{NAMESPACE_LENGTH[1]} characters "
                                               "(CloudWatch's namespace length)")
        if namespace.startswith(RESERVED_NAMESPACE_PREFIX):
            where.fail("namespace", namespace, f"a namespace not starting with {RESERVED_NAMESPACE_PREFIX!r} "
                                               "(CloudWatch keeps it for AWS's own metrics)")
        if namespace.startswith(":") or not all(" " <= c <= "~" and c not in NAMESPACE_REFUSED for c in namespace):
            where.fail("namespace", namespace, "printable ASCII, not starting with ':', without quotes or "
                                               "backslashes (the dashboard's SEARCH expression quotes it)")
    monitored = {queue.job_queue_name for queue in queues}
    for share in shares:
        name = share.job_queue_name
        if name not in monitored and not is_token(name) and not any(is_token(q) for q in monitored):
            where.fail("shares", share.share_id, f"a share of a monitored job queue ({', '.join(sorted(monitored))}): "
                                                 "the function publishes no metric for another queue's shares, so "
                                                 "its wait alarm could never fire")
    known = {share.share_id for share in shares}
    for share_id in wait_targets:
        if share_id not in known:
            where.fail("wait_targets key", share_id, f"one of the shares passed as shares= "
                                                     f"({', '.join(sorted(known)) or 'none'})")
    for field, duration in [("wait_target", wait_target), *((f"wait_targets[{k}]", v) for k, v in
                                                            wait_targets.items())]:
        if duration is not None and not duration.is_unresolved() and duration.to_seconds() <= 0:
            where.fail(field, duration.to_human_string(), "a duration above zero (with zero the alarm fires "
                                                          "whenever a job waits at all)")
    for field, value in (("blocked_events", blocked_events), ("reclaims_per_hour", reclaims_per_hour)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            where.fail(field, value, "an integer of at least 1")


def _rule_id(key: str) -> str:
    return "".join(part.capitalize() for part in key.split("_"))


def _pattern(data: Mapping[str, object]) -> events.EventPattern:
    """A pattern mapping (``event_patterns.pattern``) as CDK's ``EventPattern``."""
    return events.EventPattern(source=list(data["source"]),  # type: ignore[call-overload]
                               detail_type=list(data["detail-type"]),  # type: ignore[call-overload]
                               detail=data.get("detail"))  # type: ignore[arg-type]


def _matched(rule: events.Rule, period: Duration) -> cloudwatch.Metric:
    """EventBridge's own count of events a rule matched (``AWS/Events MatchedEvents``)."""
    return cloudwatch.Metric(namespace="AWS/Events", metric_name="MatchedEvents",
                             dimensions_map={"RuleName": rule.rule_name}, statistic="Sum", period=period)
