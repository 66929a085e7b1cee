"""``check_topology``: the public entry point and its report."""

from __future__ import annotations

from policy_engine.analysis.checks import CheckReport, borrow_graph, check_topology
from policy_engine.foundation.findings import Severity
from policy_engine.inputs.examples import large_topology
from tests.builders import GPU, guarantee, share, topology


def test_example_is_ok_with_one_warning(example):
    report = check_topology(example)
    assert isinstance(report, CheckReport)
    assert report.ok and report.errors == []
    assert [f.rule for f in report.warnings] == ["BQ302"]
    assert list(report.summaries) == ["training/QS1", "training/QS2", "training/QS3"]


def test_the_report_carries_its_borrow_graph_for_the_same_topology_only(example):
    report = check_topology(example)
    assert report.graph is not None and borrow_graph(example, report) is report.graph
    other = topology(share("QS1", 1))
    assert borrow_graph(other, report).topology is other
    assert borrow_graph(example, None).topology is example


def test_findings_are_sorted_errors_first_then_rule_then_object():
    bad = topology(share("B", 1, "LEND_AND_BORROW"), share("A", 2), environment=4,
                   guarantees=[guarantee("training/A", burst_capacity={GPU: 9}),
                               guarantee("training/B", never_preempted=True)])
    report = check_topology(bad)
    keys = [(f.severity is not Severity.ERROR, f.rule, f.object) for f in report.findings]
    assert keys == sorted(keys)
    assert not report.ok
    assert {f.rule for f in report.errors} == {"BQ402"}
    assert {f.rule for f in report.warnings} == {"BQ203", "BQ301"}


def test_large_topology_is_clean():
    report = check_topology(large_topology(queues=5))
    assert report.findings == [] and len(report.summaries) == 100


def test_broken_python_topology_is_reported_not_raised():
    from policy_engine.foundation.model import JobQueue

    base = topology(share("A", 1), share("A", 1), guarantees=[guarantee("ghost", never_preempted=True)])
    broken = base.model_copy(update={"job_queues": (*base.job_queues, JobQueue(name="q2", service_environment="x",
                                                                               shares=(share("B", 1),)))})
    report = check_topology(broken)
    assert {f.rule for f in report.errors} == {"BQ001"}
    assert "q2/B" in report.summaries and report.summaries["q2/B"].guaranteed == {GPU: 0}
