"""AWS limits and API rules (BQ1xx): each rule passes the example and fails its own bad topology."""

from __future__ import annotations

import pytest

from policy_engine.analysis.rules import REGISTRY
from policy_engine.foundation.findings import Severity
from policy_engine.foundation.model import JobQueue, JobStateTimeLimitAction, ServiceEnvironment, Topology
from tests.builders import GPU, share, topology
from tests.builders import run_rule as run

TYPES = [f"ml.type{i}.xlarge" for i in range(6)]
QUOTA = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"


def _queues(count: int, shared_environment: bool = False) -> Topology:
    environments = tuple(ServiceEnvironment(name=f"env-{i}", capacity={GPU: 1}) for i in range(count))
    queues = tuple(
        JobQueue(name=f"q-{i}", service_environment="env-0" if shared_environment else f"env-{i}",
                 shares=(share("s", 1),))
        for i in range(count)
    )
    return Topology(service_environments=environments, job_queues=queues)


def _with_queue(**fields) -> Topology:
    base = topology(share("QS1", 1))
    return base.model_copy(update={"job_queues": (base.job_queues[0].model_copy(update=fields),)})


FAILING = {
    "BQ101": (topology(share("bad name!", 1)), "training/bad name!", "may only contain"),
    "BQ102": (topology(share("QS1", 0), environment=1), "training/QS1", "below AWS's minimum of 1"),
    "BQ103": (topology(share("QS1", 1), environment={GPU: 1, "ml.p5.48xlarge": 0}),
              "service_environments[gpu-env]", "ml.p5.48xlarge: 0"),
    "BQ104": (topology(share("QS1", capacity=dict.fromkeys(TYPES, 1))), "training/QS1", "6 capacity limits"),
    "BQ105": (topology(share("QS1", 1), environment=dict.fromkeys(TYPES, 1)),
              "service_environments[gpu-env]", "6 capacity limits"),
    "BQ106": (topology(*(share(f"s{i}", 1) for i in range(21))), "job_queues[training]", "21 quota shares"),
    "BQ107": (_queues(2, shared_environment=True), "service_environments[env-0]", "used by 2 job queues (q-0, q-1)"),
    "BQ108": (_queues(51), "job_queues", "51 job queues"),
    "BQ109": (_queues(51), "service_environments", "51 service environments"),
    "BQ110": (topology(share("QS1", 1, "LEND_AND_BORROW", borrow_limit=-2), share("L", 1, "LEND")),
              "training/QS1", "borrow_limit -2 is below -1"),
    "BQ111": (topology(share("QS1", 1, "LEND", borrow_limit=100)), "training/QS1", "set on a LEND share"),
    "BQ112": (_with_queue(priority=1001), "job_queues[training]", "priority 1001"),
    "BQ113": (_with_queue(job_state_time_limit_actions=(JobStateTimeLimitAction(max_time_seconds=599, reason=QUOTA),)),
              "job_queues[training]", "max_time_seconds 599"),
    "BQ114": (topology(share("QS1", capacity={"ml.g5.xlrage": 1}), environment={GPU: 1}),
              "training/QS1", "'ml.g5.xlrage' is not a SageMaker training instance type (did you mean 'ml.g5.xlarge'"),
    "BQ115": (_with_queue(job_state_time_limit_actions=(
        JobStateTimeLimitAction(max_time_seconds=600, reason="stuck at head"),)),
        "job_queues[training]", "reason 'stuck at head' is not a status reason AWS accepts"),
    "BQ116": (topology(share("QS1", 1, tags={"aws:team": "a"})), "training/QS1", "starts with 'aws:'"),
}


@pytest.mark.parametrize("rule_id", sorted(FAILING))
def test_rule_fails_its_bad_topology(rule_id):
    bad, obj, text = FAILING[rule_id]
    findings = run(rule_id, bad)
    assert findings, f"{rule_id} found nothing"
    (finding,) = [f for f in findings if str(f.object) == obj]
    assert text in finding.message
    assert finding.severity is Severity.ERROR and finding.hint


@pytest.mark.parametrize("rule_id", sorted(FAILING))
def test_rule_passes_the_example(rule_id, example):
    assert run(rule_id, example) == []


@pytest.mark.parametrize("rule_id", sorted(FAILING))
def test_rule_passes_the_large_topology_at_the_limits(rule_id):
    from policy_engine.inputs.examples import large_topology

    assert run(rule_id, large_topology()) == []


def test_name_length_bounds():
    assert run("BQ101", topology(share("x" * 128, 1))) == []
    (finding,) = run("BQ101", topology(share("x" * 129, 1)))
    assert "129 characters" in finding.message


def test_boundaries_are_accepted():
    assert run("BQ113", _with_queue(job_state_time_limit_actions=(
        JobStateTimeLimitAction(max_time_seconds=600, reason=QUOTA),
        JobStateTimeLimitAction(max_time_seconds=86400, reason=QUOTA)))) == []
    assert run("BQ112", _with_queue(priority=0)) == [] and run("BQ112", _with_queue(priority=1000)) == []
    assert run("BQ110", topology(share("B", 1, "LEND_AND_BORROW", borrow_limit=-1))) == []
    assert run("BQ106", topology(*(share(f"s{i}", 1) for i in range(20)))) == []


