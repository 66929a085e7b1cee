"""``terminate_job``, ``create_share`` and ``delete_share``: the scenario actions a served run's history replays."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs.loading import LoadError
from policy_engine.simulation.results.records import simulate
from policy_engine.simulation.scenarios.workload import load_scenario

TOPOLOGY = """\
topology:
  service_environments: [{name: env, capacity: {ml.g5.xlarge: 4}}]
  job_queues:
    - name: q
      service_environment: env
      shares:
        - {name: A, capacity: {ml.g5.xlarge: 2}, strategy: LEND_AND_BORROW}
        - {name: B, capacity: {ml.g5.xlarge: 2}, strategy: LEND}
"""


def _run(tmp_path, jobs: str, actions: str):
    path = tmp_path / "s.yaml"
    path.write_text(TOPOLOGY + "jobs:\n" + jobs + "actions:\n" + actions)
    scenario = load_scenario(path)
    result = simulate(scenario.topology, scenario.jobs, scenario.updates, scenario.settings)
    return {r.name: (r.status, r.finished_at, r.preemptions, r.reason) for r in result.jobs}


def test_a_terminated_job_fails_at_the_action_and_frees_its_capacity(tmp_path):
    jobs = ("  - {name: a, share: q/A, duration: 100, instances: 4}\n"
            "  - {name: b, share: q/A, duration: 10, submit_at: 5, instances: 2}\n")
    out = _run(tmp_path, jobs, "  - {at: 30, terminate_job: {job: a, reason: wrong data}}\n")
    assert out["a"] == ("FAILED", 30, 0, "Terminated by user: wrong data")
    assert out["b"][:2] == ("SUCCEEDED", 40)  # it waited for a's capacity


def test_a_termination_at_the_submission_instant_follows_the_submission(tmp_path):
    jobs = "  - {name: a, share: q/A, duration: 100, submit_at: 10}\n  - {name: b, share: q/A, duration: 5}\n"
    out = _run(tmp_path, jobs, "  - {at: 10, terminate_job: {job: a}}\n")
    assert out["a"][:2] == ("FAILED", 10) and out["a"][3] == "Terminated by user"
    assert out["b"][:2] == ("SUCCEEDED", 5)


def test_a_created_share_holds_nothing_before_and_reclaims_after_its_creation(tmp_path):
    jobs = ("  - {name: a1, share: q/A, duration: 100, instances: 2}\n"
            "  - {name: a2, share: q/A, duration: 100, instances: 2}\n"
            "  - {name: c1, share: q/C, duration: 50, submit_at: 20, instances: 2}\n")
    actions = ("  - {at: 10, create_share: {share: q/C, capacity: {ml.g5.xlarge: 2}, strategy: RESERVE}}\n"
               "  - {at: 200, delete_share: {share: q/C}}\n")
    out = _run(tmp_path, jobs, actions)
    # before 10, A borrows B's idle 2 (C does not exist yet); at 20, C's own 2 take back the borrowed pair
    assert out["c1"][:2] == ("SUCCEEDED", 70)
    assert out["a2"][2] == 1 and out["a1"][2] == 0


def test_a_deleted_share_lends_nothing_after_its_deletion(tmp_path):
    jobs = ("  - {name: a1, share: q/A, duration: 100, instances: 2}\n"
            "  - {name: a2, share: q/A, duration: 100, instances: 2, submit_at: 20}\n")
    out = _run(tmp_path, jobs, "  - {at: 10, delete_share: {share: q/B}}\n")
    assert out["a2"][:2] == ("SUCCEEDED", 200)  # B's 2 are gone: a2 waits for a1


@pytest.mark.parametrize(("action", "message"), [
    ("{at: 1, terminate_job: {job: nobody}}", "actions[0].terminate_job.job: no job named 'nobody' in the workload"),
    ("{at: 1, terminate_job: {job: a, why: x}}", "actions[0].terminate_job: unknown key 'why'"),
    ("{at: 1, create_share: {share: q/A, capacity: {ml.g5.xlarge: 1}, strategy: LEND}}",
     "actions[0].create_share.share: quota share q/A is already in the topology (update_share changes it)"),
    ("{at: 1, create_share: {share: z/C, capacity: {ml.g5.xlarge: 1}, strategy: LEND}}",
     "actions[0].create_share.share: no job queue 'z' in the topology (known: q)"),
    ("{at: 1, create_share: {share: q/C, strategy: LEND}}",
     "actions[0].create_share: missing: capacity (CreateQuotaShare requires them)"),
    ("{at: 1, create_share: {share: q/C, capacity: {ml.p4d.24xlarge: 1}, strategy: LEND}}",
     "actions[0].create_share.capacity.ml.p4d.24xlarge"),
    ("{at: 1, delete_share: {share: q/Z}}", "actions[0].delete_share.share: no quota share 'q/Z'"),
])
def test_broken_actions_are_one_line_each(tmp_path, action, message):
    path = tmp_path / "s.yaml"
    path.write_text(TOPOLOGY + "jobs:\n  - {name: a, share: q/A, duration: 10, submit_at: 0}\nactions:\n  - "
                    + action + "\n")
    with pytest.raises(LoadError) as caught:
        load_scenario(path)
    assert len(caught.value.problems) == 1 and message in caught.value.problems[0], caught.value.problems


def test_the_job_file_carries_submitted_epoch_ms(tmp_path):
    (tmp_path / "jobs.csv").write_text("name,share,duration,submit_at,submitted_epoch_ms\n"
                                       "a,q/A,10,0,1780000000000\nb,q/A,10,5,1780000005000\n")
    path = tmp_path / "s.yaml"
    path.write_text(TOPOLOGY + "jobs: jobs.csv\n")
    assert load_scenario(path).submitted_epoch_ms == {"a": 1780000000000, "b": 1780000005000}
    (tmp_path / "jobs.csv").write_text("name,share,duration,submitted_epoch_ms\na,q/A,10,-3\n")
    result = CliRunner().invoke(main, ["simulate", str(path)])
    assert result.exit_code == 2 and "jobs[a].submitted_epoch_ms: must be at least 0, got -3" in result.stderr
    (tmp_path / "jobs.csv").write_text("name,share,duration,submitted_epoch_ms\na,q/A,10,1780000000000\n")
    assert json.loads(CliRunner().invoke(main, ["simulate", str(path), "--format", "json"]).stdout)["jobs"]
