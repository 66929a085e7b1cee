"""SARIF 2.1.0 output of ``batch-quota check --format sarif``, for code-scanning annotations on pull requests.

``tool.driver.rules`` comes from the rule registry, so every ``ruleId`` in the results resolves;
each result points at the topology file, at the line of the object when the file is YAML.
A file that cannot be loaded still gets a log (``load_failure_to_dict``): an upload step in CI
then shows the load problems instead of failing on an empty file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TextIO

import click

from policy_engine.analysis.checks import CheckReport
from policy_engine.analysis.rules import Rule, all_rules
from policy_engine.analysis.rules.base import catalogue_url
from policy_engine.analysis.rules.objects import object_path
from policy_engine.foundation.diagnostics import ObjectRef, Problem, line_of
from policy_engine.foundation.findings import Severity
from policy_engine.foundation.model import Topology
from policy_engine.reports.kit.subjects import CheckLoadFailure, CheckOutput

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


def _line(topology: Topology | None, lines: Mapping[tuple, int], ref: ObjectRef) -> int | None:
    if topology is None or not lines:
        return None
    return line_of(lines, object_path(topology, ref))


def to_dict(report: CheckReport, *, uri: str, topology: Topology | None = None,
            lines: Mapping[tuple, int] | None = None) -> dict[str, Any]:
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


def load_failure_to_dict(problems: Sequence[Problem | str], *, uri: str, source: str) -> dict[str, Any]:
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


def render(report: CheckReport, *, uri: str, topology: Topology | None = None,
           lines: Mapping[tuple, int] | None = None) -> str:
    return json.dumps(to_dict(report, uri=uri, topology=topology, lines=lines), indent=2, allow_nan=False)


def write(output: CheckOutput, stream: TextIO) -> None:
    click.echo(render(output.report, uri=output.uri(), topology=output.topology, lines=output.lines()), file=stream)


def write_load_failure(failure: CheckLoadFailure, stream: TextIO) -> None:
    log = load_failure_to_dict(failure.error.located, uri=failure.uri(), source=failure.source)
    click.echo(json.dumps(log, indent=2, allow_nan=False), file=stream)
