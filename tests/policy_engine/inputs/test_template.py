"""``import --from-template`` and ``check FILE.template.json``: any template's quota resources, intrinsics resolved."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs.examples import example_topology
from policy_engine.inputs.loading import LoadError, load_topology
from policy_engine.inputs.template import load_template
from tests.policy_engine.adapters.aws.fake_account import topology_template

HAND_WRITTEN = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Capacity: {Type: Number, Default: 4}
Resources:
  Env:
    Type: AWS::Batch::ServiceEnvironment
    Properties:
      ServiceEnvironmentName: sam-env
      ServiceEnvironmentType: SAGEMAKER_TRAINING
      CapacityLimits: [{CapacityUnit: ml.g5.xlarge, MaxCapacity: 4}]
      Tags: {team: ml, "aws:cloudformation:stack-name": other-app}
  Policy:
    Type: AWS::Batch::SchedulingPolicy
    Properties:
      Name: sam-policy
      QuotaSharePolicy: {IdleResourceAssignmentStrategy: FIFO}
  Queue:
    Type: AWS::Batch::JobQueue
    Properties:
      JobQueueName: sam-queue
      JobQueueType: SAGEMAKER_TRAINING
      Priority: 5
      SchedulingPolicyArn: !Ref Policy
      ServiceEnvironmentOrder:
        - {Order: 1, ServiceEnvironment: !GetAtt Env.ServiceEnvironmentArn}
  Research:
    Type: AWS::Batch::QuotaShare
    Properties:
      QuotaShareName: research
      JobQueue: !Ref Queue
      CapacityLimits: [{CapacityUnit: ml.g5.xlarge, MaxCapacity: 2}]
      ResourceSharingConfiguration: {Strategy: LEND_AND_BORROW, BorrowLimit: 100}
      PreemptionConfiguration: {InSharePreemption: ENABLED}
  Prod:
    Type: AWS::Batch::QuotaShare
    Properties:
      QuotaShareName: prod
      JobQueue: !GetAtt Queue.JobQueueArn
      CapacityLimits: [{CapacityUnit: ml.g5.xlarge, MaxCapacity: 2}]
      ResourceSharingConfiguration: {Strategy: LEND}
  Bucket:
    Type: AWS::S3::Bucket
"""


def test_a_hand_written_yaml_template_with_short_intrinsics(tmp_path):
    path = tmp_path / "sam.yaml"
    path.write_text(HAND_WRITTEN)
    topology = load_template(path)
    queue = topology.job_queues[0]
    assert (queue.name, queue.service_environment, queue.priority, queue.scheduling_policy) == \
        ("sam-queue", "sam-env", 5, "sam-policy")
    assert [(s.name, s.strategy, s.borrow_limit, s.in_share_preemption) for s in queue.shares] == [
        ("research", "LEND_AND_BORROW", 100, True), ("prod", "LEND", None, False)]
    env = topology.service_environments[0]
    assert env.tags == {"team": "ml"} and env.system_tags == {"aws:cloudformation:stack-name": "other-app"}


def _load_problems(tmp_path, text: str):
    """The template file written from ``text``, and every problem ``load_template`` names in it."""
    path = tmp_path / "sam.yaml"
    path.write_text(text)
    with pytest.raises(LoadError) as error:
        load_template(path)
    return path, error.value.problems


def test_unresolvable_intrinsics_are_named_not_guessed(tmp_path):
    text = HAND_WRITTEN.replace("MaxCapacity: 4}", "MaxCapacity: !Ref Capacity}").replace(
        "JobQueue: !GetAtt Queue.JobQueueArn", "JobQueue: !ImportValue shared-queue")
    path, problems = _load_problems(tmp_path, text)
    assert problems == [
        f"{path}: Resources.Env.Properties.CapacityLimits[0].MaxCapacity: unresolvable: Ref to parameter 'Capacity' "
        "(its value is known only at deploy)",
        f"{path}: Resources.Prod.Properties.JobQueue: unresolvable: Fn::ImportValue 'shared-queue' "
        "(another stack's export)",
    ]


def test_the_constructs_template_reads_back_as_the_topology(tmp_path):
    template = topology_template(example_topology())
    path = tmp_path / "QuotaStack.template.json"
    path.write_text(json.dumps(template))
    topology = load_template(path)
    expected = example_topology()
    assert topology.job_queues == expected.job_queues
    assert topology.service_environments == expected.service_environments


