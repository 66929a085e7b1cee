"""``check``'s view: the verdict and its counts, the findings (by severity, suppressed ones apart) and the
per-share summary grouped by job queue, read once from the ``CheckReport`` for every format. The machine formats'
documents (``check --format json``'s keys, the SARIF log with the rule registry and each finding's line) are read
from the domain here too, so the formats only write them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from policy_engine.analysis.checks import CheckReport
from policy_engine.analysis.rules import Rule, all_rules
from policy_engine.analysis.rules.base import catalogue_url
from policy_engine.analysis.rules.objects import object_path
from policy_engine.foundation.diagnostics import ObjectRef, Problem, line_of
from policy_engine.foundation.findings import Finding, Severity, finding_to_dict
from policy_engine.foundation.model import Topology
from policy_engine.reports.kit.subjects import CheckLoadFailure, CheckOutput

__all__ = ["LOAD_RULE", "SCHEMA", "CheckLoadFailure", "CheckOutput", "CheckReport", "CheckView", "FindingRow",
           "Problem", "ShareRow", "Topology", "build", "document", "load_failure_document", "report_view",
           "sarif_load_failure_log", "sarif_log"]


@dataclass(frozen=True)
class FindingRow:
    """A finding as every report names it: its severity's word (``error``, ``warning``, ``info``), the object as
    text, and the suppression's reason (``None``: not suppressed)."""

    rule: str
    severity: str
    object: str
    message: str
    hint: str
    suppressed: str | None


@dataclass(frozen=True)
class ShareRow:
    """A share's summary: its name within its queue, and who may preempt whom (as a whole and per instance type)."""

    queue: str
    name: str
    strategy: str
    limit: Mapping[str, int]
    guaranteed: Mapping[str, int]
    max_burst: Mapping[str, int]
    preempted_by: tuple[str, ...]
    may_preempt: tuple[str, ...]
    preempted_by_type: Mapping[str, tuple[str, ...]]
    may_preempt_type: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class CheckView:
    source: str
    strict: bool
    passed: bool  # the exit code's verdict: no unsuppressed error (with ``strict``, no unsuppressed warning)
    errors: tuple[FindingRow, ...]
    warnings: tuple[FindingRow, ...]
    notes: tuple[FindingRow, ...]  # ``info`` findings: a choice worth knowing, never failing anything
    suppressed: tuple[FindingRow, ...]
    findings: tuple[FindingRow, ...]  # every one, in the report's order
    shares: int
    proven: int
    declared: int  # declared guarantees (0: the verdict does not mention them)
    queues: tuple[tuple[str, tuple[ShareRow, ...]], ...]  # job queue -> its shares, in the report's order


def _row(finding: Finding) -> FindingRow:
    return FindingRow(finding.rule, finding.severity.value, str(finding.object), finding.message, finding.hint,
                      finding.suppressed)


def report_view(report: CheckReport, *, source: str = "", strict: bool = False,
                declared_guarantees: int = 0) -> CheckView:
    """The view of a report; ``declared_guarantees``: how many the topology declares."""
    queues: dict[str, list[ShareRow]] = {}
    for summary in report.summaries.values():
        queue, _, name = summary.share.partition("/")
        queues.setdefault(queue, []).append(ShareRow(
            queue, name, summary.strategy, summary.limit, summary.guaranteed, summary.max_burst, summary.preempted_by,
            summary.may_preempt, summary.preempted_by_type, summary.may_preempt_type))
    proven, declared = report.guarantees_proven(declared_guarantees)
    return CheckView(source, strict, report.passes(strict), tuple(map(_row, report.errors)),
                     tuple(map(_row, report.warnings)), tuple(map(_row, report.notes)),
                     tuple(map(_row, report.suppressed)),
                     tuple(map(_row, report.findings)), len(report.summaries), proven, declared,
                     tuple((queue, tuple(rows)) for queue, rows in queues.items()))


def build(output: CheckOutput) -> CheckView:
    return report_view(output.report, source=output.source, strict=output.strict,
                       declared_guarantees=len(output.topology.guarantees))


# --- check --format json -------------------------------------------------------------------------------------


def document(report: CheckReport, *, source: str = "", strict: bool = False, declared_guarantees: int = 0
             ) -> dict[str, Any]:
    """``ok`` is the exit code's verdict: no unsuppressed error (and, with ``strict``, no unsuppressed warning);
    ``guarantees``: how many the topology declares and how many were proven."""
    proven, declared = report.guarantees_proven(declared_guarantees)
    return {
        "source": source,
        "ok": report.passes(strict),
        "strict": strict,
        "loaded": True,
        "load_errors": [],
        "errors": len(report.errors),
        "warnings": len(report.warnings),
        "notes": len(report.notes),
        "suppressed": len(report.suppressed),
        "guarantees": {"declared": declared, "proven": proven},
        "findings": [finding_to_dict(f) for f in report.findings],
        "summaries": {name: summary.to_dict() for name, summary in report.summaries.items()},
    }


