"""What a check says about a topology: one ``Finding`` per problem, with a stable rule ID."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from policy_engine.foundation.diagnostics import ObjectRef


class Severity(StrEnum):
    """``error`` fails ``check`` (exit 1) and ``cdk synth``; ``warning`` is reported only (``--strict`` fails on it);
    ``info`` notes a choice worth knowing, never failing anything."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    """One problem: which rule, how bad, on which object, what and how to fix it.

    ``object`` is data (kind, environment, queue, share, index); ``str(object)`` is how every output names it.
    """

    rule: str
    severity: Severity
    object: ObjectRef
    message: str
    hint: str = ""
    #: For refuted guarantees: the concrete state (share -> usage) under which it fails.
    counterexample: dict[str, Any] | None = field(default=None, compare=False)
    #: The reason given by the topology's ``suppress`` entry that accepts this finding (``None``: not suppressed).
    suppressed: str | None = None
    #: The message as the rule wrote it, before ``checks`` added a "named at deploy" mark (``None``: no mark).
    plain_message: str | None = field(default=None, compare=False)

    @property
    def rule_message(self) -> str:
        """The message without the mark ``checks`` adds for objects named at deploy."""
        return self.message if self.plain_message is None else self.plain_message

    def line(self) -> str:
        """``BQ201 error training/QS1: message (fix: hint)`` for logs and CDK annotations."""
        text = f"{self.rule} {self.severity.value} {self.object}: {self.message}"
        text = f"{text} (fix: {self.hint})" if self.hint else text
        return f"{text} [suppressed: {self.suppressed}]" if self.suppressed is not None else text


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    """A finding as JSON reads it (``check --format json``, the sweep's run records, the endpoint's audit)."""
    return {
        "rule": finding.rule,
        "severity": finding.severity.value,
        "object": str(finding.object),
        "message": finding.message,
        "hint": finding.hint,
        "counterexample": finding.counterexample,
        "suppressed": None if finding.suppressed is None else {"reason": finding.suppressed},
    }
