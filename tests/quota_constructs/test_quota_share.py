"""QuotaShare: properties per strategy, eager validation, importers, and the IAM grants."""

from __future__ import annotations

import pytest
from aws_cdk import Fn, Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from quota_constructs import JOB_SHARE_TAG, QuotaShare, ServiceEnvironment, TrainingJobQueue
from quota_constructs.errors import QuotaConstructError
from tests.quota_constructs.conftest import cfn_lint_errors, fast_app

G5 = "ml.g5.xlarge"


def _statements(template: Template, role_logical_id: str) -> list[dict]:
    """Every statement of the policies attached to one role."""
    policies = template.find_resources("AWS::IAM::Policy")
    return [s for p in policies.values() if {"Ref": role_logical_id} in p["Properties"]["Roles"]
            for s in p["Properties"]["PolicyDocument"]["Statement"]]


def _role_id(template: Template, role_name: str) -> str:
    return next(iter(template.find_resources("AWS::IAM::Role", {"Properties": {"RoleName": role_name}})))


@pytest.fixture(scope="module")
def built():
    stack = Stack(fast_app(), "Shares")
    env = ServiceEnvironment(stack, "Env", service_environment_name="gpu-env", capacity={G5: 3})
    queue = TrainingJobQueue(stack, "Queue", job_queue_name="training", service_environment=env)
    qs1 = queue.add_quota_share("QS1", quota_share_name="QS1", capacity={G5: 1}, strategy="LEND_AND_BORROW",
                                borrow_limit=200, in_share_preemption=True, tags={"team": "research"})
    qs2 = QuotaShare(stack, "QS2", job_queue=queue, quota_share_name="QS2", capacity={G5: 1}, strategy="LEND",
                     state="DISABLED")
    qs3 = QuotaShare(stack, "QS3", job_queue=queue, quota_share_name="QS3", capacity={G5: 1}, strategy="RESERVE")
    principal = iam.AccountRootPrincipal()
    team_a = iam.Role(stack, "TeamA", assumed_by=principal, role_name="team-a")
    team_b = iam.Role(stack, "TeamB", assumed_by=principal, role_name="team-b")
    capped = iam.Role(stack, "Capped", assumed_by=principal, role_name="capped")
    tagged = iam.Role(stack, "Tagged", assumed_by=principal, role_name="tagged")
    reader = iam.Role(stack, "Reader", assumed_by=principal, role_name="reader")
    execution = iam.Role(stack, "Execution", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
                         role_name="sagemaker-execution")
    untagged = iam.Role(stack, "Untagged", assumed_by=principal, role_name="untagged")
    all_jobs = iam.Role(stack, "AllJobs", assumed_by=principal, role_name="all-jobs")
    qs1.grant_submit(team_a)
    qs2.grant_submit(team_b, extra_tag_keys=("cost-center",))
    qs1.grant_submit(capped, max_priority=5, require_job_tag=False)
    qs1.grant_update_priority(capped, own_jobs_only=False)  # the submit cap carries over
    qs3.grant_submit(tagged, execution_role=execution)
    qs3.grant_update_priority(tagged)
    qs1.grant_submit(untagged, require_job_tag=False)
    qs1.grant_read(reader)
    queue.grant_read(reader)
    qs1.grant_read_account_service_jobs(all_jobs)
    template = Template.from_stack(stack)
    arns = {name: stack.resolve(share.quota_share_arn) for name, share in (("QS1", qs1), ("QS2", qs2), ("QS3", qs3))}
    jobs = {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":batch:", {"Ref": "AWS::Region"}, ":",
                              {"Ref": "AWS::AccountId"}, ":service-job/*"]]}
    return stack, template, stack.resolve(queue.job_queue_arn), arns, jobs


