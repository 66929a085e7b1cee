"""``drift``: the account against a topology, per object and field; exit 0/1/2."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.adapters.aws.topology_file import topology_text
from policy_engine.cli.app import main
from policy_engine.inputs.examples import example_topology
from tests import gfm
from tests.policy_engine.adapters.aws.fake_account import FakeAccount, topology_template


@pytest.fixture(scope="module")
def template() -> dict:
    return topology_template(example_topology())


@pytest.fixture
def topology_file(tmp_path):
    path = tmp_path / "topology.yaml"
    path.write_text(topology_text(example_topology(), path))
    return path


def test_an_account_that_matches_is_exit_0(stubbed, template, topology_file):
    _, stubber = stubbed
    FakeAccount.from_template(template).stub_import(stubber, queues=["training"])
    result = CliRunner().invoke(main, ["drift", str(topology_file)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("no drift: the account (Region us-east-1) matches")


def test_changed_added_and_removed_objects_are_each_one_line(stubbed, template, topology_file):
    _, stubber = stubbed
    account = FakeAccount.from_template(template)
    queue_arn = account.queues[0]["jobQueueArn"]
    qs1, qs2, qs3 = account.shares[queue_arn]
    qs1["capacityLimits"] = [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}]  # changed in the console
    account.tags[qs2["quotaShareArn"]] = {**account.tags[qs2["quotaShareArn"]], "owner": "someone",
                                          "aws:cloudformation:logical-id": "Changed"}  # system tags are ignored
    extra = {**qs3, "quotaShareName": "adhoc", "quotaShareArn": queue_arn + "/quota-share/adhoc"}
    account.shares[queue_arn] = [qs1, qs2, extra]  # QS3 deleted, adhoc added
    account.tags[extra["quotaShareArn"]] = {}
    account.stub_import(stubber, queues=["training"])
    result = CliRunner().invoke(main, ["drift", str(topology_file), "--format", "json"])
    assert result.exit_code == 1, result.output
    differences = json.loads(result.output)["differences"]
    assert [(d["object"], d["field"], d["kind"], d["expected"], d["actual"]) for d in differences] == [
        ("training/QS1", "capacity", "different", {"ml.g5.xlarge": 1}, {"ml.g5.xlarge": 2}),
        ("training/QS2", "tags", "different", {}, {"owner": "someone"}),
        ("training/QS3", "", "missing", None, None),
        ("training/adhoc", "", "extra", None, differences[3]["actual"]),
    ]


def test_text_and_markdown_name_object_and_field(stubbed, template, topology_file):
    _, stubber = stubbed
    account = FakeAccount.from_template(template)
    account.queues[0]["priority"] = 7
    account.stub_import(stubber, queues=["training"])
    result = CliRunner().invoke(main, ["drift", str(topology_file), "--format", "markdown"])
    assert result.exit_code == 1
    assert "| different | job_queues[training] | priority | 1 | 7 |" in result.output


def test_markdown_shows_a_hostile_object_name_literally(stubbed, template, tmp_path):
    """Names are escaped by the shared helpers: a pipe, a backtick, HTML or emphasis stays text in its cell."""
    hostile = "a|b`<img src=x>`*c*_d_"
    desired = example_topology()
    queue = desired.job_queues[0]
    extra = queue.shares[0].model_copy(update={"name": hostile})
    desired = desired.model_copy(update={"job_queues": (queue.model_copy(update={"shares": (*queue.shares, extra)}),)})
    path = tmp_path / "topology.yaml"
    path.write_text(topology_text(desired, path))
    _, stubber = stubbed
    FakeAccount.from_template(template).stub_import(stubber, queues=["training"])
    result = CliRunner().invoke(main, ["drift", str(path), "--format", "markdown"])
    assert result.exit_code == 1, result.output
    [table] = gfm.tables(result.output)
    assert table == [["kind", "object", "field", "topology", "account"],
                     ["missing", f"training/{hostile}", "-", "-", "-"]]
    assert "<img" not in gfm.html(result.output)


def test_a_missing_queue_is_drift(stubbed, topology_file):
    _, stubber = stubbed
    stubber.add_response("describe_job_queues", {"jobQueues": []}, {"jobQueues": ["training"]})
    result = CliRunner().invoke(main, ["drift", str(topology_file)])
    assert result.exit_code == 1
    assert "missing   job_queues[training]: missing from the account" in result.output


def _deny_last_share_tags(stubbed, template) -> None:
    """The account reads as the template, but the last share's tags are refused (AccessDenied)."""
    _, stubber = stubbed
    account = FakeAccount.from_template(template)
    account.stub_import(stubber, queues=["training"])
    stubber._queue.pop()  # the last share's tags
    stubber.add_client_error("list_tags_for_resource", "AccessDeniedException", "not authorized", 403)


