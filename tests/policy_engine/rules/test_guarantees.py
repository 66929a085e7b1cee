"""Guarantee rules (BQ4xx): proven promises pass; refuted ones are errors with a counterexample."""

from __future__ import annotations

from policy_engine.findings import Severity
from tests.policy_engine.builders import GPU, guarantee, share, topology
from tests.policy_engine.rules.helpers import run


def test_example_promises_hold(example):
    for rule_id in ("BQ401", "BQ402", "BQ403"):
        assert run(rule_id, example) == []


def test_min_capacity_refuted_under_oversubscription():
    bad = topology(share("A", 2), share("B", 2), environment=3, allow_oversubscription=True,
                   guarantees=[guarantee("training/A", min_capacity={GPU: 2})])
    (finding,) = run("BQ401", bad)
    assert finding.severity is Severity.ERROR
    assert finding.object == "guarantees[0] (training/A)"
    assert finding.counterexample == {"training/B": {GPU: 2}, "training/A": {GPU: 1}}


def test_burst_refuted_with_idle_counterexample(example):
    bad = example.model_copy(update={"guarantees": (guarantee("QS1", burst_capacity={GPU: 3}),)})
    (finding,) = run("BQ402", bad)
    assert finding.object == "guarantees[0] (QS1)"
    assert finding.counterexample == {"training/QS2": {GPU: 0}, "training/QS3": {GPU: 0}, "training/QS1": {GPU: 2}}


def test_never_preempted_refuted_for_the_borrowing_share(example):
    bad = example.model_copy(update={"guarantees": (guarantee("training/QS1", never_preempted=True),)})
    findings = run("BQ403", bad)
    assert len(findings) == 2  # in-share preemption, and cross-share reclaim of what it borrows
    assert {"in-share preemption" in f.message for f in findings} == {True, False}
