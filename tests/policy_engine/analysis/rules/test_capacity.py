"""Capacity rules (BQ2xx): oversubscription, unknown instance types, idle capacity."""

from __future__ import annotations

from policy_engine.foundation.findings import Severity
from tests.builders import GPU, share, topology
from tests.builders import run_rule as run

P5 = "ml.p5.48xlarge"


def test_exact_fit_passes(example):
    for rule_id in ("BQ201", "BQ202", "BQ203"):
        assert run(rule_id, example) == []


def test_oversubscription_is_an_error_naming_every_share():
    bad = topology(share("QS1", 2), share("QS2", 2), environment=3)
    (finding,) = run("BQ201", bad)
    assert finding.severity is Severity.ERROR
    assert str(finding.object) == "service_environments[gpu-env]"
    assert "add up to 4 (training/QS1 2, training/QS2 2) but the environment has 3" in finding.message
    assert "allow_oversubscription" in finding.hint
    # A state that can occur (2 + 1 = the environment's 3): QS2 cannot reach its limit, even by reclaim.
    assert finding.counterexample == {"training/QS1": {GPU: 2}, "training/QS2": {GPU: 1}}
    assert "when training/QS1 uses 2 (within their own limits" in finding.message
    assert "training/QS2 gets only 1 of its 2" in finding.message


def test_oversubscription_counterexample_never_exceeds_the_environment():
    bad = topology(share("QS1", 3), share("QS2", 2), share("QS3", 2), environment=4)
    (finding,) = run("BQ201", bad)
    assert finding.counterexample == {"training/QS1": {GPU: 3}, "training/QS2": {GPU: 1}, "training/QS3": {GPU: 0}}
    assert sum(usage[GPU] for usage in finding.counterexample.values()) == 4
    assert "training/QS2 gets only 1 of its 2" in finding.message


def test_oversubscription_counterexample_never_uses_a_negative_limit_as_room():
    # QS1's limit of -1 (reported by BQ102) must not let QS2 and QS3 together hold more than the environment.
    bad = topology(share("QS1", -1), share("QS2", 2), share("QS3", 2), environment=2)
    (finding,) = run("BQ201", bad)
    assert finding.counterexample == {"training/QS1": {GPU: 0}, "training/QS2": {GPU: 2}, "training/QS3": {GPU: 0}}
    assert "training/QS3 gets only 0 of its 2" in finding.message


def test_opted_in_oversubscription_is_a_warning():
    opted = topology(share("QS1", 2), share("QS2", 2), environment=3, allow_oversubscription=True)
    (finding,) = run("BQ201", opted)
    assert finding.severity is Severity.WARNING


def test_unknown_instance_type_is_an_error():
    bad = topology(share("QS1", capacity={GPU: 1, P5: 1}), environment=1)
    (finding,) = run("BQ202", bad)
    assert str(finding.object) == "training/QS1"
    assert f"instance type {P5} is not in service environment gpu-env (it has: {GPU})" in finding.message
    assert finding.severity is Severity.ERROR


def test_unowned_capacity_is_an_idle_warning():
    (finding,) = run("BQ203", topology(share("QS1", 1), environment=3))
    assert finding.severity is Severity.WARNING
    assert finding.message == f"{GPU}: 2 of 3 instances belong to no share and stay idle"


def test_instance_type_nobody_names_is_idle():
    (finding,) = run("BQ203", topology(share("QS1", 1), environment={GPU: 1, P5: 4}))
    assert finding.message.startswith(f"{P5}: 4 of 4")
