"""``app.py``, run in-process the way the CDK CLI runs it (context and output directory from the environment)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import App

from policy_engine.analysis.checks import check_topology
from policy_engine.inputs.loading import load_topology

ROOT = Path(__file__).resolve().parents[2]
BROKEN_YAML = """\
service_environments:
  - name: gpu-env
    capacity: {ml.g5.xlarge: 2}
job_queues:
  - name: training
    service_environment: gpu-env
    shares:
      - {name: research, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}
      - {name: product, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
guarantees:
  - {share: training/research, burst_capacity: {ml.g5.xlarge: 2}}
  - {share: training/product, min_capacity: {ml.g5.xlarge: 2}}
"""
PYTHON_TOPOLOGY = """\
from policy_engine.foundation.model import JobQueue, QuotaShare, ServiceEnvironment, Topology

TOPOLOGY = Topology(
    service_environments=(ServiceEnvironment(name="env", capacity={"ml.g5.xlarge": 2}),),
    job_queues=(JobQueue(name="q", service_environment="env", shares=(
        QuotaShare(name="a", capacity={"ml.g5.xlarge": 1}, strategy="LEND"),
        QuotaShare(name="b", capacity={"ml.g5.xlarge": 1}, strategy="LEND"),
    )),),
)
"""


def _load_app():
    spec = importlib.util.spec_from_file_location("batch_quota_cdk_app", ROOT / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def run_app(tmp_path, monkeypatch):
    """Run ``app.main()`` with ``-c`` context; returns the cloud assembly directory."""

    def run(**context: str) -> Path:
        outdir = tmp_path / "cdk.out"
        cdk_json = json.loads((ROOT / "cdk.json").read_text())
        monkeypatch.delenv("CDK_DEFAULT_ACCOUNT", raising=False)
        monkeypatch.delenv("CDK_DEFAULT_REGION", raising=False)
        # The Node kernel's environment is fixed at start-up, so context and outdir go in as App props.
        _load_app().main(App(outdir=str(outdir), context={**cdk_json["context"], **context}))
        return outdir

    return run


def test_cdk_json_runs_the_app_and_makes_default_rule_findings_fatal():
    cdk_json = json.loads((ROOT / "cdk.json").read_text())
    assert cdk_json["app"] == "python3 app.py"
    assert cdk_json["context"]["@aws-cdk/core:validateAgainstDefaultRules"] is True
    assert cdk_json["context"]["@aws-cdk/core:defaultCrossStackReferences"] == "strong"  # exports, no warning
    assert "cdk.out" in cdk_json["watch"]["exclude"]


def test_cdk_json_turns_off_cli_telemetry_and_notices(tmp_path):
    cdk_json = json.loads((ROOT / "cdk.json").read_text())
    assert cdk_json["notices"] is False
    assert cdk_json["context"]["cli-telemetry"] is False
    cli = ROOT / "node_modules" / ".bin" / "cdk"
    env = {k: v for k, v in os.environ.items() if k != "CDK_DISABLE_CLI_TELEMETRY"} | {"HOME": str(tmp_path)}

    def status(cdk_json_text: str) -> str:
        app_dir = tmp_path / f"app{len(cdk_json_text)}"
        app_dir.mkdir()
        (app_dir / "cdk.json").write_text(cdk_json_text)
        result = subprocess.run([str(cli), "cli-telemetry", "--status"], cwd=app_dir, env=env, capture_output=True,
                                text=True, timeout=120)
        return result.stdout + result.stderr

    assert "CLI Telemetry is disabled" in status((ROOT / "cdk.json").read_text())  # as the pinned CLI reads it
    assert "CLI Telemetry is enabled" in status('{"app": "python3 app.py"}')  # the check can tell the difference


def test_readme_says_what_a_first_deploy_needs_and_make_uses_the_lock_file():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for needed in ("AWSServiceRoleForBatch", "iam:CreateServiceLinkedRole", "cdk bootstrap", "sts:AssumeRole"):
        assert needed in readme, needed
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "npm ci " in makefile and "npm install" not in makefile
    assert (ROOT / "package-lock.json").is_file()


def test_no_context_synthesizes_the_embedded_example(run_app):
    outdir = run_app()
    template = json.loads((outdir / "BatchQuota.template.json").read_text())
    kinds = sorted(r["Type"] for r in template["Resources"].values())
    assert kinds == ["AWS::Batch::JobQueue", *["AWS::Batch::QuotaShare"] * 3,
                     "AWS::Batch::SchedulingPolicy", "AWS::Batch::ServiceEnvironment"]
    manifest = json.loads((outdir / "manifest.json").read_text())
    assert manifest["artifacts"]["BatchQuota"]["environment"] == "aws://unknown-account/unknown-region"


def test_python_module_stack_name_and_environment_from_context(run_app, write_file):
    path = write_file("team_topology.py", PYTHON_TOPOLOGY)
    assert check_topology(load_topology(path)).ok
    outdir = run_app(topology=str(path), stack_name="TeamQuota", account="123456789012", region="eu-west-1")
    template = json.loads((outdir / "TeamQuota.template.json").read_text())
    assert sorted(r["Properties"]["QuotaShareName"] for r in template["Resources"].values()
                  if r["Type"] == "AWS::Batch::QuotaShare") == ["a", "b"]
    manifest = json.loads((outdir / "manifest.json").read_text())
    assert manifest["artifacts"]["TeamQuota"]["environment"] == "aws://123456789012/eu-west-1"


def test_bad_input_prints_one_line_per_problem_and_exits_2(run_app, write_file, capsys):
    path = write_file("typo.yaml", BROKEN_YAML.replace("strategy: RESERVE", "stratgy: RESERVE").replace(
        "service_environment: gpu-env", "service_environment: gpu"))
    with pytest.raises(SystemExit) as exit_:
        run_app(topology=str(path))
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert lines and all(line.startswith(f"error: {path}") for line in lines)
    assert any("stratgy" in line and "did you mean 'strategy'" in line for line in lines)
    assert "Traceback" not in err


def test_missing_file_unknown_split_and_bad_stack_name_exit_2(run_app, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        run_app(topology=str(tmp_path / "nope.yaml"))
    assert exit_.value.code == 2 and "cannot read file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        run_app(split="diagonal")
    assert exit_.value.code == 2 and "split = 'diagonal'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        run_app(stack_name="batch_quota")
    assert exit_.value.code == 2 and "stack_name = 'batch_quota' is invalid" in capsys.readouterr().err


def test_broken_guarantees_fail_synth_with_every_finding_and_exit_1(run_app, write_file, capsys):
    path = write_file("broken.yaml", BROKEN_YAML)
    report = check_topology(load_topology(path))
    assert len(report.errors) >= 2
    with pytest.raises(SystemExit) as exit_:
        run_app(topology=str(path))
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    for finding in report.errors:
        assert finding.line() in err
    assert "Traceback" not in err


def test_aws_limit_errors_fail_synth_with_every_finding_and_exit_1(run_app, write_file, capsys):
    text = (BROKEN_YAML.replace("strategy: LEND}", "strategy: LEND, borrow_limit: 50}")
            .replace("name: research", "name: 'research team'").replace("training/research", "training/research team"))
    path = write_file("limits.yaml", text)
    report = check_topology(load_topology(path))
    assert {"BQ101", "BQ111"} <= {f.rule for f in report.errors}
    with pytest.raises(SystemExit) as exit_:
        run_app(topology=str(path))
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert [f.line() for f in report.errors if f.line() not in err] == []
    assert "Traceback" not in err and "is invalid; expected" not in err


def _readme_cdk_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text[text.index("## Deploying with CDK"):text.index("\n## ", text.index("## Deploying with CDK") + 1)]


def test_readme_cdk_section_names_files_that_exist_and_its_python_example_synthesizes(monkeypatch):
    section = _readme_cdk_section()
    paths = set(re.findall(r"topologies/[\w.-]+", section))
    assert paths and all((ROOT / path).is_file() for path in paths), paths
    example = next(block for block in re.findall(r"```python\n(.*?)```", section, re.S) if "TopologyStacks(" in block)
    namespace: dict = {}
    monkeypatch.chdir(ROOT)  # the example's paths are relative to a clone
    exec(compile(example, "README.md", "exec"), namespace)  # the README's own example, as a user would run it
    assert sorted(s.stack_name for s in namespace["app"].synth().stacks) == ["BatchQuota", "Hand", "Teams"]


@pytest.mark.skipif(
    not (ROOT / "node_modules" / ".bin" / "cdk").exists() and not os.environ.get("CI"),
    reason="needs the pinned CDK CLI (make test installs it; under CI a missing CLI fails)",
)
def test_cdk_synth_of_a_file_that_cannot_load_exits_1_as_the_readme_says(tmp_path):
    """The app exits 2, but the CDK CLI reports every failing app as exit 1: the README says so."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    result = subprocess.run(
        ["npx", "--no-install", "cdk", "synth", "-q", "-o", str(tmp_path / "out"), "-c",
         f"topology={tmp_path / 'missing.yaml'}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1
    assert f"error: {tmp_path / 'missing.yaml'}: cannot read file" in result.stderr
    assert "Traceback" not in result.stderr
    assert "`cdk synth` exits 1" in " ".join(_readme_cdk_section().split())


def test_cdk_synth_names_a_file_that_is_not_utf8_and_a_module_that_exits(run_app, tmp_path, write_file, capsys):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"service_environments:\n  - name: caf\xe9\n")
    with pytest.raises(SystemExit) as exit_:
        run_app(topology=str(path))
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {path}: not UTF-8 text (byte 0xE9 at line 2)"]
    module = write_file("exits.py", "import sys\nsys.exit(0)\n")
    with pytest.raises(SystemExit) as exit_:
        run_app(topology=str(module))
    assert exit_.value.code == 2 and "topology module exited" in capsys.readouterr().err


def test_cdk_synth_shows_a_hostile_name_escaped(run_app, write_file, capsys):
    text = (ROOT / "topologies" / "example.yaml").read_text(encoding="utf-8").replace(
        "name: QS1", 'name: "QS1\\e[2J"', 1).replace("share: training/QS1", 'share: "training/QS1\\e[2J"')
    path = write_file("hostile.yaml", text)
    with pytest.raises(SystemExit) as exit_:
        run_app(topology=str(path))
    assert exit_.value.code in (1, 2)
    err = capsys.readouterr().err
    assert "\x1b" not in err and "QS1\\x1b[2J" in err