def test_access_denied_is_exit_2_naming_call_and_object(stubbed, template, topology_file):
    _deny_last_share_tags(stubbed, template)
    result = CliRunner().invoke(main, ["drift", str(topology_file)])
    assert result.exit_code == 2
    assert ("error: ListTagsForResource (quota share training/QS3): access denied (AccessDeniedException): "
            "not authorized (see `batch-quota iam-policy`)") in result.stderr
    assert "training/QS3: missing" not in result.output  # unreadable is not reported as missing


def test_a_bad_topology_is_exit_2_before_any_call(stubbed, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("job_queues: 3\n")
    result = CliRunner().invoke(main, ["drift", str(path)])
    assert result.exit_code == 2


def _deny(stubber, operation: str) -> None:
    """Answer ``operation`` (as queued by ``stub_import``) with AccessDenied instead, keeping every other answer."""
    queued = list(stubber._queue)
    stubber._queue.clear()
    for entry in queued:
        if entry["operation_name"] == operation:
            stubber.add_client_error(entry["operation_name"][0].lower() + "".join(
                f"_{c.lower()}" if c.isupper() else c for c in entry["operation_name"][1:]),
                "AccessDeniedException", "not authorized", 403)
        else:
            stubber._queue.append(entry)


def test_an_unreadable_environment_hides_no_drift_of_its_queue(stubbed, template, topology_file):
    _, stubber = stubbed
    account = FakeAccount.from_template(template)
    queue_arn = account.queues[0]["jobQueueArn"]
    account.shares[queue_arn][0]["capacityLimits"] = [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}]
    account.stub_import(stubber, queues=["training"])
    _deny(stubber, "DescribeServiceEnvironments")
    result = CliRunner().invoke(main, ["drift", str(topology_file)])
    assert result.exit_code == 2
    assert "different training/QS1.capacity: topology" in result.output
    assert "missing" not in result.output  # the queue exists: it is not reported missing
    assert "error: DescribeServiceEnvironments (service environment(s) " in result.stderr


def test_no_drift_among_readable_objects_is_not_called_no_drift(stubbed, template, topology_file):
    _deny_last_share_tags(stubbed, template)
    for output_format, expected in (("text", "incomplete: 1 object(s) could not be read"),
                                    ("markdown", "### Incomplete")):
        if output_format == "markdown":
            _deny_last_share_tags(stubbed, template)
        result = CliRunner().invoke(main, ["drift", str(topology_file), "--format", output_format])
        assert result.exit_code == 2
        assert result.output.startswith(expected) and "no drift:" not in result.output


def test_a_failed_call_hides_only_the_objects_it_was_about():
    """``AwsError.about`` says which objects a call was about; the drift command compares names, never text."""
    from policy_engine.adapters.aws.clients import AwsError
    from policy_engine.adapters.aws.drift import MISSING, Difference
    from policy_engine.cli.commands.drift import _unread
    from policy_engine.foundation.diagnostics import ObjectRef

    desired = example_topology()
    missing_share = Difference(ObjectRef.of_share("training", "QS1"), "", MISSING)
    missing_queue = Difference(ObjectRef.of_queue("training"), "", MISSING)
    about_share = AwsError("ListTagsForResource", "quota share training/QS1", "denied",
                           about=("training", "training/QS1"))
    about_other = AwsError("DescribeServiceEnvironments", "service environment of job queue training", "denied",
                           about=("gpu-env",))
    about_everything = AwsError("DescribeJobQueues", "every job queue", "denied")
    assert _unread(missing_share, desired, [about_share.about])
    assert _unread(missing_queue, desired, [about_share.about])  # its queue was named: not said to be missing
    assert _unread(missing_share, desired, [about_everything.about])
    assert not _unread(missing_share, desired, [about_other.about])
    # the wording of the subject plays no part: it names the queue, but the call was about its environment
    assert "training" in about_other.subject and not _unread(missing_queue, desired, [about_other.about])


def test_targets_are_not_drift(stubbed, template, tmp_path):
    """Targets exist only in the topology (AWS has no such object): an account that matches has no drift."""
    from policy_engine.foundation.model import Target

    path = tmp_path / "topology.yaml"
    targeted = example_topology().model_copy(update={"targets": (Target(share="training/QS1", wait_p95="1h"),)})
    path.write_text(topology_text(targeted, path))
    assert "targets:" in path.read_text()
    _, stubber = stubbed
    FakeAccount.from_template(template).stub_import(stubber, queues=["training"])
    result = CliRunner().invoke(main, ["drift", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("no drift")
