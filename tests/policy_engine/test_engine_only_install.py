"""The policy engine without the CDK: ``pip install batch-quota`` gives check, simulate and graph; ``[cdk]`` adds
the constructs. Proven in a fresh interpreter where aws_cdk, constructs and jsii cannot be imported."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CDK_PACKAGES = ("aws-cdk-lib", "constructs")

#: ``sys.modules[name] = None`` is how Python says "not installed" to both ``import`` and ``find_spec``.
WITHOUT_CDK = """
import io, runpy, sys
for name in ("aws_cdk", "constructs", "jsii", "cdk_nag"):
    sys.modules[name] = None
from click.testing import CliRunner
from policy_engine.cli.app import main
runner = CliRunner()
for args in (["check"], ["check", "--strict", "--format", "json"], ["simulate", "scenarios/walkthrough.yaml"],
             ["graph"]):
    result = runner.invoke(main, args)
    assert result.exit_code in (0, 1), (args, result.output, result.exception)
    assert result.output.strip(), args
    print("ran", args[0], result.exit_code)
assert not [m for m in sys.modules if m.startswith("quota_constructs")]
try:
    import quota_constructs
except ImportError as error:
    print("constructs:", error)
stderr, sys.stderr = sys.stderr, io.StringIO()
try:
    runpy.run_path("app.py", run_name="__main__")
except SystemExit as exit:
    message, sys.stderr = sys.stderr.getvalue(), stderr
    print("app exit", exit.code, message.strip())
"""


def test_check_simulate_and_graph_run_without_the_cdk_and_the_constructs_say_what_to_install():
    result = subprocess.run([sys.executable, "-c", WITHOUT_CDK], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[1] for line in lines if line.startswith("ran ")] == ["check", "check", "simulate", "graph"]
    assert "constructs: the CDK constructs need aws-cdk-lib and constructs, which are not installed: " \
           "pip install 'batch-quota[cdk]'" in result.stdout
    assert ("app exit 2 error: the CDK app needs aws-cdk-lib and constructs, which are not installed: "
            "pip install 'batch-quota[cdk]'") in result.stdout


def _name(requirement: str) -> str:
    return requirement.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].strip().lower()


def test_the_cdk_is_an_extra_and_botocore_a_runtime_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    assert "botocore" in runtime and runtime.isdisjoint(CDK_PACKAGES)
    assert {_name(r) for r in project["optional-dependencies"]["cdk"]} == set(CDK_PACKAGES)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "pip install --quiet -e '.[cdk,dev]'" in makefile  # make synth / make test still install everything


def test_the_installed_metadata_agrees():
    try:
        installed = requires("batch-quota") or []
    except PackageNotFoundError:  # pragma: no cover - the suite runs from an installed checkout
        pytest.skip("batch-quota is not installed")
    unconditional = {_name(r) for r in installed if "extra ==" not in r}
    assert "botocore" in unconditional and unconditional.isdisjoint(CDK_PACKAGES)
    assert {_name(r) for r in installed if 'extra == "cdk"' in r} == set(CDK_PACKAGES)
