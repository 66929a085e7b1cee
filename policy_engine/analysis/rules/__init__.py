"""The rules: one module per family, each rule a stable ID, a severity, a title and one function.

Importing this package registers every rule in ``REGISTRY`` (ID -> Rule); ``run_rules`` runs them.
"""

from __future__ import annotations

from policy_engine.analysis.rules import (  # noqa: F401 (registers)
    aws_limits,
    borrowing,
    capacity,
    deploy_hazards,
    guarantees,
    promises,
    structure,
    suppressions,
    training_plans,
)
from policy_engine.analysis.rules.base import REGISTRY, Context, RawFinding, Rule, rule
from policy_engine.foundation.findings import Finding
from policy_engine.foundation.model import Topology


def all_rules() -> list[Rule]:
    """Every rule, ordered by ID."""
    return sorted(REGISTRY.values(), key=lambda r: r.id)


def run_rules(topology: Topology, context: Context | None = None) -> list[Finding]:
    """Run every rule once over ``topology``, then the rules about findings, and mark suppressed findings
    (unsorted; ``checks.check_topology`` orders them)."""
    context = context or Context(topology)
    rules = [each for each in all_rules() if not each.diff_only]
    context.findings = [finding for each in rules if not each.after_findings for finding in each.run(context)]
    about_findings = [finding for each in rules if each.after_findings for finding in each.run(context)]
    return suppressions.apply(context, context.findings) + about_findings


__all__ = ["REGISTRY", "Context", "RawFinding", "Rule", "all_rules", "rule", "run_rules"]
