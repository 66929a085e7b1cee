"""Markdown for pull-request comments and CI job summaries: a verdict and GFM tables that stay tables."""

from __future__ import annotations

from policy_engine.analysis.checks import CheckReport, check_topology
from policy_engine.foundation.findings import Finding, Severity
from policy_engine.reports.check.markdown import render as render_check
from policy_engine.reports.kit.markdown import cell, table
from policy_engine.reports.simulate.markdown import render as render_simulation
from tests.builders import GPU, guarantee, share, topology
from tests.policy_engine.reports.walkthrough import walkthrough


def rows(markdown: str, first_header: str) -> list[list[str]]:
    """The body rows of the table whose header starts with ``| first_header |``."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    body = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        body.append([c.strip() for c in line.strip("|").split(" | ")])
    return body


def test_cells_cannot_break_a_table():
    assert cell("a|b\nc") == "a\\|b<br>c"
    assert cell("") == "–"
    lines = table(("x", "y"), [("1|2", "ok")], align="rl")
    assert lines == ["| x | y |", "| ---: | --- |", "| 1\\|2 | ok |"]


def test_check_passing_example_has_verdict_warning_row_and_share_table(example):
    text = render_check(check_topology(example), source="topologies/example.yaml")
    assert text.startswith("### ✅ batch-quota check passed: `topologies/example.yaml`")
    assert rows(text, "severity")[0][:3] == ["warning", "BQ302", "training/QS1"]
    shares = {row[0]: row for row in rows(text, "share")}
    assert set(shares) == {"QS1", "QS2", "QS3"}  # in the table of their queue, named once above it
    assert "Job queue training:" in text
    assert shares["QS1"][4] == f"{GPU}: 2"  # max burst: own 1 + 1 from QS2


def test_check_failure_lists_errors_first():
    t = topology(share("A", 1, "LEND_AND_BORROW"), share("B", 1, "LEND"), environment=3,
                 guarantees=[guarantee("A", burst_capacity={GPU: 9})])
    text = render_check(check_topology(t))
    assert text.startswith("### ❌ batch-quota check failed")
    severities = [row[0] for row in rows(text, "severity")]
    order = ["error", "warning", "info"]  # errors, then warnings, then notes (BQ304: A leaves borrow_limit unset)
    assert severities[0] == "error" and severities == sorted(severities, key=order.index) and "info" in severities


def test_a_message_with_a_pipe_stays_in_its_cell():
    report = CheckReport(findings=[Finding("BQ999", Severity.ERROR, "x", "a | b", "fix | it")])
    assert rows(render_check(report), "severity") == [["error", "BQ999", "x", "a \\| b", "fix \\| it"]]


def test_simulation_summary_and_one_row_per_share():
    _, result = walkthrough()
    text = render_simulation(result, source="scenarios/walkthrough.yaml")
    assert text.startswith("### batch-quota simulate: `scenarios/walkthrough.yaml`")
    [headline] = rows(text, "jobs")
    assert headline[0] == str(len(result.jobs)) and headline[2] == str(result.summary["preemptions"])
    shares = rows(text, "share")
    assert [(r[0], r[1]) for r in shares] == [(m.share, m.instance_type) for m in result.shares]
    by_share = {r[0]: r for r in shares}
    assert by_share["training/QS1"][10] == "2"  # med reclaimed by QS2, high preempted inside QS1


def test_check_says_how_many_declared_guarantees_were_proven_in_markdown_and_json():
    from policy_engine.reports.check import json as check_json

    t = topology(share("A", 1, "LEND_AND_BORROW"), share("B", 1, "LEND"), environment=3,
                 guarantees=[guarantee("A", burst_capacity={GPU: 9}), guarantee("B", burst_capacity={GPU: 1})])
    report = check_topology(t)
    assert "**1** of **2** declared guarantee(s) proven" in render_check(report, declared_guarantees=2)
    assert check_json.to_dict(report, declared_guarantees=2)["guarantees"] == {"declared": 2, "proven": 1}
