"""Importing ``quota_constructs`` on a supported Node prints nothing: jsii's end-of-life banner is silenced for the
supported majors before aws_cdk starts the kernel, unless the user chose otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import quota_constructs

ROOT = Path(__file__).resolve().parents[2]


def _import(code: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter with a minimal environment: no JSII_* variable unless given."""
    node = shutil.which("node")
    assert node, "the CDK needs Node.js on PATH"
    env = {"PATH": os.pathsep.join([str(Path(node).parent), str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
           "HOME": os.environ.get("HOME", "/tmp"), "PYTHONPATH": str(ROOT), **extra}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          cwd=ROOT)


def test_importing_the_constructs_prints_nothing_on_stderr():
    result = _import("import quota_constructs, aws_cdk; aws_cdk.App()")
    assert result.returncode == 0, result.stderr
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    assert node.lstrip("v").split(".")[0] in quota_constructs.SUPPORTED_NODE_MAJORS
    assert result.stderr == ""


def test_a_value_the_user_set_is_kept():
    code = "import os, quota_constructs; print(os.environ['JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION'])"
    assert _import(code, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="18").stdout.strip() == "18"
    assert _import(code).stdout.strip() == "20,22,24"
