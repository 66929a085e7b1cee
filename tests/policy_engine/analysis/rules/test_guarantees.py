"""Guarantee rules (BQ4xx): proven promises pass; refuted ones are errors with a counterexample."""

from __future__ import annotations

from policy_engine.foundation.findings import Severity
from tests.builders import GPU, guarantee, share, topology
from tests.builders import run_rule as run


def test_example_promises_hold(example):
    for rule_id in ("BQ401", "BQ402", "BQ403"):
        assert run(rule_id, example) == []


def test_min_capacity_refuted_under_oversubscription():
    bad = topology(share("A", 2), share("B", 2), environment=3, allow_oversubscription=True,
                   guarantees=[guarantee("training/A", min_capacity={GPU: 2})])
    (finding,) = run("BQ401", bad)
    assert finding.severity is Severity.ERROR
    assert str(finding.object) == "guarantees[0] (training/A)"
    assert finding.counterexample == {"training/B": {GPU: 2}, "training/A": {GPU: 1}}


def test_burst_refuted_with_idle_counterexample(example):
    bad = example.model_copy(update={"guarantees": (guarantee("QS1", burst_capacity={GPU: 3}),)})
    (finding,) = run("BQ402", bad)
    assert str(finding.object) == "guarantees[0] (QS1)"
    assert finding.counterexample == {"training/QS2": {GPU: 0}, "training/QS3": {GPU: 0}, "training/QS1": {GPU: 2}}


def test_never_preempted_refuted_for_the_borrowing_share(example):
    bad = example.model_copy(update={"guarantees": (guarantee("training/QS1", never_preempted=True),)})
    findings = run("BQ403", bad)
    assert len(findings) == 2  # in-share preemption, and cross-share reclaim of what it borrows
    assert {"in-share preemption" in f.message for f in findings} == {True, False}


def _meaningless(*promises):
    return topology(share("A", 2, "LEND_AND_BORROW"), share("B", 1, "LEND"),
                    guarantees=[guarantee("training/A", **p) for p in promises])


def test_negative_and_zero_promises_are_errors():
    findings = run("BQ404", _meaningless({"min_capacity": {GPU: -4}}, {"burst_capacity": {GPU: 0}}))
    assert [(str(f.object), f.severity) for f in findings] == [("guarantees[0] (training/A)", Severity.ERROR),
                                                          ("guarantees[1] (training/A)", Severity.ERROR)]
    assert "min_capacity ml.g5.xlarge: promises -4" in findings[0].message
    assert "burst_capacity ml.g5.xlarge: promises 0" in findings[1].message
    assert all(f.hint for f in findings)


def test_a_guarantee_without_a_promise_is_an_error():
    (finding,) = run("BQ404", _meaningless({}, {"min_capacity": {GPU: 1}}))
    assert str(finding.object) == "guarantees[0] (training/A)"
    assert "promises nothing" in finding.message


def test_an_instance_type_the_share_lacks_is_an_error_reported_once():
    bad = _meaningless({"min_capacity": {"ml.p5.48xlarge": 1}, "burst_capacity": {"ml.p5.48xlarge": 0}})
    findings = run("BQ404", bad)
    assert len(findings) == 2 and all("has no limit for ml.p5.48xlarge" in f.message for f in findings)
    assert run("BQ401", bad) == [] and run("BQ402", bad) == []  # not refuted a second time


def test_meaningful_promises_pass_bq404(example):
    assert run("BQ404", example) == []
    assert run("BQ404", _meaningless({"never_preempted": True})) == []
