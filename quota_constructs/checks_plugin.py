"""``BatchQuotaChecks``: the policy engine's rules on every template a CDK app synthesizes, however it was built.

A CDK policy-validation plugin (``Validations.of(app).add_plugins(BatchQuotaChecks())``, the interface
cdk-nag's packs implement). It reads every template of the assembly as one account with the reader
``check FILE.template.json`` uses (``policy_engine.inputs.template``: ``Ref``/``Fn::GetAtt`` within a
template, ``Fn::ImportValue`` against the other templates' exports, unnamed resources under their
logical IDs), runs every rule, and reports each finding on the resource it is about, whose construct
path CDK shows (hand-built constructs, raw ``Cfn*`` resources and other libraries' alike).

Severities, as CDK's acknowledgements treat them: an error BQ002 forbids suppressing (an AWS limit: the
deploy would fail) is ``fatal``, which ``Validations.of(construct).acknowledge`` cannot hide; other errors
are ``error``; warnings are ``warning`` (``success`` stays true) unless ``strict=True``, which reports them
as ``error``. CDK applies the acknowledgements (``"<plugin name>::BQnnn"``, on the resource or any scope
above it); the plugin reads them from the assembly's manifest and reports one matching nothing as BQ003.

Findings a ``QuotaTopology``/``TopologyStacks`` already put on its constructs (recorded in the manifest
under ``CHECKED_METADATA``) are not reported a second time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import jsii
from aws_cdk import (
    IPolicyValidationContext,
    IPolicyValidationPlugin,
    PolicyValidationPluginReport,
    PolicyViolatingResource,
    PolicyViolation,
    Validations,
)

from policy_engine.analysis.checks import check_topology
from policy_engine.analysis.rules import REGISTRY
from policy_engine.analysis.rules.objects import locate
from policy_engine.foundation import model as m
from policy_engine.foundation.diagnostics import LoadError, Problem
from policy_engine.foundation.findings import Finding, Severity
from policy_engine.inputs.template import ObjectKey, Origin, read_templates, topology_of

#: Manifest metadata a ``QuotaTopology`` records: the keys (``finding_key``) of the findings it reported itself.
CHECKED_METADATA = "batch-quota:checked-findings"
_LOGICAL_ID = "aws:cdk:logicalId"


def _installed_version() -> str:
    try:
        return metadata.version("batch-quota")
    except metadata.PackageNotFoundError:  # run from a source tree
        return "0.0.0"


_VERSION = _installed_version()


def finding_key(finding: Finding) -> str:
    """What makes two findings the same one (the message before any ``[named at deploy: ...]`` mark)."""
    return f"{finding.rule}|{finding.object}|{finding.rule_message}"


@dataclass(frozen=True)
class _Acknowledgement:
    """A ``Validations.of(construct).acknowledge(...)`` of one of this plugin's rules, at a construct path."""

    rule: str
    path: str
    reason: str


@dataclass
class _Assembly:
    """What the manifests say: each resource's construct path, the acknowledgements, the findings already reported."""

    paths: dict[tuple[str, str], str]  # (template path, logical id) -> construct path
    acknowledgements: list[_Acknowledgement]
    checked: set[str]


def _read_assembly(template_paths: Iterable[str], namespace: str) -> _Assembly:
    assembly = _Assembly({}, [], set())
    by_file: dict[str, str] = {Path(path).name: path for path in template_paths}
    for directory in sorted({str(Path(path).parent) for path in template_paths}):
        manifest = json.loads((Path(directory) / "manifest.json").read_text())
        for artifact in manifest.get("artifacts", {}).values():
            template = by_file.get((artifact.get("properties") or {}).get("templateFile", ""))
            metadata = dict(artifact.get("metadata") or {})
            if artifact.get("additionalMetadataFile"):  # CDK writes a stack's metadata there when it is large
                metadata.update(json.loads((Path(directory) / artifact["additionalMetadataFile"]).read_text()))
            for path, entries in metadata.items():
                construct = path.lstrip("/")
                for entry in entries:
                    kind, data = entry.get("type"), entry.get("data")
                    if kind == _LOGICAL_ID and template is not None and isinstance(data, str):
                        assembly.paths[(template, data)] = construct
                    elif kind == Validations.ACKNOWLEDGED_RULES_METADATA_KEY and isinstance(data, dict):
                        for rule_id, reason in data.items():
                            prefix, _, rule = rule_id.partition("::")
                            if prefix == namespace and rule:
                                assembly.acknowledgements.append(_Acknowledgement(rule, construct, str(reason)))
                    elif kind == CHECKED_METADATA and isinstance(data, list):
                        assembly.checked.update(str(key) for key in data)
    return assembly


