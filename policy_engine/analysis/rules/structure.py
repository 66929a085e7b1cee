"""Structure: duplicate names and dangling references in a topology built in Python.

Files never get here with such problems (loading refuses them, exit 2); a topology
built in Python and handed straight to ``check_topology`` is checked the same way.
"""

from __future__ import annotations

from collections.abc import Iterator

from policy_engine.analysis.rules.base import Context, RawFinding, rule
from policy_engine.foundation.findings import Severity
from policy_engine.inputs.structure_checks import topology_problems


@rule("BQ001", Severity.ERROR, "Names are unique and every reference resolves", enforced_by_aws=True)
def unique_names_and_resolved_references(context: Context) -> Iterator[RawFinding]:
    """Environments, queues and the shares of a queue have unique names; a queue names an existing
    environment; a guarantee names exactly one share (``QUEUE/SHARE``, or ``SHARE`` when unique)."""
    for problem in topology_problems(context.topology):
        yield RawFinding(problem.object, problem.message, "rename the duplicate or fix the reference")
