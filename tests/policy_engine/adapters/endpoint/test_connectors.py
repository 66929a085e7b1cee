"""The account connectors (``import``, ``drift``, ``snapshot``) read a served account as they read AWS's."""

from __future__ import annotations

import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs.examples import example_topology
from policy_engine.inputs.loading import load_topology
from tests.policy_engine.adapters.endpoint.conftest import client, submit


def test_import_drift_and_snapshot_against_the_endpoint(walkthrough_endpoint, monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", walkthrough_endpoint.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", walkthrough_endpoint.url)  # its training plans: none here
    runner = CliRunner()
    imported = tmp_path / "account.yaml"
    result = runner.invoke(main, ["import", "-o", str(imported)])
    assert result.exit_code == 0, result.output
    expected = example_topology()
    assert load_topology(imported).job_queues == expected.job_queues
    assert load_topology(imported).service_environments == expected.service_environments
    assert runner.invoke(main, ["drift", str(imported)]).exit_code == 0
    batch = client(walkthrough_endpoint)
    for name, priority in (("high", 3), ("med", 2), ("low", 1)):
        submit(batch, name, "QS1", priority=priority)
    walkthrough_endpoint.advance(100)
    snapshot = tmp_path / "now.yaml"
    result = runner.invoke(main, ["snapshot", "--queue", "training", "-o", str(snapshot)])
    assert result.exit_code == 0, result.output
    jobs = yaml.safe_load(snapshot.read_text())["jobs"]
    assert sorted((job["name"].split("-")[0], job.get("status", "RUNNABLE")) for job in jobs) == [
        ("high", "RUNNING"), ("low", "RUNNABLE"), ("med", "RUNNING")]