def test_every_reason_aws_documents_is_accepted_and_a_near_miss_gets_a_suggestion():
    reasons = ("CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY", "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE", QUOTA)
    actions = tuple(JobStateTimeLimitAction(max_time_seconds=600, reason=reason) for reason in reasons)
    assert run("BQ115", _with_queue(job_state_time_limit_actions=actions)) == []
    (finding,) = run("BQ115", _with_queue(job_state_time_limit_actions=(
        JobStateTimeLimitAction(max_time_seconds=600, reason="MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT"),)))
    assert f"did you mean {QUOTA!r}" in finding.message


def test_action_and_state_other_than_terminate_and_runnable_are_refused():
    # the file format only accepts TERMINATE / RUNNABLE; a model built around validation still gets the rule
    bad = JobStateTimeLimitAction.model_construct(max_time_seconds=600, reason=QUOTA, action="CANCEL", state="RUNNING")
    messages = [f.message for f in run("BQ115", _with_queue(job_state_time_limit_actions=(bad,)))]
    assert messages == ["job_state_time_limit_actions[0].action 'CANCEL' is not TERMINATE",
                        "job_state_time_limit_actions[0].state 'RUNNING' is not RUNNABLE"]


def test_instance_types_come_from_botocores_sagemaker_model():
    import botocore.session

    enum = botocore.session.get_session().get_service_model("sagemaker").shape_for("TrainingInstanceType").enum
    from policy_engine.foundation.instance_types import training_instance_types

    assert training_instance_types() == frozenset(enum)
    (finding,) = run("BQ114", topology(share("QS1", 1), environment={GPU: 1, "p5.48xlarge": 1}))
    assert str(finding.object) == "service_environments[gpu-env]" and "did you mean 'ml.p5.48xlarge'" in finding.message
    (unknown,) = run("BQ114", topology(share("QS1", 1), environment={GPU: 1, "cpu": 1}))
    assert "did you mean" not in unknown.message and "TrainingInstanceType" in unknown.hint


def test_tag_limits():
    fifty = {f"k{i}": "v" for i in range(50)}
    assert run("BQ116", topology(share("QS1", 1, tags=fifty, system_tags={"aws:cloudformation:stack-name": "s"}))) == []
    cases = {
        "has 51 tags": {**fifty, "one-more": "v"},
        "has 129 characters": {"k" * 129: "v"},
        "a value of 257 characters": {"k": "v" * 257},
        "starts with 'aws:'": {"AWS:Team": "x"},
    }
    for text, tags in cases.items():
        (finding,) = run("BQ116", topology(share("QS1", 1, tags=tags)))
        assert text in finding.message and finding.hint, text
    env_and_queue = topology(share("QS1", 1), environment=1).model_copy()
    env = env_and_queue.service_environments[0].model_copy(update={"tags": {"aws:x": "1"}})
    queue = env_and_queue.job_queues[0].model_copy(update={"tags": {"aws:y": "1"}})
    objects = {str(f.object) for f in run("BQ116", env_and_queue.model_copy(
        update={"service_environments": (env,), "job_queues": (queue,)}))}
    assert objects == {"service_environments[gpu-env]", "job_queues[training]"}


def test_system_tags_hold_only_aws_keys_and_importers_split_them():
    import pydantic

    from policy_engine.foundation.model import split_system_tags

    with pytest.raises(pydantic.ValidationError, match="move 'team' to tags"):
        share("QS1", 1, system_tags={"team": "a"})
    assert split_system_tags({"team": "a", "aws:cloudformation:stack-id": "x"}) == (
        {"team": "a"}, {"aws:cloudformation:stack-id": "x"})


def test_numbers_beyond_the_apis_32_bit_integers_are_refused():
    big = 2**64
    (share_finding,) = run("BQ102", topology(share("QS1", big), environment=1))
    assert f"{big} is above 2147483647" in share_finding.message
    (env_finding,) = run("BQ103", topology(share("QS1", 1), environment=big))
    assert "is above 2147483647" in env_finding.message
    (borrow,) = run("BQ110", topology(share("B", 1, "LEND_AND_BORROW", borrow_limit=big), share("L", 1, "LEND")))
    assert "is above 2147483647" in borrow.message
    assert run("BQ102", topology(share("QS1", 2**31 - 1), environment=2**31 - 1)) == []


def test_the_readmes_topology_example_passes_the_aws_rules(tmp_path):
    """The example a new user copies first (one share, so its guarantee is refuted): a valid time-limit reason,
    real instance types, nothing AWS would refuse, and its suppression matches a finding."""
    import re
    from pathlib import Path

    from policy_engine.analysis.checks import check_topology
    from policy_engine.inputs.loading import load_topology

    readme = (Path(__file__).resolve().parents[4] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## The topology file"):]
    example = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    path = tmp_path / "readme.yaml"
    path.write_text(example, encoding="utf-8")
    topology = load_topology(path)
    assert topology.job_queues[0].job_state_time_limit_actions[0].reason == QUOTA
    report = check_topology(topology)
    about_structure = [f for f in report.findings
                       if REGISTRY[f.rule].enforced_by_aws or REGISTRY[f.rule].after_findings]
    assert [f.line() for f in about_structure] == []
    assert [f.rule for f in report.suppressed] == ["BQ301"]
