"""What a rule is: a stable ID, a severity, a one-line title and one function -> problems.

Rule functions yield ``RawFinding``s (object, message, hint); the ``Rule`` stamps its ID and
severity on them, so a rule's identity lives in exactly one place: its decorator.
The function's docstring is the rule's description in the generated catalogue; like the messages, it
takes its figures from ``policy_engine.foundation.limits`` (``{SHARES_PER_QUEUE.maximum}``), so a docstring holds
no other braces.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.foundation import limits
from policy_engine.foundation.diagnostics import ObjectRef, resolve_share
from policy_engine.foundation.findings import Finding, Severity
from policy_engine.foundation.model import QuotaShare, Suppression, Topology


@dataclass
class Context:
    """What every rule reads: the topology and, built once on first use, its borrow graph.

    ``findings`` holds the other rules' findings for the rules that judge findings (``after_findings``);
    ``extra_suppressions`` are suppressions given in Python next to the topology's own.
    """

    topology: Topology
    extra_suppressions: tuple[Suppression, ...] = ()
    findings: list[Finding] = field(default_factory=list)

    @property
    def suppressions(self) -> tuple[Suppression, ...]:
        return (*self.topology.suppress, *self.extra_suppressions)

    @cached_property
    def graph(self) -> BorrowGraph:
        return BorrowGraph(self.topology)

    @cached_property
    def guarantee_shares(self) -> list[tuple[ObjectRef, QuotaShare | None]]:
        """Per guarantee: its object (shown with its share reference) and the one share it names (else ``None``),
        resolved once for every rule about guarantees."""
        shares = dict(self.topology.shares_by_queue().items())
        out: list[tuple[ObjectRef, QuotaShare | None]] = []
        for index, guarantee in enumerate(self.topology.guarantees):
            match = resolve_share(guarantee.share, shares)
            queue = self.topology.queue(match.queue) if match.queue is not None else None
            share = queue.share(match.share) if queue is not None and match.share is not None else None
            out.append((ObjectRef.of_guarantee(index, match.queue, match.share,
                                               queue.service_environment if queue else None, ref=guarantee.share),
                        share))
        return out


@dataclass(frozen=True)
class RawFinding:
    """A rule's raw result; ``severity`` overrides the rule's default (e.g. opted-in oversubscription)."""

    object: ObjectRef
    message: str
    hint: str = ""
    severity: Severity | None = None
    counterexample: dict[str, Any] | None = field(default=None, compare=False)


RuleFunction = Callable[[Context], Iterable[RawFinding]]


@dataclass(frozen=True)
class Rule:
    """One check with a stable ID (``BQ`` + family digit + number)."""

    id: str
    severity: Severity
    title: str
    function: RuleFunction
    family: str
    #: Its errors may be suppressed: AWS still accepts the deploy (warnings always may).
    suppressible_errors: bool = False
    #: Runs after every other rule, over ``Context.findings``.
    after_findings: bool = False
    #: AWS itself refuses what it finds (CloudFormation or the Batch API fail the deploy); the constructs'
    #: eager prop checks mirror these rules, and a local AWS endpoint rejects the same requests.
    enforced_by_aws: bool = False
    #: The help link: the AWS page that states the limit or behaviour, or (for the project's own rules) the
    #: rule's entry in the catalogue (``catalogue_url``). SARIF writes it as the rule's ``helpUri``.
    source_url: str = ""
    #: Judges a change between two topologies, not one topology: only ``batch-quota diff`` evaluates it
    #: (``check`` never reports it, and a suppression of it in HEAD is never stale).
    diff_only: bool = False

    def can_suppress(self, severity: Severity) -> bool:
        """A finding of this severity may be accepted: a warning or a note, or an error AWS would still deploy."""
        return severity is not Severity.ERROR or self.suppressible_errors

    @property
    def blocks_synthesis(self) -> bool:
        """Its errors fail ``check`` and ``cdk synth`` whatever a suppression says."""
        return self.severity is Severity.ERROR and not self.suppressible_errors

    @property
    def description(self) -> str:
        """The docstring with its ``{LIMIT.field}`` figures filled in from ``policy_engine.foundation.limits``."""
        doc = inspect.getdoc(self.function)
        return doc.format_map(vars(limits)) if doc else self.title

    def run(self, context: Context) -> list[Finding]:
        return [
            Finding(
                rule=self.id,
                severity=problem.severity or self.severity,
                object=problem.object,
                message=problem.message,
                hint=problem.hint,
                counterexample=problem.counterexample,
            )
            for problem in self.function(context)
        ]


#: Every registered rule by ID, in registration order (the family modules register on import).
REGISTRY: dict[str, Rule] = {}

#: Where the rule catalogue (``docs/rules.md``) is read. The project's own rules link to their entry in it
#: (``docs/rules.md#bq001``); the default is the path in the repository, which code scanning and editors open
#: next to the file. Set ``BATCH_QUOTA_RULES_URL`` to where the catalogue is published (the file on your Git
#: host, say) for links that open anywhere.
RULES_URL = os.environ.get("BATCH_QUOTA_RULES_URL") or "docs/rules.md"


def catalogue_anchor(rule_id: str) -> str:
    """The id of a rule's entry in the catalogue (``bq001``)."""
    return rule_id.lower()


def catalogue_url(rule_id: str) -> str:
    """A project rule's help link: its entry in the catalogue."""
    return f"{RULES_URL}#{catalogue_anchor(rule_id)}"


def rule(rule_id: str, severity: Severity, title: str, *, suppressible_errors: bool = False,
         after_findings: bool = False, enforced_by_aws: bool = False,
         source_url: str | None = None, diff_only: bool = False) -> Callable[[RuleFunction], Rule]:
    """Register the decorated function as rule ``rule_id``; ``source_url`` is the AWS page stating what it checks
    (without one, the rule is the project's own and links to its catalogue entry)."""

    def register(function: RuleFunction) -> Rule:
        if rule_id in REGISTRY:
            raise ValueError(f"rule {rule_id} registered twice")
        family = (inspect.getmodule(function).__doc__ or "").strip().split(":")[0]
        registered = Rule(rule_id, severity, title, function, family, suppressible_errors, after_findings,
                          enforced_by_aws, source_url or catalogue_url(rule_id), diff_only)
        REGISTRY[rule_id] = registered
        return registered

    return register
