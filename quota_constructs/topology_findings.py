"""A topology's findings on its CDK constructs: errors fail ``cdk synth``, warnings and suppressed findings annotate.

The policy engine runs once per topology, before any construct is built. Its errors become
one construct validation per job queue (so ``cdk synth`` fails listing every finding with its
rule, object and message) and its warnings become CDK warnings; a topology without findings
adds neither. An object whose construct refuses its props (the eager ``QuotaConstructError`` checks,
which the rules AWS enforces mirror) is left out instead of aborting the build: its finding
fails synthesis anyway, alongside every other one. A construct check the engine has no rule
for becomes a validation line of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import jsii
from aws_cdk import Annotations
from constructs import Construct, IValidation

from policy_engine.analysis.checks import CheckReport, check_topology
from policy_engine.analysis.rules import REGISTRY
from policy_engine.analysis.rules.objects import locate
from policy_engine.foundation import model as m
from policy_engine.foundation.diagnostics import ObjectRef
from policy_engine.foundation.findings import Finding
from policy_engine.inputs.loading import validate_topology
from quota_constructs.checks_plugin import CHECKED_METADATA, checked_metadata
from quota_constructs.errors import QuotaConstructError

T = TypeVar("T")


@dataclass(frozen=True)
class BuildProblem:
    """A construct's eager ``QuotaConstructError`` met while building a topology, and where to report it.

    ``objects`` are the objects (its share, queue or environment) whose error from a rule AWS enforces
    already explains the refusal, so the same problem is not listed twice.
    """

    scope: Construct
    objects: tuple[ObjectRef, ...]
    message: str


def build_or_record(
    problems: list[BuildProblem] | None, scope: Construct, objects: tuple[ObjectRef, ...], make: Callable[[], T]
) -> T | None:
    """``make()``; with a ``problems`` list, a ``QuotaConstructError`` is recorded there (result ``None``) instead
    of raised."""
    if problems is None:
        return make()
    try:
        return make()
    except QuotaConstructError as error:
        problems.append(BuildProblem(scope, objects, str(error)))
        return None


@jsii.implements(IValidation)
class FindingsValidation:
    """Precomputed finding lines returned to CDK's ``validate()`` (one kernel callback in all)."""

    def __init__(self, lines: Sequence[str]):
        self._lines = list(lines)

    def validate(self) -> list[str]:
        return self._lines


def attach_findings(
    report: CheckReport,
    topology: m.Topology,
    queues: Mapping[str, Construct],
    environments: Mapping[str, Construct],
    fallback: Construct,
    problems: Sequence[BuildProblem] = (),
) -> None:
    """Errors -> one validation per construct; warnings -> CDK warnings; suppressed findings -> CDK info
    (marked with their reason); each on the queue the finding is about.

    The queue is found by the kind of object the finding names, never by a name's spelling: a share,
    guarantee or queue -> its queue; an environment -> the first queue using it, else the environment
    itself; anything else, or an object left unbuilt -> ``fallback``. A construct ``problems`` entry
    no error of a rule AWS enforces (``Rule.enforced_by_aws``) explains is one more error line, on its scope.
    """
    users: dict[str, str] = {}
    for queue in topology.job_queues:
        users.setdefault(queue.service_environment, queue.name)

    def target(finding: Finding) -> Construct:
        where = locate(topology, finding.object)
        if where.queue is not None:
            return queues.get(where.queue, fallback)
        if where.environment is not None:
            user = users.get(where.environment)
            if user is not None and user in queues:
                return queues[user]
            return environments.get(where.environment, fallback)
        return fallback

    errors: dict[int, tuple[Construct, list[str]]] = {}
    for finding in report.errors:
        construct = target(finding)
        errors.setdefault(id(construct), (construct, []))[1].append(finding.line())
    explained = {finding.object for finding in report.errors if REGISTRY[finding.rule].enforced_by_aws}
    for problem in problems:
        if explained.isdisjoint(problem.objects):
            errors.setdefault(id(problem.scope), (problem.scope, []))[1].append(problem.message)
    for construct, lines in errors.values():
        construct.node.add_validation(FindingsValidation(lines))
    if report.findings:  # so that BatchQuotaChecks, reading the same resources from the templates, skips these
        fallback.node.add_metadata(CHECKED_METADATA, checked_metadata(report.findings))
    for finding in report.warnings:
        Annotations.of(target(finding)).add_warning_v2(f"batch-quota:{finding.rule}", finding.line())
    for finding in report.suppressed:  # accepted in the topology: shown, never failing
        Annotations.of(target(finding)).add_info(finding.line())


def checked_report(topology: m.Topology, report: CheckReport | None, source: str) -> CheckReport:
    """``report`` (else ``check_topology``'s), after refusing a broken structure with ``LoadError``: validated once.

    ``check_topology`` runs the loader's structure check itself (rule BQ001), so ``validate_topology``,
    which says where, runs again only when BQ001 found something; a report passed in may be of
    another topology, so the topology is validated then.
    """
    if report is None:
        report = check_topology(topology)
        if not any(finding.rule == "BQ001" for finding in report.errors):
            return report
    validate_topology(topology, source=source)
    return report