def _object_key(topology: m.Topology, finding: Finding) -> list[ObjectKey]:
    """The objects a finding is about, most specific first (share, queue, environment)."""
    where = locate(topology, finding.object)
    keys: list[ObjectKey] = []
    if where.queue is not None and where.share is not None:
        keys.append(("share", where.queue, where.share))
    if where.queue is not None:
        keys.append(("queue", where.queue))
    if where.environment is not None:
        keys.append(("environment", where.environment))
    return keys


def _covers(acknowledged_at: str, path: str) -> bool:
    return acknowledged_at == "" or path == acknowledged_at or path.startswith(acknowledged_at + "/")


@jsii.implements(IPolicyValidationPlugin)
class BatchQuotaChecks:
    """The policy engine's rules and guarantees on a CDK app's templates (see the module docstring).

    ``strict`` fails synthesis on warnings too; ``guarantees`` are checked against the app's shares
    (``m.Guarantee(share="QUEUE/SHARE", min_capacity=...)``, shares named as the templates name them).
    """

    def __init__(self, *, strict: bool = False, guarantees: Sequence[m.Guarantee] = (),
                 name: str = "batch-quota") -> None:
        self._strict = strict
        self._guarantees = tuple(guarantees)
        self._name = name

    @property
    def name(self) -> str:
        """The report's plugin name; acknowledgements are ``"<name>::BQnnn"``."""
        return self._name

    @property
    def version(self) -> str:
        """The installed batch-quota's version (CDK records it in the report)."""
        return _VERSION

    @property
    def rule_ids(self) -> list[str]:
        return sorted(REGISTRY)

    @property
    def namespace(self) -> str:
        """The prefix of acknowledgement IDs, as CDK derives it from the plugin name."""
        return self._name.replace(" ", "-")

    def validate(self, context: IPolicyValidationContext) -> PolicyValidationPluginReport:
        stacks = list(context.stack_templates)
        paths = [stack.template_path for stack in stacks]
        assembly = _read_assembly(paths, self.namespace)
        templates = [(path, json.loads(Path(path).read_text())) for path in paths]
        fallback = PolicyViolatingResource(locations=[], construct_path=stacks[0].stack_construct_path) \
            if stacks else None
        try:
            read = read_templates(templates)
            topology = topology_of(read, "the CDK app's templates")
            if self._guarantees:
                topology = topology.model_copy(update={"guarantees": self._guarantees})
                topology = m.Topology.model_validate(topology.model_dump())  # the guarantees' references checked
        except LoadError as error:
            return self._report([self._load_violation(problem, fallback) for problem in error.located])
        report = check_topology(topology)
        violations: list[PolicyViolation] = []
        reported: list[tuple[str, str, bool]] = []  # (rule, construct path, suppressible) for BQ003
        for finding in report.findings:
            if finding.suppressed is not None or finding_key(finding) in assembly.checked:
                continue
            origin = next((read.origins[key] for key in _object_key(topology, finding) if key in read.origins), None)
            path = assembly.paths.get((origin.source, origin.logical_id), "") if origin else ""
            severity = self._severity(finding)
            violations.append(self._violation(finding, severity, origin, path, fallback))
            reported.append((finding.rule, path, severity != "fatal"))
        violations += self._acknowledgement_violations(assembly.acknowledgements, reported)
        return self._report(violations)

    def _severity(self, finding: Finding) -> str:
        if finding.severity is Severity.INFO:
            return "info"
        if finding.severity is Severity.WARNING:
            return "error" if self._strict else "warning"
        return "error" if REGISTRY[finding.rule].can_suppress(finding.severity) else "fatal"

    def _violation(self, finding: Finding, severity: str, origin: Origin | None, path: str,
                   fallback: PolicyViolatingResource | None) -> PolicyViolation:
        where = f" (construct {path})" if path else ""
        marked = " (named at deploy: its name here is its logical ID)" if origin and origin.named_at_deploy else ""
        if origin is not None:
            resources = [PolicyViolatingResource(locations=["Properties"], resource_logical_id=origin.logical_id,
                                                 template_path=origin.source)]
        else:
            resources = [fallback] if fallback else []
        return PolicyViolation(
            rule_name=finding.rule,
            description=f"{finding.severity.value} {finding.object}{marked}{where}: {finding.message}",
            fix=finding.hint or None,
            severity=severity,
            violating_resources=resources,
            rule_metadata={"batch-quota severity": finding.severity.value, "object": str(finding.object)},
        )

    def _acknowledgement_violations(self, acknowledgements: Sequence[_Acknowledgement],
                                    reported: Sequence[tuple[str, str, bool]]) -> list[PolicyViolation]:
        """BQ002 for an acknowledgement without a reason; BQ003 for one that matches no finding CDK can hide."""
        out = []
        for ack in acknowledgements:
            resource = PolicyViolatingResource(locations=[], construct_path=ack.path)
            ack_id = f"{self.namespace}::{ack.rule}"
            if not ack.reason.strip():
                out.append(PolicyViolation(
                    rule_name="BQ002", severity="error", violating_resources=[resource],
                    description=f"acknowledgement {ack_id} at {ack.path or '(the app)'} has no reason",
                    fix="say why the finding is accepted, e.g. reason=\"QS2 grows in Q3\""))
                continue
            covered = [suppressible for rule, path, suppressible in reported
                       if rule == ack.rule and _covers(ack.path, path)]
            if any(covered):
                continue
            why = (f"{ack.rule} is fatal here (an AWS limit: the deploy would fail), which no acknowledgement hides"
                   if covered else f"{ack.rule} finds nothing on this construct or below it")
            out.append(PolicyViolation(
                rule_name="BQ003", severity="error" if self._strict else "warning", violating_resources=[resource],
                description=f"acknowledgement {ack_id} at {ack.path or '(the app)'} suppresses nothing: {why}",
                fix="fix what the finding says" if covered else "remove the acknowledgement"))
        return out

    def _load_violation(self, problem: Problem | str, fallback: PolicyViolatingResource | None) -> PolicyViolation:
        """A template the reader cannot read: nothing is checked, and synthesis says why (an error: never a pass).
        A problem the reader placed under ``Resources.<logical id>`` names that resource."""
        resource = fallback
        if isinstance(problem, Problem) and len(problem.path) > 1 and problem.path[0] == "Resources":
            resource = PolicyViolatingResource(locations=["Properties"], resource_logical_id=str(problem.path[1]),
                                               template_path=problem.source)
        return PolicyViolation(rule_name="BQ001", severity="error", violating_resources=[resource] if resource else [],
                               description=f"not checked: {problem}",
                               fix="give the quota resources values known at synth (see docs/templates.md)")

    def _report(self, violations: list[PolicyViolation]) -> PolicyValidationPluginReport:
        failing = any(v.severity in ("error", "fatal") for v in violations)
        return PolicyValidationPluginReport(success=not failing, violations=violations,
                                            plugin_version=self.version)


def checked_metadata(findings: Iterable[Finding]) -> list[str]:
    """The ``CHECKED_METADATA`` a topology records for the findings it reports itself."""
    return sorted({finding_key(finding) for finding in findings})
