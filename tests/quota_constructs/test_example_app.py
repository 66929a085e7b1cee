"""``examples/hand_built/app.py``, the README's hand-built way: synthesized as is, then broken two ways, as
``cdk synth`` runs it (a subprocess): one line per problem, the right exit code, never a traceback."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import App

from tests.quota_constructs.conftest import CDK_CONTEXT, cfn_lint_errors

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hand_built" / "app.py"


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("example")
    app = App(outdir=str(out), context=CDK_CONTEXT)
    runpy.run_path(str(EXAMPLE), run_name="example")["build"](app)
    app.synth()
    return out


def test_the_example_synthesizes_with_its_acknowledged_warning_only(synthesized):
    (report,) = [r for r in json.loads((synthesized / "validation-report.json").read_text())["pluginReports"]
                 if r["pluginName"] == "batch-quota"]
    assert report["violations"] == []
    (accepted,) = report["suppressedViolations"]
    assert (accepted["ruleName"], accepted["reason"]) == ("BQ302", "interns take whatever is idle at night")
    for stack in ("GpuCapacity", "TrainingQueue"):
        assert cfn_lint_errors(json.loads((synthesized / f"{stack}.template.json").read_text())) == []


def _run(tmp_path: Path, context: dict) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CDK_OUTDIR": str(tmp_path), "CDK_CONTEXT_JSON": json.dumps(context),
           "PYTHONPATH": str(ROOT)}
    env.pop("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", None)  # the example quiets jsii itself
    return subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=600,
                          cwd=ROOT)


def test_an_oversubscribed_environment_fails_synth_with_bq201_on_its_construct(tmp_path):
    result = _run(tmp_path, {"gpus": 32})
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "share limits add up to 40" in line]
    assert "BQ201" in result.stderr and "(construct GpuCapacity/Gpu/Resource)" in line


def test_a_refused_prop_is_one_line_and_exit_2(tmp_path):
    result = _run(tmp_path, {"gpus": -1})
    assert result.returncode == 2
    assert result.stderr.startswith("error: ServiceEnvironment 'gpu': capacity")
    assert len(result.stderr.splitlines()) == 1, result.stderr
