"""``GET /_batch-quota/export``: the run so far as a scenario ``simulate`` replays to the same states."""

from __future__ import annotations

import yaml

from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.scenarios.workload import load_scenario
from tests.policy_engine.adapters.endpoint.conftest import client, submit


def test_export_replays_to_the_same_states(walkthrough_endpoint, tmp_path):
    batch = client(walkthrough_endpoint)
    ids = {name: submit(batch, name, "QS1", priority=p, tags={"batch-quota:duration": "500"})
           for name, p in (("high", 3), ("med", 2), ("low", 1))}
    walkthrough_endpoint.advance(100)
    ids["qs2"] = submit(batch, "qs2", "QS2", priority=1)
    walkthrough_endpoint.advance(100)
    batch.update_service_job(jobId=ids["low"], schedulingPriority=4)
    walkthrough_endpoint.advance(50)
    exported = walkthrough_endpoint.export()
    assert exported["time"] == 250
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(exported["scenario"]), encoding="utf-8")
    scenario = load_scenario(path)
    engine = Engine(scenario.topology, scenario.jobs, scenario.updates, scenario.settings)
    engine.run(until=250)
    replayed = {job.name: job.status for job in build_result(engine).jobs}
    served = {name: batch.describe_service_job(jobId=job)["status"] for name, job in ids.items()}
    assert replayed == served
    transitions = [(e["job"], e["from"], e["to"]) for e in exported["events"]]
    assert ("med", "RUNNING", "RUNNABLE") in transitions and ("high", "RUNNING", "RUNNABLE") in transitions
    assert "notReplayed" not in exported
    # `batch-quota simulate` reads it as it is (its --report is tested with the simulator's own scenarios)
    import json

    from click.testing import CliRunner

    from policy_engine.cli.app import main

    result = CliRunner().invoke(main, ["simulate", str(path), "--until", "250", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert {job["name"]: job["status"] for job in json.loads(result.output)["jobs"]} == served


def test_terminations_are_listed_as_not_replayed(walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    job = submit(batch, "gone", "QS1")
    batch.terminate_service_job(jobId=job, reason="why not")
    exported = walkthrough_endpoint.export()
    assert exported["notReplayed"] == [{"at": 0, "terminate": "gone", "reason": "Terminated by user: why not"}]
