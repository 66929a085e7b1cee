"""The human report: findings grouped by severity (errors first), the share table, colour only on request."""

from __future__ import annotations

import io

from policy_engine.checks import check_topology
from policy_engine.reports import check_text
from tests.builders import GPU, guarantee, share, topology


def _mixed():
    return check_topology(topology(share("B", 1, "LEND_AND_BORROW"), share("A", 1), environment=3,
                                   guarantees=[guarantee("training/A", burst_capacity={GPU: 2})]))


def test_groups_errors_before_warnings_then_shares():
    text = check_text.render(_mixed(), source="t.yaml")
    errors, warnings, shares = text.index("Errors (1)"), text.index("Warnings (2)"), text.index("Quota shares")
    assert errors < text.index("BQ402") < warnings < text.index("BQ203") < text.index("BQ301") < shares
    assert "FAILED: 1 error(s), 2 warning(s), 2 quota share(s)" in text
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


def test_share_table_lists_who_preempts_whom(example):
    text = check_text.render(check_topology(example))
    qs1_row = next(line for line in text.splitlines() if "training/QS1 " in line and "LEND_AND_BORROW" in line)
    assert "training/QS2, training/QS1" in qs1_row
    assert qs1_row.split()[:6] == ["training/QS1", "LEND_AND_BORROW", "ml.g5.xlarge", "1", "1", "2"]
    qs3_row = next(line for line in text.splitlines() if "training/QS3" in line and "RESERVE" in line)
    assert qs3_row.count("nobody") == 2


def test_bracketed_object_names_are_printed_verbatim():
    text = check_text.render(check_topology(topology(share("A", 1), environment=2)), source="dir[1]/t.yaml")
    assert "service_environments[gpu-env]" in text
    assert "batch-quota check dir[1]/t.yaml" in text


def test_long_share_lists_are_shortened_with_a_count():
    from policy_engine.examples import large_topology

    text = check_text.render(check_topology(large_topology(queues=1)))
    row = next(line for line in text.splitlines() if "queue-00/team-00-00 " in line)
    # team-00-00 borrows from 13 lenders and has in-share preemption: 14 names, 2 shown.
    assert "queue-00/team-00-01, queue-00/team-00-03, +12 more" in row


def test_share_header_is_one_line_like_the_rows_on_a_narrow_terminal(example):
    text = check_text.render(check_topology(example), width=80)
    lines = text.splitlines()
    header = lines[lines.index("Quota shares") + 1]
    assert header.startswith("share") and header.rstrip().endswith("may preempt")
    assert "may be preempted by" in header
    assert any(line.startswith("training/QS1") and line.rstrip().endswith("training/QS1") for line in lines)
