"""Deploy hazards: what a deploy does beyond updating in place (replace, delete, a lowered limit, a capacity cut,
a share or queue disabled) needs review before it reaches running work.

These rules judge a change (BASE -> HEAD), not one topology: ``batch-quota diff`` finds the hazards
(``policy_engine.changes.hazards``) and names each by its rule; ``check`` never reports them. A reviewed
hazard is accepted by a suppression in HEAD (``suppress: [{rule: BQ703, object: QUEUE/SHARE, reason: ...}]``,
the object as ``diff`` names it), which ``check``'s BQ003 never calls stale; an accepted hazard stays in every
output, marked with its reason, and no longer fails ``diff --fail-on hazard``.
"""

from __future__ import annotations

from collections.abc import Iterator

from policy_engine.analysis.rules.base import Context, RawFinding, rule
from policy_engine.foundation.findings import Severity


@rule("BQ701", Severity.ERROR, "A resource is not replaced without review", suppressible_errors=True, diff_only=True)
def hazard_replace(context: Context) -> Iterator[RawFinding]:
    """Evaluated by ``batch-quota diff`` only. A create-only property changed (a share renamed or moved, a
    policy's type, ...): CloudFormation deletes and recreates the resource, and its jobs are not moved."""
    return iter(())


@rule("BQ702", Severity.ERROR, "A resource is not deleted without review", suppressible_errors=True, diff_only=True)
def hazard_delete(context: Context) -> Iterator[RawFinding]:
    """Evaluated by ``batch-quota diff`` only. A share, job queue or service environment in BASE is gone from
    HEAD: CloudFormation deletes it, and its RUNNABLE and running jobs may be lost."""
    return iter(())


@rule("BQ703", Severity.ERROR, "A share's limit is not lowered without review", suppressible_errors=True,
      diff_only=True)
def hazard_lowered_limit(context: Context) -> Iterator[RawFinding]:
    """Evaluated by ``batch-quota diff`` only. A share's limit for an instance type is lower in HEAD: on deploy
    its jobs above the new limit become eligible for preemption."""
    return iter(())


@rule("BQ704", Severity.ERROR, "An environment's capacity is not cut without review", suppressible_errors=True,
      diff_only=True)
def hazard_capacity_cut(context: Context) -> Iterator[RawFinding]:
    """Evaluated by ``batch-quota diff`` only. A service environment's capacity for an instance type is lower in
    HEAD: nothing new is placed on that type until usage is back under it."""
    return iter(())


@rule("BQ705", Severity.ERROR, "A share or job queue is not disabled without review", suppressible_errors=True,
      diff_only=True)
def hazard_disabled(context: Context) -> Iterator[RawFinding]:
    """Evaluated by ``batch-quota diff`` only. An ENABLED share or job queue becomes DISABLED: it rejects new
    jobs from the deploy on."""
    return iter(())
