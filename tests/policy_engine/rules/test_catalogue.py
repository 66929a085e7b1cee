"""docs/rules.md is generated from the rules; it must match what the code says."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from policy_engine.rules import all_rules
from policy_engine.rules.catalogue import render_catalogue

DOCS = Path(__file__).resolve().parents[3] / "docs" / "rules.md"


def test_committed_catalogue_is_up_to_date():
    assert DOCS.read_text(encoding="utf-8") == render_catalogue(), (
        "docs/rules.md is stale: run `python -m policy_engine.rules.catalogue > docs/rules.md`"
    )


def test_every_rule_is_in_the_catalogue():
    text = render_catalogue()
    for rule in all_rules():
        suppressible = "yes" if rule.can_suppress(rule.severity) and not rule.after_findings else "no"
        assert f"| {rule.id} | {rule.severity.value} | {suppressible} | {rule.title} |" in text


def test_the_catalogue_says_which_findings_can_be_suppressed():
    text = render_catalogue()
    assert "| BQ402 | error | yes |" in text  # a refuted guarantee: AWS still deploys
    assert "| BQ116 | error | no |" in text  # an AWS limit: the deploy would fail
    assert "| BQ302 | warning | yes |" in text and "| BQ003 | warning | no |" in text


def test_rule_ids_are_stable_shapes():
    for rule in all_rules():
        assert len(rule.id) == 5 and rule.id.startswith("BQ") and rule.id[2:].isdigit()
        assert rule.title and "\n" not in rule.title


def test_aws_rule_docstrings_take_their_figures_from_limits():
    """A limit AWS changes is one edit in ``limits.py``: no rule AWS enforces writes a figure of its own."""
    for rule in all_rules():
        if rule.enforced_by_aws:
            raw = inspect.getdoc(rule.function) or ""
            figures = set(re.findall(r"(?<![{.\w])\d{2,}\b", raw)) - {"32", "64"}  # bit widths, not limits
            assert not figures, f"{rule.id} writes {sorted(figures)}; use {{LIMIT.maximum}} from policy_engine.limits"


def test_figures_in_descriptions_are_filled_in():
    described = {rule.id: rule.description for rule in all_rules()}
    assert "at most 20 quota shares" in described["BQ106"] and "{" not in "".join(described.values())
