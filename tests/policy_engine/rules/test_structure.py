"""BQ001: a topology built in Python gets the loader's structural checks as findings."""

from __future__ import annotations

from policy_engine.model import JobQueue
from tests.builders import guarantee, share, topology
from tests.builders import run_rule as run


def test_example_passes(example):
    assert run("BQ001", example) == []


def test_duplicates_and_dangling_references_are_findings():
    bad = topology(share("QS1", 1), share("QS1", 1), guarantees=[guarantee("nobody", never_preempted=True)])
    bad = bad.model_copy(update={"job_queues": (*bad.job_queues, JobQueue(name="q2", service_environment="nope"))})
    messages = {(f.object, f.message) for f in run("BQ001", bad)}
    assert any(o == "job_queues[training]" and "duplicate name 'QS1'" in m for o, m in messages)
    assert any(o == "job_queues[q2]" and "no service environment named 'nope'" in m for o, m in messages)
    assert any(o == "guarantees[0]" and "no quota share 'nobody'" in m for o, m in messages)
