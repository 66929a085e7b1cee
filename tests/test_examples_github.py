"""The ready-made GitHub workflow and the pre-commit hook: valid, and doing what the README says."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "examples" / "github" / "batch-quota.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
EXAMPLE = ROOT / "topologies" / "example.yaml"


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_workflow_is_valid_against_the_github_workflow_schema():
    result = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                             str(WORKFLOW)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_validation_can_fail(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text(encoding="utf-8").replace("runs-on: ubuntu-latest", "runs_on: ubuntu-latest",
                                                                   1), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                             str(broken)], capture_output=True, text=True, check=False)
    assert result.returncode != 0


def test_workflow_has_every_part_the_readme_promises():
    workflow = _workflow()
    assert workflow[True]["pull_request"]["paths"][0] == "topologies/**"  # YAML reads `on` as True
    jobs = workflow["jobs"]
    assert set(jobs) == {"check-and-diff", "policy-tests", "synth"}
    steps = jobs["check-and-diff"]["steps"]
    text = "\n".join(step.get("run", "") for step in steps)
    assert any(step.get("uses", "").startswith("github/codeql-action/upload-sarif") for step in steps)
    assert "batch-quota check \"$file\" --format sarif" in text
    assert "--format markdown" in text and "<!-- batch-quota-diff:" in text
    assert jobs["check-and-diff"]["permissions"] == {"contents": "read", "security-events": "write",
                                                    "pull-requests": "write"}
    installs = [step["run"] for step in steps if "pip install" in step.get("run", "")]
    assert installs == ["pip install batch-quota"]  # the engine only: no CDK in the check/diff job
    assert "pytest tests/policy" in "\n".join(step.get("run", "") for step in jobs["policy-tests"]["steps"])
    synth = "\n".join(step.get("run", "") for step in jobs["synth"]["steps"])
    assert "cdk synth" in synth and "cfn-lint cdk.out/*.template.json" in synth


def _step(name: str) -> str:
    steps = _workflow()["jobs"]["check-and-diff"]["steps"]
    return next(step["run"] for step in steps if step.get("name") == name)


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
def test_the_diff_step_runs_against_the_base_branch(tmp_path):
    """The step's own shell script, in a repository with a base branch: one comment per topology, a new topology
    diffed against /dev/null, and a failing status when a guarantee is lost."""
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=tmp_path,
                       check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (tmp_path / "topologies").mkdir()
    text = EXAMPLE.read_text(encoding="utf-8")
    (tmp_path / "topologies" / "prod.yaml").write_text(text, encoding="utf-8")
    git("add", ".")
    git("commit", "-q", "-m", "base")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    (tmp_path / "topologies" / "prod.yaml").write_text(text.replace("strategy: LEND\n", "strategy: RESERVE\n"),
                                                       encoding="utf-8")
    (tmp_path / "topologies" / "new.yaml").write_text(text, encoding="utf-8")
    git("add", ".")
    git("commit", "-q", "-m", "head")
    (tmp_path / "changed.txt").write_text("topologies/new.yaml\ntopologies/prod.yaml\n", encoding="utf-8")
    summary, environment = tmp_path / "summary.md", tmp_path / "env.txt"
    env = dict(os.environ, BASE_REF="main", GITHUB_STEP_SUMMARY=str(summary), GITHUB_ENV=str(environment),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(["bash", "-e", "-c", _step("batch-quota diff against the base branch")], cwd=tmp_path, env=env,
                   check=True, capture_output=True)
    prod = (tmp_path / "comments" / "topologies_prod.yaml.md").read_text(encoding="utf-8")
    assert prod.startswith("<!-- batch-quota-diff:topologies/prod.yaml -->")
    assert "`origin/main:topologies/prod.yaml` → `topologies/prod.yaml`" in prod and "Guarantees lost (1)" in prod
    new = (tmp_path / "comments" / "topologies_new.yaml.md").read_text(encoding="utf-8")
    assert "`/dev/null` → `topologies/new.yaml`" in new
    assert "diff_status=1" in environment.read_text(encoding="utf-8")
    assert "batch-quota diff" in summary.read_text(encoding="utf-8")


def test_pre_commit_manifest_is_valid_and_its_entry_checks_files(tmp_path, capsys):
    from pre_commit.clientlib import load_manifest

    [hook] = load_manifest(str(HOOKS))
    assert hook["id"] == "batch-quota-check" and hook["language"] == "python"
    assert hook["entry"] == "python -m policy_engine.cli.precommit"
    from policy_engine.cli.precommit import main

    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text(encoding="utf-8").replace("capacity: {ml.g5.xlarge: 3}",
                                                               "capacity: {ml.g5.xlarge: 2}"), encoding="utf-8")
    broken = tmp_path / "broken.yaml"
    broken.write_text("job_queues: [\n", encoding="utf-8")
    assert main([str(EXAMPLE)]) == 0
    assert main([str(EXAMPLE), str(bad)]) == 1
    assert main([str(bad), str(broken)]) == 2
    captured = capsys.readouterr()
    assert f"{bad}: BQ201 error" in captured.out and "YAML syntax error" in captured.err
