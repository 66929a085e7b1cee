"""SARIF 2.1.0 output of ``batch-quota check --format sarif``, for code-scanning annotations on pull requests.

``tool.driver.rules`` comes from the rule registry, so every ``ruleId`` in the results resolves;
each result points at the topology file, at the line of the object when the file is YAML.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from policy_engine.checks import CheckReport
from policy_engine.findings import Severity
from policy_engine.model import Topology
from policy_engine.rules import Rule, all_rules
from policy_engine.rules.objects import object_path

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning"}


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
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"family": rule.family},
    }


def _line(topology: Topology | None, lines: Mapping[tuple, int], name: str) -> int | None:
    if topology is None or not lines:
        return None
    path = object_path(topology, name)
    return next((lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in lines), None)


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
                "logicalLocations": [{"fullyQualifiedName": finding.object}],
            }],
        }
        if finding.rule in index:
            result["ruleIndex"] = index[finding.rule]
        if finding.counterexample is not None:
            result["properties"] = {"counterexample": finding.counterexample}
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


def render(report: CheckReport, *, uri: str, topology: Topology | None = None,
           lines: Mapping[tuple, int] | None = None) -> str:
    return json.dumps(to_dict(report, uri=uri, topology=topology, lines=lines), indent=2)
