"""A template whose queue, environment and policy CloudFormation names at deploy: simulate (text and JSON),
explain and graph say which names are logical IDs, as check, import and drift do."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.app import main

TEMPLATE = Path(__file__).resolve().parents[3] / "data" / "unnamed-template.yaml"


def test_simulate_explain_and_graph_mark_the_names_a_template_leaves_to_deploy(tmp_path: Path):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(f"topology: {TEMPLATE}\njobs:\n  - {{name: a, share: team-a, duration: 60}}\n",
                        encoding="utf-8")
    text = CliRunner().invoke(main, ["simulate", str(scenario)])
    assert text.exit_code == 0, text.output
    assert "named at deploy: service_environments[Env], job_queues[Queue]" in text.output
    document = json.loads(CliRunner().invoke(main, ["simulate", str(scenario), "--format", "json"]).output)
    assert {"service_environments[Env]", "job_queues[Queue]"} <= set(document["named_at_deploy"])
    explained = CliRunner().invoke(main, ["explain", "team-a", str(TEMPLATE)])
    assert "Named at deploy: job_queues[Queue], service_environments[Env]" in explained.output
    drawn = CliRunner().invoke(main, ["graph", str(TEMPLATE)])
    assert "job queue Queue (named at deploy)" in drawn.output
    assert "service environment Env (ml.g5.xlarge: 4) (named at deploy)" in drawn.output
    plain = CliRunner().invoke(main, ["simulate", "scenarios/walkthrough.yaml"])
    assert "named at deploy" not in plain.output
