"""The endpoint's own history replays exactly: a random client run, ``history --scenario``, ``simulate``.

The endpoint *is* the simulator, so the replay of its history must reproduce every job: the same
status, end time and preemption count. The run has many teams (shares of every strategy),
reclaims and in-share preemptions, priority updates, share and environment updates, a share
created and one deleted, terminations (single and bulk), and jobs still waiting or running at the end.
The hypothesis test drives such runs with calls that share an instant (no clock advance between them, or the
clock advanced exactly onto a running job's end): the replay applies them one by one in call order, as the
endpoint did (``same_instant: one_by_one``, ``after_submissions``), at the instants the endpoint met
(``millisecond_instants``).
"""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.cli.app import main
from policy_engine.inputs.loading import topology_from_data
from tests.policy_engine.adapters.endpoint.random_client import TOPOLOGY, Instants, compare, drive


@pytest.fixture
def served_run(monkeypatch, tmp_path):
    with start_in_thread(Service(Options(speed=0), topology_from_data(TOPOLOGY, "random client"))) as endpoint:
        run = drive(endpoint, seed=7, jobs=125)
        for name in ("AWS_ENDPOINT_URL_BATCH", "AWS_ENDPOINT_URL_CLOUDTRAIL"):
            monkeypatch.setenv(name, endpoint.url)
        for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                            ("AWS_DEFAULT_REGION", "us-east-1")):
            monkeypatch.setenv(name, value)
        history = CliRunner().invoke(main, ["history", "--queue", "training", "--since", "1d",
                                            "-o", str(tmp_path / "jobs.csv"), "--scenario",
                                            str(tmp_path / "replay.yaml")])
        yield run, history, tmp_path


def test_every_job_of_a_random_run_is_exported_and_replays_exactly(served_run):
    run, history, folder = served_run
    assert history.exit_code == 0, history.output
    # the run had what the replay must carry
    for kind in ("UpdateServiceJob", "UpdateQuotaShare", "UpdateServiceEnvironment", "CreateQuotaShare",
                 "TerminateServiceJob", "TerminateServiceJobs"):
        assert run.calls.get(kind, 0) >= 1, run.calls
    with open(folder / "jobs.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    statuses = {row["observed_status"] for row in rows}
    assert {"SUCCEEDED", "FAILED", "RUNNABLE", "RUNNING"} <= statuses  # finished, terminated, unfinished
    assert sum(int(row["observed_preemptions"]) for row in rows) >= 5
    assert rows[0]["submit_at"] == "0" and all(row["submitted_epoch_ms"] for row in rows)
    assert "could not" not in history.stderr and "not exported" not in history.stderr
    replayed = CliRunner().invoke(main, ["simulate", str(folder / "replay.yaml"), "--format", "json"])
    assert replayed.exit_code == 0, replayed.output
    result = json.loads(replayed.stdout)
    exported, agreeing, differences = compare(str(folder / "jobs.csv"), result)
    assert exported == len(run.jobs)
    assert differences == [] and agreeing == exported
    calibration = result["observed_vs_simulated"]
    assert sum(row["agreeing"] for row in calibration) == sum(row["observed_jobs"] for row in calibration) == exported
    text = CliRunner().invoke(main, ["simulate", str(folder / "replay.yaml")]).stdout
    assert "agree" in text


@pytest.fixture(scope="module")
def twin_endpoint():
    with start_in_thread(Service(Options(speed=0), topology_from_data(TOPOLOGY, "random client"))) as endpoint:
        yield endpoint


def replayed_run(endpoint, folder, seed: int, jobs: int, instants: Instants):
    """Drive a random client run on a fresh account, export it with ``history --scenario``, replay it with
    ``simulate``: ``(run, replay.yaml text, exported, agreeing, differences)``."""
    endpoint.load_topology(TOPOLOGY)
    run = drive(endpoint, seed=seed, jobs=jobs, instants=instants)
    environment = {"AWS_ENDPOINT_URL_BATCH": endpoint.url, "AWS_ENDPOINT_URL_CLOUDTRAIL": endpoint.url,
                   "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                   "AWS_DEFAULT_REGION": "us-east-1"}
    history = CliRunner(env=environment).invoke(main, ["history", "--queue", "training", "--since", "1d", "-o",
                                                       str(folder / "jobs.csv"), "--scenario",
                                                       str(folder / "replay.yaml")])
    assert history.exit_code == 0, history.output
    replayed = CliRunner().invoke(main, ["simulate", str(folder / "replay.yaml"), "--format", "json"])
    assert replayed.exit_code == 0, replayed.output
    exported, agreeing, differences = compare(str(folder / "jobs.csv"), json.loads(replayed.stdout))
    return run, (folder / "replay.yaml").read_text(encoding="utf-8"), exported, agreeing, differences


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), same=st.floats(0.2, 0.6), onto_end=st.floats(0.1, 0.4))
def test_random_runs_with_same_instant_calls_replay_exactly(twin_endpoint, tmp_path_factory, seed, same, onto_end):
    folder = tmp_path_factory.mktemp("twin")
    run, scenario, exported, agreeing, differences = replayed_run(twin_endpoint, folder, seed, 30,
                                                                  Instants(same, onto_end))
    assert exported == len(run.jobs)
    # every job: its status, preemption count and end time (to 1 ms) as the endpoint had them
    assert differences == [] and agreeing == exported
    assert "same_instant: one_by_one" in scenario and "millisecond_instants: true" in scenario


def test_calls_that_share_an_instant_are_replayed_in_call_order(twin_endpoint, tmp_path):
    """A run where most calls share an instant carries their order (``after_submissions``) and replays exactly."""
    run, scenario, exported, agreeing, differences = replayed_run(twin_endpoint, tmp_path, 11, 40, Instants(0.6, 0.3))
    assert "after_submissions" in scenario and run.calls.get("UpdateServiceJob", 0) >= 1
    assert differences == [] and agreeing == exported == len(run.jobs)