def test_check_reads_a_template_and_import_writes_the_topology(tmp_path):
    path = tmp_path / "QuotaStack.template.json"
    path.write_text(json.dumps(topology_template(example_topology())))
    runner = CliRunner()
    checked = runner.invoke(main, ["check", str(path)])
    assert checked.exit_code == 0, checked.output
    assert "training/QS1" in checked.output
    out = tmp_path / "from-template.yaml"
    imported = runner.invoke(main, ["import", "--from-template", str(path), "-o", str(out)])
    assert imported.exit_code == 0, imported.output
    assert load_topology(out).job_queues == example_topology().job_queues


def test_check_of_a_template_with_a_broken_share_fails_with_its_rule(tmp_path):
    template = topology_template(example_topology())
    share = next(r for r in template["Resources"].values() if r["Type"] == "AWS::Batch::QuotaShare")
    share["Properties"]["CapacityLimits"][0]["MaxCapacity"] = 50  # far above the environment's 3
    path = tmp_path / "broken.template.json"
    path.write_text(json.dumps(template))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1
    assert "BQ2" in result.output


def test_a_template_reference_to_a_missing_resource_is_one_line(tmp_path):
    path = tmp_path / "sam.yaml"
    path.write_text(HAND_WRITTEN.replace("JobQueue: !Ref Queue", "JobQueue: !Ref Qeueu"))
    result = CliRunner().invoke(main, ["import", "--from-template", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: {path}: Resources.Research.Properties.JobQueue: refers to 'Qeueu', "
                                     "which is not a resource of this template")


def test_check_of_a_template_needs_no_boto3(tmp_path):
    """Templates are read without credentials or the SDK: boto3 loads only when a command talks to AWS."""
    import subprocess
    import sys

    path = tmp_path / "QuotaStack.template.json"
    path.write_text(json.dumps(topology_template(example_topology())))
    code = (f"import sys\nfrom policy_engine.cli.app import main\ntry:\n    main(['check', {str(path)!r}])\n"
            "except SystemExit as e:\n    print(e.code)\nprint('boto3' in sys.modules, 'botocore' in sys.modules)")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip().splitlines()[-2:] == ["0", "False False"]


def _check_and_import(tmp_path, text: str) -> tuple[object, object, object]:
    """``(check result, import result, path)`` of a template file holding ``text``."""
    path = tmp_path / "t.yaml"
    path.write_text(text)
    runner = CliRunner()
    return runner.invoke(main, ["check", str(path)]), runner.invoke(main, ["import", "--from-template", str(path)]), \
        path


@pytest.mark.parametrize(("old", "new", "where", "rule"), [
    ("Priority: 5", "Priority: 5\n      JobStateTimeLimitActions: x", "Queue.Properties.JobStateTimeLimitActions",
     "expected a list"),
    ("Priority: 5", "Priority: 5\n      JobStateTimeLimitActions: [x]",
     "Queue.Properties.JobStateTimeLimitActions[0]", "expected a mapping"),
    ("ServiceEnvironmentOrder:\n        - {Order: 1, ServiceEnvironment: !GetAtt Env.ServiceEnvironmentArn}",
     "ServiceEnvironmentOrder: {Ref: X}", "Queue.Properties.ServiceEnvironmentOrder", "unresolvable: Ref 'X'"),
    ("ServiceEnvironmentOrder:\n        - {Order: 1, ServiceEnvironment: !GetAtt Env.ServiceEnvironmentArn}",
     "ServiceEnvironmentOrder: [abc]", "Queue.Properties.ServiceEnvironmentOrder[0]", "expected a mapping"),
    ("ResourceSharingConfiguration: {Strategy: LEND}", "ResourceSharingConfiguration: LEND",
     "Prod.Properties.ResourceSharingConfiguration", "expected a mapping"),
    ("Tags: {team: ml,", "Tags: {team: [ml],", "Env.Properties.Tags.team", "expected a string"),
    ("      CapacityLimits: [{CapacityUnit: ml.g5.xlarge, MaxCapacity: 2}]\n"
     "      ResourceSharingConfiguration: {Strategy: LEND}",
     "      ResourceSharingConfiguration: {Strategy: LEND}", "Prod.Properties.CapacityLimits", "missing"),
    ("      Priority: 5\n", "", "Queue.Properties.Priority", "missing"),
    ("CapacityLimits: [{CapacityUnit: ml.g5.xlarge, MaxCapacity: 4}]",
     "CapacityLimits: [{CapacityUnit: ml.g5.xlarge, MaxCapacity: 4}, {CapacityUnit: ml.g5.xlarge, MaxCapacity: 9}]",
     "Env.Properties.CapacityLimits", "CapacityUnit 'ml.g5.xlarge' given more than once"),
    ("JobQueueType: SAGEMAKER_TRAINING", "JobQueueType: !Ref T", "Queue.Properties.JobQueueType",
     "unresolvable: Ref 'T'"),
    ("  Bucket:\n", "  Odd: 3\n  Bucket:\n", "Odd", "a resource must be a mapping"),
])
def test_a_malformed_property_is_one_line_and_exit_2_in_check_and_import(tmp_path, old, new, where, rule):
    assert old in HAND_WRITTEN
    checked, imported, _ = _check_and_import(tmp_path, HAND_WRITTEN.replace(old, new, 1))
    for result in (checked, imported):
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        lines = [line for line in result.stderr.splitlines() if f"Resources.{where}" in line]
        assert lines and rule in lines[0], result.stderr


def test_a_conditional_properties_mapping_is_named(tmp_path):
    text = HAND_WRITTEN.replace("""  Prod:
    Type: AWS::Batch::QuotaShare
    Properties:""", """  Prod:
    Type: AWS::Batch::QuotaShare
    Properties: !If
      - IsProd
      - {QuotaShareName: prod}
      - {QuotaShareName: dev}
    Unused:""")
    checked, imported, _ = _check_and_import(tmp_path, text)
    for result in (checked, imported):
        assert result.exit_code == 2
        assert "Resources.Prod.Properties: unresolvable: Fn::If" in result.stderr


def test_every_unresolvable_place_of_a_share_is_named(tmp_path):
    prod_limits = "{CapacityUnit: ml.g5.xlarge, MaxCapacity: 2}]\n      ResourceSharingConfiguration: {Strategy: LEND}"
    text = HAND_WRITTEN.replace("JobQueue: !GetAtt Queue.JobQueueArn", "JobQueue: !ImportValue shared-queue").replace(
        prod_limits, prod_limits.replace("MaxCapacity: 2", "MaxCapacity: !Ref Capacity"))
    path, problems = _load_problems(tmp_path, text)
    assert problems == [
        f"{path}: Resources.Prod.Properties.JobQueue: unresolvable: Fn::ImportValue 'shared-queue' "
        "(another stack's export)",
        f"{path}: Resources.Prod.Properties.CapacityLimits[0].MaxCapacity: unresolvable: Ref to parameter "
        "'Capacity' (its value is known only at deploy)",
    ]


def test_queues_that_are_not_quota_managed_are_listed_as_skipped(tmp_path):
    text = HAND_WRITTEN.replace("QuotaSharePolicy: {IdleResourceAssignmentStrategy: FIFO}",
                                "FairsharePolicy: {ShareDecaySeconds: 3600}")
    text = text[:text.index("  Research:")] + """  Fifo:
    Type: AWS::Batch::JobQueue
    Properties: {JobQueueName: fifo, JobQueueType: SAGEMAKER_TRAINING, Priority: 1,
                 ServiceEnvironmentOrder: [{Order: 1, ServiceEnvironment: !Ref Env}]}
  Ecs:
    Type: AWS::Batch::JobQueue
    Properties: {JobQueueName: ecs, Priority: 1, ComputeEnvironmentOrder: [{Order: 1, ComputeEnvironment: ce}]}
"""
    checked, imported, path = _check_and_import(tmp_path, text)
    for result in (checked, imported):
        skipped = [line for line in result.stderr.splitlines() if "skipped job queue" in line]
        assert skipped == [
            f"{path}: skipped job queue Resources.Queue: scheduling policy Policy is not a quota-share policy",
            f"{path}: skipped job queue Resources.Fifo: no SchedulingPolicyArn: a FIFO queue, not quota-managed",
            f"{path}: skipped job queue Resources.Ecs: JobQueueType ECS (the default): only SAGEMAKER_TRAINING "
            "queues have quota shares",
        ], result.stderr


UNNAMED = """\
Resources:
  Env:
    Type: AWS::Batch::ServiceEnvironment
    Properties:
      ServiceEnvironmentType: SAGEMAKER_TRAINING
      CapacityLimits: [{CapacityUnit: ml.g5.xlarge, MaxCapacity: 4}]
  Policy:
    Type: AWS::Batch::SchedulingPolicy
    Properties: {QuotaSharePolicy: {IdleResourceAssignmentStrategy: FIFO}}
  Queue:
    Type: AWS::Batch::JobQueue
    Properties:
      JobQueueType: SAGEMAKER_TRAINING
      Priority: 1
      SchedulingPolicyArn: !Ref Policy
      ServiceEnvironmentOrder: [{Order: 1, ServiceEnvironment: !Ref Env}]
  Research:
    Type: AWS::Batch::QuotaShare
    Properties:
      QuotaShareName: research
      JobQueue: !Ref Queue
      CapacityLimits: [{CapacityUnit: ml.g5.xlarge, MaxCapacity: 5}]
      ResourceSharingConfiguration: {Strategy: RESERVE}
"""


def test_resources_named_at_deploy_are_checked_under_their_logical_ids_and_marked(tmp_path):
    path = tmp_path / "unnamed.yaml"
    path.write_text(UNNAMED)
    topology = load_template(path)
    assert (topology.service_environments[0].name, topology.job_queues[0].name) == ("Env", "Queue")
    assert topology.named_at_deploy == ("service_environments[Env]", "job_queues[Queue]",
                                        "job_queues[Queue].scheduling_policy")
    runner = CliRunner()
    checked = runner.invoke(main, ["check", str(path), "--format", "json"])
    assert checked.exit_code == 1  # 5 instances of shares in a 4-instance environment
    report = json.loads(checked.stdout)
    assert "3 object(s) named at deploy" in report["source"]
    (finding,) = [f for f in report["findings"] if f["rule"] == "BQ201"]
    assert finding["message"].endswith("[named at deploy: service_environments[Env]]")
    imported = runner.invoke(main, ["import", "--from-template", str(path)])
    assert imported.exit_code == 0
    assert "# named at deploy: the template names none of service_environments[Env]" in imported.stdout
    out = tmp_path / "imported.yaml"
    out.write_text(imported.stdout)
    drift = runner.invoke(main, ["drift", str(out), "--region", "us-east-1"])
    assert drift.exit_code == 2
    assert drift.stderr.splitlines()[0] == (
        f"error: {out}: service_environments[Env] is named at deploy (its name is a template's logical ID); "
        "drift compares the account's names: write the deployed name (the stack's physical ID) in the file and "
        "drop the entry from named_at_deploy, or name the resource in the template")


def test_templates_read_together_resolve_each_others_exports():
    from policy_engine.inputs.template import read_templates, topology_of

    capacity = {"Resources": {"Env": {"Type": "AWS::Batch::ServiceEnvironment", "Properties": {
        "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
        "CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 4}]}}},
        "Outputs": {"ExportEnv": {"Value": {"Fn::GetAtt": ["Env", "ServiceEnvironmentArn"]},
                                  "Export": {"Name": "Capacity:ExportsOutputEnv"}}}}
    queue_template = {"Resources": {
        "Env": {"Type": "AWS::Batch::ServiceEnvironment", "Properties": {  # the same logical ID, another stack
            "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
            "CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 1}]}},
        "Policy": {"Type": "AWS::Batch::SchedulingPolicy", "Properties": {
            "Name": "p", "QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"}}},
        "Queue": {"Type": "AWS::Batch::JobQueue", "Properties": {
            "JobQueueName": "training", "JobQueueType": "SAGEMAKER_TRAINING", "Priority": 1,
            "SchedulingPolicyArn": {"Ref": "Policy"},
            "ServiceEnvironmentOrder": [{"Order": 1,
                                         "ServiceEnvironment": {"Fn::ImportValue": "Capacity:ExportsOutputEnv"}}]}}}}
    read = read_templates([("cdk.out/Capacity.template.json", capacity), ("cdk.out/Queue.template.json",
                                                                           queue_template)])
    topology = topology_of(read, "app")
    assert [e.name for e in topology.service_environments] == ["Capacity-Env", "Queue-Env"]
    assert topology.job_queues[0].service_environment == "Capacity-Env"
    assert read.origins[("queue", "training")].source == "cdk.out/Queue.template.json"
    assert read.origins[("environment", "Capacity-Env")].named_at_deploy