def test_share_properties_per_strategy(built):
    _, template, queue_arn, _, _ = built
    template.has_resource_properties("AWS::Batch::QuotaShare", {
        "QuotaShareName": "QS1", "JobQueue": queue_arn,
        "CapacityLimits": [{"CapacityUnit": G5, "MaxCapacity": 1}],
        "ResourceSharingConfiguration": {"Strategy": "LEND_AND_BORROW", "BorrowLimit": 200},
        "PreemptionConfiguration": {"InSharePreemption": "ENABLED"},
        "State": "ENABLED", "Tags": {"team": "research"},
    })
    template.has_resource_properties("AWS::Batch::QuotaShare", {
        "QuotaShareName": "QS2", "State": "DISABLED",
        "ResourceSharingConfiguration": {"Strategy": "LEND", "BorrowLimit": Match.absent()},
        "PreemptionConfiguration": {"InSharePreemption": "DISABLED"},
    })
    template.has_resource_properties("AWS::Batch::QuotaShare", {
        "QuotaShareName": "QS3", "ResourceSharingConfiguration": {"Strategy": "RESERVE", "BorrowLimit": Match.absent()},
    })


def _tagging(share_id: str, *keys: str) -> dict:
    return {"StringEquals": {f"aws:RequestTag/{JOB_SHARE_TAG}": share_id},
            "Null": {f"aws:ResourceTag/{JOB_SHARE_TAG}": "true"},
            "ForAllValues:StringEquals": {"aws:TagKeys": [JOB_SHARE_TAG, *keys]}}


def test_grant_submit_names_the_queue_this_share_and_new_jobs_only_and_requires_the_job_tag(built):
    _, template, queue_arn, arns, jobs = built
    tag = {"StringEquals": {f"aws:RequestTag/{JOB_SHARE_TAG}": "training/QS1"}}
    assert _statements(template, _role_id(template, "team-a")) == [
        {"Action": "batch:SubmitServiceJob", "Effect": "Allow", "Resource": [queue_arn, arns["QS1"], jobs],
         "Condition": tag},
        {"Action": "batch:TagResource", "Effect": "Allow", "Resource": jobs, "Condition": _tagging("training/QS1")},
    ]
    team_b = _statements(template, _role_id(template, "team-b"))
    assert team_b[0]["Resource"] == [queue_arn, arns["QS2"], jobs]
    assert arns["QS1"] not in team_b[0]["Resource"]  # team B cannot submit into team A's share
    assert team_b[1]["Condition"] == _tagging("training/QS2", "cost-center")


def test_without_the_job_tag_there_is_no_tagging_statement(built):
    _, template, queue_arn, arns, jobs = built
    assert _statements(template, _role_id(template, "untagged")) == [
        {"Action": "batch:SubmitServiceJob", "Effect": "Allow", "Resource": [queue_arn, arns["QS1"], jobs]}
    ]


def test_max_priority_caps_submission_and_carries_over_to_updates(built):
    _, template, queue_arn, arns, jobs = built
    assert _statements(template, _role_id(template, "capped")) == [
        {"Action": "batch:SubmitServiceJob", "Effect": "Allow", "Resource": [queue_arn, arns["QS1"], jobs],
         "Condition": {"NumericLessThanEqualsIfExists": {"batch:SchedulingPriority": 5}}},
        {"Action": "batch:UpdateServiceJob", "Effect": "Allow", "Resource": jobs,
         "Condition": {"NumericLessThanEquals": {"batch:SchedulingPriority": 5}}},
    ]


def _share_and_role():
    stack = Stack(fast_app(), "Caps")
    env = ServiceEnvironment(stack, "Env", service_environment_name="e", capacity={G5: 1})
    queue = TrainingJobQueue(stack, "Queue", job_queue_name="q", service_environment=env)
    share = queue.add_quota_share("S", quota_share_name="S", capacity={G5: 1}, strategy="RESERVE")
    return share, iam.Role(stack, "Team", assumed_by=iam.AccountRootPrincipal())


