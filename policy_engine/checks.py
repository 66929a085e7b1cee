"""The check entry point: ``check_topology(topology) -> CheckReport``: the documented import path, kept for users;
the code is in ``analysis/checks.py``.

Nothing inside ``policy_engine`` imports this module (CONTRIBUTING.md, "Where things live").
"""

from __future__ import annotations

from policy_engine.analysis.checks import (
    GUARANTEE_RULES,
    BorrowGraph,
    CheckReport,
    Context,
    Finding,
    Severity,
    ShareSummary,
    Suppression,
    Topology,
    borrow_graph,
    check_topology,
    locate,
    marked_named_at_deploy,
    run_rules,
    sort_findings,
    summarize_all,
)

__all__ = [
    "GUARANTEE_RULES",
    "BorrowGraph",
    "CheckReport",
    "Context",
    "Finding",
    "Severity",
    "ShareSummary",
    "Suppression",
    "Topology",
    "borrow_graph",
    "check_topology",
    "locate",
    "marked_named_at_deploy",
    "run_rules",
    "sort_findings",
    "summarize_all",
]
