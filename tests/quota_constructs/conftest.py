"""Helpers for construct tests: a fast app, synthesized templates, and cfn-lint as the judge.

The built-in CloudFormation validation costs about 4 s per synthesis; construct tests
turn it off (the app tests keep it on) and run cfn-lint on the templates instead.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from aws_cdk import App
from cfnlint.api import ManualArgs, lint
from cfnlint.core import get_rules

REGION = "us-east-1"
#: The app's context from ``cdk.json``, so tests build under the same feature flags as ``cdk synth``.
CDK_CONTEXT = json.loads((Path(__file__).resolve().parents[2] / "cdk.json").read_text())["context"]


def fast_app() -> App:
    return App(builtin_cloud_formation_validation=False, context=CDK_CONTEXT)


def resources_of(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    """``logical id -> resource`` for every resource of type ``kind``."""
    return {k: v for k, v in template.get("Resources", {}).items() if v["Type"] == kind}


@cache
def _rules():
    """cfn-lint's default rules, loaded once (loading costs ~0.7 s, linting a template ~0.05 s)."""
    return get_rules([], [], [])


def cfn_lint_errors(template: dict[str, Any]) -> list[str]:
    """cfn-lint's error-level and fatal findings (rule IDs ``E...``, ``F...`` such as F0004, > 200 outputs)."""
    matches = lint(json.dumps(template), rules=_rules(), regions=[REGION], config=ManualArgs(regions=[REGION]))
    return [f"{m.rule.id} {m.message} ({'/'.join(map(str, m.path or []))})" for m in matches
            if m.rule.id.startswith(("E", "F"))]