def test_an_update_grant_above_the_submit_cap_is_refused_in_either_order():
    share, role = _share_and_role()
    share.grant_submit(role, max_priority=5)
    with pytest.raises(QuotaConstructError, match="max_priority = 9 is invalid; expected at most 5") as error:
        share.grant_update_priority(role, max_priority=9)
    assert (error.value.path, error.value.field, error.value.value) == (share.node.path, "max_priority", 9)
    share.grant_update_priority(role, max_priority=3)  # lower is fine
    later, other = _share_and_role()
    later.grant_update_priority(other)
    with pytest.raises(ValueError, match="earlier grant_update_priority = None is invalid; expected at most 5"):
        later.grant_submit(other, max_priority=5)


@pytest.mark.parametrize("key", ["aws:team", "", "k" * 129])
def test_extra_tag_keys_aws_would_refuse_are_refused(key):
    share, role = _share_and_role()
    with pytest.raises(ValueError, match=r"extra_tag_keys = .* is invalid; expected a tag key AWS accepts"):
        share.grant_submit(role, extra_tag_keys=(key,))


def test_job_tag_confines_updates_to_the_shares_jobs_and_pass_role_is_scoped(built):
    _, template, queue_arn, arns, jobs = built
    tag = {"StringEquals": {f"aws:RequestTag/{JOB_SHARE_TAG}": "training/QS3"}}
    execution_arn = {"Fn::GetAtt": [_role_id(template, "sagemaker-execution"), "Arn"]}
    assert _statements(template, _role_id(template, "tagged")) == [
        {"Action": "batch:SubmitServiceJob", "Effect": "Allow", "Resource": [queue_arn, arns["QS3"], jobs],
         "Condition": tag},
        {"Action": "batch:TagResource", "Effect": "Allow", "Resource": jobs, "Condition": _tagging("training/QS3")},
        {"Action": "iam:PassRole", "Effect": "Allow", "Resource": execution_arn,
         "Condition": {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}},
        {"Action": "batch:UpdateServiceJob", "Effect": "Allow", "Resource": jobs,
         "Condition": {"StringEquals": {f"aws:ResourceTag/{JOB_SHARE_TAG}": "training/QS3"}}},
    ]


def _actions(statements: list[dict]) -> list[str]:
    return [a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])]


def test_grant_read_is_read_only_and_never_the_accounts_service_jobs(built):
    _, template, queue_arn, arns, _ = built
    statements = _statements(template, _role_id(template, "reader"))
    assert {"Action": "batch:DescribeQuotaShare", "Effect": "Allow", "Resource": arns["QS1"]} in statements
    assert {"Action": "batch:ListQuotaShares", "Effect": "Allow", "Resource": queue_arn} in statements
    actions = _actions(statements)
    assert actions and all(a.split(":")[1].startswith(("Describe", "List", "Get")) for a in actions)
    assert "batch:ListServiceJobs" not in actions and "batch:DescribeServiceJob" not in actions


def test_reading_every_service_job_is_a_named_opt_in(built):
    _, template, *_ = built
    assert _statements(template, _role_id(template, "all-jobs")) == [
        {"Action": ["batch:ListServiceJobs", "batch:DescribeServiceJob"], "Effect": "Allow", "Resource": "*"}
    ]


def test_template_passes_cfn_lint(built):
    assert cfn_lint_errors(built[1].to_json()) == []


