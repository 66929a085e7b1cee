"""BQ001: a topology built in Python gets the loader's structural checks as findings."""

from __future__ import annotations

import pytest

from policy_engine.analysis.rules.objects import locate, object_path
from policy_engine.foundation.model import JobQueue
from tests.builders import guarantee, share, topology
from tests.builders import run_rule as run


def test_example_passes(example):
    assert run("BQ001", example) == []


def test_duplicates_and_dangling_references_are_findings():
    bad = topology(share("QS1", 1), share("QS1", 1), guarantees=[guarantee("nobody", never_preempted=True)])
    bad = bad.model_copy(update={"job_queues": (*bad.job_queues, JobQueue(name="q2", service_environment="nope"))})
    messages = {(str(f.object), f.message) for f in run("BQ001", bad)}
    assert any(o == "job_queues[training]" and "duplicate name 'QS1'" in m for o, m in messages)
    assert any(o == "job_queues[q2]" and "no service environment named 'nope'" in m for o, m in messages)
    assert any(o == "guarantees[0]" and "no quota share 'nobody'" in m for o, m in messages)


@pytest.mark.parametrize("name", ["team.a", "t]b", "a/b", "x: y", "sp ace"])
def test_a_duplicate_share_names_its_queue_whatever_the_queue_is_called(name):
    """The object is the queue itself (not ``job_queues[team``), so suppressions, SARIF and CDK find it."""
    bad = topology(share("QS1", 1), share("QS1", 1), queue=name)
    (finding,) = run("BQ001", bad)
    assert str(finding.object) == f"job_queues[{name}]" and finding.message == "duplicate name 'QS1' (first at [0])"
    assert finding.object.queue == name and finding.object.environment == "gpu-env"
    assert locate(bad, finding.object).queue == name
    assert object_path(bad, finding.object) == ("job_queues", 0)


def test_a_guarantee_names_a_share_of_a_queue_with_a_slash():
    good = topology(share("T", 1), queue="a/b", guarantees=[guarantee("a/b/T", never_preempted=True)])
    assert run("BQ001", good) == []
