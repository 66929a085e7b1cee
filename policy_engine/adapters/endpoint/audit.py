"""The policy engine's findings on the account as it changes: AWS accepts what ``check`` would flag.

A change AWS accepts is accepted (only what AWS itself rejects is refused: ``account.api_problems``),
but what ``batch-quota check`` finds in the new resources (an oversubscribed environment, BQ201, a
share that can never reach its limit, ...) is logged, one line per finding the change brought, and
the current findings are served at ``GET /_batch-quota/findings``.
"""

from __future__ import annotations

import logging
from typing import Any

from policy_engine.analysis.checks import check_topology
from policy_engine.foundation.findings import Finding
from policy_engine.foundation.model import Topology

log = logging.getLogger("batch_quota.serve")


def _key(finding: Finding) -> tuple[str, str, str]:
    return finding.rule, str(finding.object), finding.message


class Audit:
    """The findings of the account's current resources."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self._topology: Topology | None = None

    def refresh(self, topology: Topology, quiet: bool = False) -> list[Finding]:
        """Check ``topology``; log (unless ``quiet``: a restart replaying its log) and return the findings it has
        that the previous one had not."""
        if topology == self._topology:
            return []
        self._topology = topology
        before = {_key(f) for f in self.findings}
        self.findings = list(check_topology(topology).findings)
        new = [f for f in self.findings if _key(f) not in before]
        for finding in [] if quiet else new:
            log.warning("%s", finding.line())
        return new

    def to_json(self) -> dict[str, Any]:
        from policy_engine.foundation.findings import finding_to_dict

        return {"findings": [finding_to_dict(f) for f in self.findings]}