@pytest.mark.parametrize(
    ("props", "field", "expected"),
    [
        ({"strategy": "LEND", "borrow_limit": 100}, "borrow_limit", "only applies to LEND_AND_BORROW"),
        ({"strategy": "RESERVE", "borrow_limit": -1}, "borrow_limit", "only applies to LEND_AND_BORROW"),
        ({"borrow_limit": -2}, "borrow_limit", "-1 to 2147483647"),
        ({"borrow_limit": 2**64}, "borrow_limit", "-1 to 2147483647"),
        ({"capacity": {G5: 2**64}}, f"capacity[{G5}]", "1-2147483647"),
        ({"capacity": {"ml.g5.xlrage": 1}}, "capacity key", "'ml.g5.xlarge' (did you mean it?)"),
        ({"tags": {"aws:cloudformation:stack-name": "x"}}, "tags", "starts with 'aws:'"),
        ({"strategy": "BORROW"}, "strategy", "RESERVE, LEND, LEND_AND_BORROW"),
        ({"capacity": {G5: 0}}, f"capacity[{G5}]", "1-2147483647"),
        ({"capacity": {}}, "capacity", "1-5"),
        ({"in_share_preemption": "yes"}, "in_share_preemption", "True or False"),
        ({"quota_share_name": "team a"}, "quota_share_name", "letters, digits"),
        ({"state": "OFF"}, "state", "ENABLED, DISABLED"),
    ],
)
def test_invalid_props_raise(props, field, expected):
    stack = Stack(fast_app(), "Bad")
    env = ServiceEnvironment(stack, "Env", service_environment_name="e", capacity={G5: 1})
    queue = TrainingJobQueue(stack, "Queue", job_queue_name="q", service_environment=env)
    arguments = {"quota_share_name": "QS1", "capacity": {G5: 1}, "strategy": "LEND_AND_BORROW", **props}
    with pytest.raises(QuotaConstructError) as error:
        QuotaShare(stack, "Share", job_queue=queue, **arguments)
    assert str(error.value).startswith(f"QuotaShare {arguments['quota_share_name']!r}: {field} = ")
    assert (error.value.path, error.value.field) == ("Bad/Share", field)
    assert f"{field} = {error.value.value!r} is invalid" in str(error.value)
    assert expected in str(error.value)


def test_import_by_arn_grants_on_that_share():
    stack = Stack(fast_app(), "Import")
    arn = "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/QS2"
    share = QuotaShare.from_quota_share_arn(stack, "QS2", arn)
    assert (share.job_queue_name, share.quota_share_name, share.share_id) == ("training", "QS2", "training/QS2")
    assert share.job_queue_arn == "arn:aws:batch:us-east-1:123456789012:job-queue/training"
    role = iam.Role(stack, "Team", assumed_by=iam.AccountRootPrincipal())
    share.grant_submit(role)
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::IAM::Policy", {"PolicyDocument": {"Statement": Match.array_with([{
        "Action": "batch:SubmitServiceJob", "Effect": "Allow",
        "Resource": [share.job_queue_arn, arn, Match.any_value()],
        "Condition": {"StringEquals": {f"aws:RequestTag/{JOB_SHARE_TAG}": "training/QS2"}},
    }])}})
    for bad in ("arn:aws:batch:us-east-1:123456789012:job-queue/training",
                "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/",
                "not-an-arn"):
        with pytest.raises(QuotaConstructError, match="job-queue/QUEUE/quota-share/SHARE") as error:
            QuotaShare.from_quota_share_arn(stack, f"Bad{len(bad)}", bad)
        assert (error.value.path, error.value.field, error.value.value) == (f"{stack.node.path}/Bad{len(bad)}", "arn",
                                                                            bad)


def test_import_of_a_token_arn_splits_it_in_cloudformation():
    stack = Stack(fast_app(), "TokenImport")
    share = QuotaShare.from_quota_share_arn(stack, "QS", Fn.import_value("SharedQs1Arn"))
    assert stack.resolve(share.quota_share_name) == {
        "Fn::Select": [1, {"Fn::Split": ["/quota-share/", {"Fn::ImportValue": "SharedQs1Arn"}]}]
    }
    assert stack.resolve(share.job_queue_arn) == {
        "Fn::Select": [0, {"Fn::Split": ["/quota-share/", {"Fn::ImportValue": "SharedQs1Arn"}]}]
    }


