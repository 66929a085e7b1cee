"""A simulation that starts from live jobs: placed at time 0, invariants checked first, bad rows named."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs.examples import example_topology
from policy_engine.inputs.loading import LoadError
from policy_engine.simulation.core.engine import Engine, SimulationSettings
from policy_engine.simulation.core.jobs import JobSpec, LiveState, Status
from policy_engine.simulation.live import LiveStateError
from policy_engine.simulation.results.records import simulate
from policy_engine.simulation.scenarios.workload import load_scenario

G5 = "ml.g5.xlarge"


def spec(name: str, share: str, priority: int = 0, duration: float = 100) -> JobSpec:
    return JobSpec(name, f"training/{share}", G5, 1, priority, 0, duration)


def test_running_jobs_finish_after_their_remaining_work():
    jobs = [spec("a", "QS1", duration=1000), spec("b", "QS2", duration=50)]
    live = {"a": LiveState(Status.RUNNING, -900, 100.0)}
    result = simulate(example_topology(), jobs, live=live)
    a, b = result.job("a"), result.job("b")
    assert (a.started_at, a.finished_at, a.status, a.wait_seconds) == (-900, 100, "SUCCEEDED", 0)
    assert (b.started_at, b.finished_at) == (0, 50)


def test_scheduled_and_starting_jobs_go_through_the_startup_delay():
    jobs = [spec("s", "QS1"), spec("t", "QS2")]
    live = {"s": LiveState(Status.SCHEDULED, -5, 100.0), "t": LiveState(Status.STARTING, -5, 100.0)}
    result = simulate(example_topology(), jobs, settings=SimulationSettings(startup_delay=30), live=live)
    assert result.job("s").started_at == 30 and result.job("s").finished_at == 130
    assert result.job("t").started_at == 30


def test_a_live_job_is_a_reclaim_victim_from_the_first_instant():
    jobs = [spec("own", "QS1", 3), spec("borrowed", "QS1", 2), spec("lender", "QS2", 1)]
    live = {"own": LiveState(Status.RUNNING, -60, 500.0), "borrowed": LiveState(Status.RUNNING, -30, 500.0)}
    result = simulate(example_topology(), jobs, live=live, until=0)
    assert result.job("lender").status == "RUNNING"
    assert result.job("borrowed").status == "RUNNABLE" and result.job("borrowed").preemptions == 1
    assert result.job("own").status == "RUNNING"


def test_a_snapshot_above_the_environment_is_reported_not_fixed():
    topology = example_topology()
    cut = topology.model_copy(update={"service_environments": (
        topology.service_environments[0].model_copy(update={"capacity": {G5: 1}}),)})
    jobs = [spec("a", "QS1"), spec("b", "QS2")]
    live = {name: LiveState(Status.RUNNING, -10, 50.0) for name in ("a", "b")}
    with pytest.raises(LiveStateError) as error:
        Engine(cut, jobs, live=live)
    assert error.value.problems == [
        "2 ml.g5.xlarge on capacity, above the service environment's 1 (capacity cut below what runs?)"]


def test_a_reserve_share_above_its_limit_is_reported():
    jobs = [spec("r1", "QS3"), spec("r2", "QS3")]
    live = {name: LiveState(Status.RUNNING, -10, 50.0) for name in ("r1", "r2")}
    with pytest.raises(LiveStateError) as error:
        Engine(example_topology(), jobs, live=live)
    assert error.value.problems == ["training/QS3 uses 2 ml.g5.xlarge, above its limit 1 (RESERVE cannot borrow)"]


SCENARIO = """\
topology:
  service_environments: [{name: env, capacity: {ml.g5.xlarge: 1}}]
  job_queues:
    - name: q
      service_environment: env
      shares: [{name: a, capacity: {ml.g5.xlarge: 1}, strategy: LEND}]
jobs:
"""


def test_the_loader_names_bad_live_rows(write_file):
    path = write_file("s.yaml", SCENARIO + """\
  - {name: j1, share: a, duration: 10, status: RUNNING}
  - {name: j2, share: a, duration: 10, status: RUNNING, started_at: 5, remaining: 20}
  - {name: j3, share: a, duration: 10, started_at: -1}
  - {name: j4, share: a, duration: 10, status: DONE}
""")
    with pytest.raises(LoadError) as error:
        load_scenario(path)
    assert [p.split(": ", 1)[1] for p in error.value.problems] == [
        "jobs[j1].started_at: required for a RUNNING job: when it was placed, in seconds <= 0 (now)",
        "jobs[j1].remaining: required for a RUNNING job: the work seconds it has left",
        "jobs[j2].started_at: must be <= 0 (a RUNNING job was placed before now), got 5",
        "jobs[j2].remaining: must be at most the job's duration (10), got 20",
        "jobs[j3].started_at: only for a job already on capacity (status RUNNING, STARTING, SCHEDULED)",
        "jobs[j4].status: must be one of RUNNING, STARTING, SCHEDULED, SUBMITTED, PENDING, RUNNABLE, got 'DONE'",
    ]


def test_simulate_reports_a_broken_snapshot_with_exit_2(write_file):
    path = write_file("s.yaml", SCENARIO + """\
  - {name: j1, share: a, duration: 10, status: RUNNING, started_at: -1, remaining: 5}
  - {name: j2, share: a, duration: 10, status: RUNNING, started_at: -1, remaining: 5}
""")
    result = CliRunner().invoke(main, ["simulate", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {path}: jobs: 2 ml.g5.xlarge on capacity, above the service environment's 1 "
        "(capacity cut below what runs?)",
        # a LEND share's usage above its own limit is not borrowed capacity (``topology_changes``): one line for it
        f"error: {path}: jobs: q/a uses 2 ml.g5.xlarge, above its limit 1 (LEND cannot borrow)",
    ]
