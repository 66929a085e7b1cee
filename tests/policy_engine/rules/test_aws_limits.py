"""AWS limits and API rules (BQ1xx): each rule passes the example and fails its own bad topology."""

from __future__ import annotations

import pytest

from policy_engine.findings import Severity
from policy_engine.model import JobQueue, JobStateTimeLimitAction, ServiceEnvironment, Topology
from tests.policy_engine.builders import GPU, share, topology
from tests.policy_engine.rules.helpers import run

TYPES = [f"ml.type{i}.xlarge" for i in range(6)]


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
    "BQ113": (_with_queue(job_state_time_limit_actions=(JobStateTimeLimitAction(max_time_seconds=599, reason="x"),)),
              "job_queues[training]", "max_time_seconds 599"),
}


@pytest.mark.parametrize("rule_id", sorted(FAILING))
def test_rule_fails_its_bad_topology(rule_id):
    bad, obj, text = FAILING[rule_id]
    findings = run(rule_id, bad)
    assert findings, f"{rule_id} found nothing"
    (finding,) = [f for f in findings if f.object == obj]
    assert text in finding.message
    assert finding.severity is Severity.ERROR and finding.hint


@pytest.mark.parametrize("rule_id", sorted(FAILING))
def test_rule_passes_the_example(rule_id, example):
    assert run(rule_id, example) == []


@pytest.mark.parametrize("rule_id", sorted(FAILING))
def test_rule_passes_the_large_topology_at_the_limits(rule_id):
    from policy_engine.examples import large_topology

    assert run(rule_id, large_topology()) == []


def test_name_length_bounds():
    assert run("BQ101", topology(share("x" * 128, 1))) == []
    (finding,) = run("BQ101", topology(share("x" * 129, 1)))
    assert "129 characters" in finding.message


def test_boundaries_are_accepted():
    assert run("BQ113", _with_queue(job_state_time_limit_actions=(
        JobStateTimeLimitAction(max_time_seconds=600, reason="x"),
        JobStateTimeLimitAction(max_time_seconds=86400, reason="y")))) == []
    assert run("BQ112", _with_queue(priority=0)) == [] and run("BQ112", _with_queue(priority=1000)) == []
    assert run("BQ110", topology(share("B", 1, "LEND_AND_BORROW", borrow_limit=-1))) == []
    assert run("BQ106", topology(*(share(f"s{i}", 1) for i in range(20)))) == []