def test_a_role_in_another_stack_gets_the_share_arn_by_cross_stack_reference():
    app = fast_app()
    quota = Stack(app, "Quota")
    env = ServiceEnvironment(quota, "Env", service_environment_name="e", capacity={G5: 1})
    queue = TrainingJobQueue(quota, "Queue", job_queue_name="q", service_environment=env)
    share = queue.add_quota_share("S", quota_share_name="S", capacity={G5: 1}, strategy="RESERVE")
    teams = Stack(app, "Teams")
    role = iam.Role(teams, "Team", assumed_by=iam.AccountRootPrincipal())
    share.grant_submit(role)
    exports = Template.from_stack(quota).to_json()["Outputs"]
    assert {o["Value"]["Fn::GetAtt"][1] for o in exports.values() if "Export" in o} == {"QuotaShareArn", "JobQueueArn"}
    statement = Template.from_stack(teams).to_json()["Resources"]
    resources = next(r for r in statement.values() if r["Type"] == "AWS::IAM::Policy")[
        "Properties"]["PolicyDocument"]["Statement"][0]["Resource"]
    assert all("Fn::ImportValue" in r for r in resources[:2])
    assert teams.dependencies == [quota]
    Annotations.from_stack(teams).has_no_warning("*", Match.any_value())


def test_tag_resource_cannot_retag_a_job_that_already_carries_a_share_tag(built):
    """Re-tagging another team's job with one's own share would pass grant_update_priority's tag condition."""
    _, template, *_ = built
    (tagging,) = [s for s in _statements(template, _role_id(template, "tagged")) if s["Action"] == "batch:TagResource"]
    assert tagging["Condition"]["Null"] == {f"aws:ResourceTag/{JOB_SHARE_TAG}": "true"}  # untagged (new) jobs only
    assert tagging["Condition"]["StringEquals"] == {f"aws:RequestTag/{JOB_SHARE_TAG}": "training/QS3"}
    assert tagging["Condition"]["ForAllValues:StringEquals"] == {"aws:TagKeys": [JOB_SHARE_TAG]}
    granted = [s["Action"] for role in ("tagged", "capped", "reader")
               for s in _statements(template, _role_id(template, role))]
    assert "batch:UntagResource" not in granted  # removing a tag would reopen the same hole


def test_every_written_borrow_limit_and_priority_is_explicit():
    """A LEND_AND_BORROW share without ``borrow_limit`` is written with -1 (AWS's default, explicit: a client that
    drops an unset or zero value then changes nothing), the others with none (AWS refuses it); a queue's priority
    0 is written too."""
    stack = Stack(fast_app(), "Explicit")
    env = ServiceEnvironment(stack, "Env", service_environment_name="gpu-env", capacity={G5: 3})
    queue = TrainingJobQueue(stack, "Queue", job_queue_name="training", service_environment=env, priority=0)
    queue.add_quota_share("Unset", quota_share_name="unset", capacity={G5: 1}, strategy="LEND_AND_BORROW")
    queue.add_quota_share("Zero", quota_share_name="zero", capacity={G5: 1}, strategy="LEND_AND_BORROW",
                          borrow_limit=0)
    queue.add_quota_share("Lends", quota_share_name="lends", capacity={G5: 1}, strategy="LEND")
    template = Template.from_stack(stack)
    sharing = {share["Properties"]["QuotaShareName"]: share["Properties"]["ResourceSharingConfiguration"]
               for share in template.find_resources("AWS::Batch::QuotaShare").values()}
    assert sharing == {"unset": {"Strategy": "LEND_AND_BORROW", "BorrowLimit": -1},
                       "zero": {"Strategy": "LEND_AND_BORROW", "BorrowLimit": 0}, "lends": {"Strategy": "LEND"}}
    template.has_resource_properties("AWS::Batch::JobQueue", {"JobQueueName": "training", "Priority": 0})
    assert cfn_lint_errors(template.to_json()) == []
