"""The human report: findings grouped by severity (errors first), the share table, colour only on request."""

from __future__ import annotations

import io

from policy_engine.analysis.checks import check_topology
from policy_engine.reports.check import text as check_text
from tests.builders import GPU, guarantee, share, topology


def _mixed():
    return check_topology(topology(share("B", 1, "LEND_AND_BORROW"), share("A", 1), environment=3,
                                   guarantees=[guarantee("training/A", burst_capacity={GPU: 2})]))


def test_groups_errors_before_warnings_then_shares():
    text = check_text.render(_mixed(), source="t.yaml")
    errors, warnings, shares = text.index("Errors (1)"), text.index("Warnings (2)"), text.index("Quota shares")
    assert errors < text.index("BQ402") < warnings < text.index("BQ203") < text.index("BQ301") < shares
    notes = text.index("Notes (1)")  # BQ304: B leaves its borrow_limit unset
    assert shares > notes > text.index("BQ301") and text.index("BQ304") > notes
    assert "FAILED: 1 error(s), 2 warning(s), 1 note(s), 2 quota share(s)" in text
    assert "\x1b[" not in text


def test_colour_only_when_asked():
    assert "\x1b[" in check_text.render(_mixed(), color=True)


def test_colours_only_a_terminal_without_no_color(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert check_text.use_color(Terminal())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not check_text.use_color(Terminal())
    monkeypatch.delenv("NO_COLOR")
    assert not check_text.use_color(io.StringIO())


def test_share_table_names_the_queue_once_and_lists_who_preempts_whom(example):
    text = check_text.render(check_topology(example))
    lines = text.splitlines()
    assert lines.count("Quota shares of job queue training") == 1
    qs1_row = next(line for line in lines if line.startswith("QS1 ") and "LEND_AND_BORROW" in line)
    assert qs1_row.split()[:6] == ["QS1", "LEND_AND_BORROW", "ml.g5.xlarge", "1", "1", "2"]
    assert qs1_row.rstrip().endswith("QS2, QS1             QS1") and "training/" not in qs1_row
    qs3_row = next(line for line in lines if line.startswith("QS3 ") and "RESERVE" in line)
    assert qs3_row.count("nobody") == 2


def test_bracketed_object_names_are_printed_verbatim():
    text = check_text.render(check_topology(topology(share("A", 1), environment=2)), source="dir[1]/t.yaml")
    assert "service_environments[gpu-env]" in text
    assert "batch-quota check dir[1]/t.yaml" in text


def test_long_share_lists_are_shortened_only_on_a_terminal():
    from policy_engine.inputs.examples import large_topology

    report = check_topology(large_topology(queues=1))
    on_screen = check_text.render(report, terminal=True)
    row = next(line for line in on_screen.splitlines() if line.startswith("team-00-00 "))
    # team-00-00 borrows from 13 lenders and has in-share preemption: 14 names, 2 shown.
    assert "team-00-01, team-00-03, +12 more" in row
    piped = check_text.render(report)
    row = next(line for line in piped.splitlines() if line.startswith("team-00-00 "))
    assert "more" not in row and len(row.split("  ")[-2].strip().split(", ")) == 14


def test_the_verdict_says_how_many_declared_guarantees_were_proven():
    topo = topology(share("A", 2), share("B", 2, "LEND"), environment=4,
                    guarantees=[guarantee("A", min_capacity={GPU: 2}), guarantee("B", burst_capacity={GPU: 3})])
    text = check_text.render(check_topology(topo), declared_guarantees=2)
    assert text.splitlines()[-1].endswith("2 quota share(s), 1 of 2 declared guarantee(s) proven")


def test_share_header_is_one_line_like_the_rows_on_a_narrow_terminal(example):
    text = check_text.render(check_topology(example), width=80)
    lines = text.splitlines()
    header = lines[lines.index("Quota shares of job queue training") + 1]
    assert header.startswith("share") and header.rstrip().endswith("may preempt")
    assert "may be preempted by" in header
    assert any(line.startswith("QS1") and line.rstrip().endswith("QS1") for line in lines)