def load_failure_document(problems: list[str], *, source: str = "") -> dict[str, Any]:
    """The object for a file that cannot be loaded (exit 2): same keys as :func:`document`, no rule ran."""
    return {
        "source": source,
        "ok": False,
        "strict": False,
        "loaded": False,
        "load_errors": list(problems),
        "errors": len(problems),
        "warnings": 0,
        "suppressed": 0,
        "guarantees": {"declared": 0, "proven": 0},
        "findings": [],
        "summaries": {},
    }


# --- check --format sarif ------------------------------------------------------------------------------------

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}

#: The pseudo-rule of load problems (exit 2): not a check rule, so not in the registry or the catalogue.
LOAD_RULE = {
    "id": "BQ000",
    "name": "TopologyLoads",
    "shortDescription": {"text": "The topology file loads"},
    "fullDescription": {"text": "The file must parse and match the topology schema (known keys, right types, "
                                "unique names, resolved references) before any rule can run."},
    "helpUri": catalogue_url("BQ000"),
    "defaultConfiguration": {"level": "error"},
    "properties": {"family": "Loading"},
}


def _tool_version() -> str:
    try:
        return version("batch-quota")
    except PackageNotFoundError:
        return "0"


def _rule_name(rule: Rule) -> str:
    return "".join(part.capitalize() for part in rule.function.__name__.split("_"))


def _driver_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": _rule_name(rule),
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": " ".join(rule.description.split())},
        "helpUri": rule.source_url,
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"family": rule.family},
    }


def _line(topology: Topology | None, lines: Mapping[tuple[str | int, ...], int], ref: ObjectRef) -> int | None:
    if topology is None or not lines:
        return None
    return line_of(lines, object_path(topology, ref))


def sarif_log(report: CheckReport, *, uri: str, topology: Topology | None = None,
              lines: Mapping[tuple[str | int, ...], int] | None = None) -> dict[str, Any]:
    """The SARIF log; ``uri`` names the topology file (relative to the repository root, posix style)."""
    rules = all_rules()
    index = {rule.id: position for position, rule in enumerate(rules)}
    results = []
    for finding in report.findings:
        region_line = _line(topology, lines or {}, finding.object)
        physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
        if region_line:
            physical["region"] = {"startLine": region_line}
        message = finding.message + (f" Fix: {finding.hint}." if finding.hint else "")
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "level": _LEVEL[finding.severity],
            "message": {"text": f"{finding.object}: {message}"},
            "locations": [{
                "physicalLocation": physical,
                "logicalLocations": [{"fullyQualifiedName": str(finding.object)}],
            }],
        }
        if finding.rule in index:
            result["ruleIndex"] = index[finding.rule]
        if finding.counterexample is not None:
            result["properties"] = {"counterexample": finding.counterexample}
        if finding.suppressed is not None:  # in the topology file itself: SARIF's "inSource"
            result["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": finding.suppressed}]
        results.append(result)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "batch-quota",
                "version": _tool_version(),
                "rules": [_driver_rule(rule) for rule in rules],
            }},
            "artifacts": [{"location": {"uri": uri}}],
            "results": results,
        }],
    }


def _load_problem(problem: Problem | str, source: str) -> tuple[str, int | None]:
    """A load problem's text without its file (the artifact names it) and its line.

    A ``Problem`` says both; a plain line (from a reader that does not locate its problems yet)
    only loses the leading ``SOURCE: `` and has no line.
    """
    if isinstance(problem, Problem):
        return problem.detail, problem.line
    return problem.removeprefix(f"{source}: "), None


def sarif_load_failure_log(problems: Sequence[Problem | str], *, uri: str, source: str) -> dict[str, Any]:
    """A SARIF log for a file that cannot be loaded: ``executionSuccessful`` false, one error notification
    and one ``BQ000`` result per problem (at its line when the problem names one)."""
    notifications, results = [], []
    for problem in problems:
        text, line = _load_problem(problem, source)
        physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
        if line:
            physical["region"] = {"startLine": line}
        location = {"physicalLocation": physical}
        notifications.append({"level": "error", "message": {"text": text}, "locations": [location]})
        results.append({"ruleId": LOAD_RULE["id"], "ruleIndex": 0, "level": "error",
                        "message": {"text": text}, "locations": [location]})
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "batch-quota", "version": _tool_version(), "rules": [LOAD_RULE]}},
            "invocations": [{"executionSuccessful": False, "toolExecutionNotifications": notifications}],
            "artifacts": [{"location": {"uri": uri}}],
            "results": results,
        }],
    }
