"""The ``simulate`` command as a user runs it (with workloads ``generate`` writes): output shapes, --until,
--events, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.simulation.causes import WAIT_CAUSES

TOPOLOGY = (Path(__file__).parents[4] / "topologies" / "example.yaml").resolve()


def scenario(write_file, body: str, name: str = "scenario.yaml") -> Path:
    (write_file("topology.yaml", TOPOLOGY.read_text(encoding="utf-8")))
    return write_file(name, "topology: topology.yaml\n" + body)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


JOBS = """jobs:
  - {name: a, share: QS1, priority: 3, instance_type: ml.g5.xlarge, instances: 1, submit_at: 0, duration: 100}
  - {name: b, share: training/QS1, priority: 2, submit_at: 0, duration: 100}
  - {name: c, share: QS2, priority: 1, submit_at: 50, duration: 100, preemption_retries: 2}
  - {name: later, share: QS3, submit_at: 500, duration: 10}
actions:
  - {at: 60, update_priority: {job: b, priority: 5}}
"""


def test_json_has_exactly_the_documented_shape(write_file):
    out = invoke("simulate", str(scenario(write_file, JOBS)), "--format", "json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert set(data) == {"time", "jobs", "shares", "summary", "wait_causes", "samples"}
    assert data["samples"] == {"count": 1}  # one workload, labelled (--samples N gives the spread)
    assert set(data["wait_causes"]) == {"attribution", "shares"}
    assert set(data["wait_causes"]["shares"][0]) == {"share", "instance_type", "jobs_waited", "wait_seconds",
                                                     "by_cause", "jobs_by_cause"}
    assert set(data["jobs"][0]) == {"name", "share", "instance_type", "instances", "training_plan", "status",
                                    "preemptions", "reason", "submitted_at", "started_at", "finished_at",
                                    "wait_seconds", "wait_cause"}
    causes = {cause.value for cause in WAIT_CAUSES}
    # a job that waited (wait_seconds: its time RUNNABLE, requeues included) names the cause it waited longest
    # for; one that never waited has null
    assert all(job["wait_cause"] in causes for job in data["jobs"] if job["wait_seconds"] > 0)
    assert all((job["wait_cause"] is None) == (job["wait_seconds"] == 0) for job in data["jobs"])
    assert {job["wait_cause"] for job in data["jobs"]} <= causes | {None}
    assert None in {job["wait_cause"] for job in data["jobs"]}
    plain = json.loads(invoke("simulate", str(scenario(write_file, JOBS)), "--format", "json", "--no-wait-causes")
                       .output)
    assert "wait_cause" not in plain["jobs"][0]
    assert {j["name"]: j["status"] for j in data["jobs"]} == dict.fromkeys("abc", "SUCCEEDED") | {"later": "SUCCEEDED"}
    assert data["summary"]["jobs"] == 4


def _process(*args: str) -> subprocess.CompletedProcess[str]:
    """``batch-quota ARGS`` as its own process (``main()`` reading ``sys.argv``), with an ``atexit`` probe that says
    on stderr whether the interpreter was finalized."""
    code = ("import atexit, sys\natexit.register(lambda: print('finalized', file=sys.stderr))\n"
            "from policy_engine.cli.app import main\nsys.argv = ['batch-quota', *sys.argv[1:]]\nmain()")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


def test_a_one_shot_process_ends_once_its_output_is_out_without_freeing_its_run(write_file):
    """A million-job run's objects freed one by one cost over a second: the ``batch-quota simulate`` process keeps
    them and ends with ``os._exit`` once its output is flushed (no finalization), with the same document and exit
    code as in process; bad input found after the run still exits 2 with its line."""
    path = scenario(write_file, JOBS)
    ran = _process("simulate", str(path), "--format", "json")
    assert ran.returncode == 0, ran.stderr
    assert "finalized" not in ran.stderr
    assert ran.stdout == invoke("simulate", str(path), "--format", "json").output
    # the control: a run on workers (a cluster may hold threads) ends as usual, and the probe says so
    parallel = _process("simulate", str(path), "--format", "json", "--workers", "1")
    assert parallel.returncode == 0 and "finalized" in parallel.stderr
    assert json.loads(parallel.stdout)["summary"] == json.loads(ran.stdout)["summary"]
    # a report path refused after the run was kept: its one line, exit 2, still without finalization
    blocked = write_file("blocked", "a file where the report's folder would go")
    refused = _process("simulate", str(path), "--quiet", "--report", str(blocked / "report"))
    assert refused.returncode == 2 and "cannot write the report" in refused.stderr and "Traceback" not in refused.stderr
    assert "finalized" not in refused.stderr


TWO_TYPES = """\
service_environments:
  - {name: gpu, capacity: {ml.g5.xlarge: 4, ml.p5.48xlarge: 4}}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: vision, capacity: {ml.g5.xlarge: 4, ml.p5.48xlarge: 4}, strategy: RESERVE}
training_plans:
  - name: p5-plan
    instance_type: ml.p5.48xlarge
    reserved_capacities:
      - {instances: 4, start: 0, end: 7200}
"""


def test_each_job_names_its_instance_type_instances_and_training_plan(write_file):
    write_file("topology.yaml", TWO_TYPES)
    path = write_file("scenario.yaml", """topology: topology.yaml
jobs:
  - {name: small, share: vision, instance_type: ml.g5.xlarge, instances: 3, submit_at: 0, duration: 60}
  - {name: planned, share: vision, instance_type: ml.p5.48xlarge, instances: 2, submit_at: 0, duration: 60,
     training_plan: p5-plan}
  - {name: on-demand, share: vision, instance_type: ml.p5.48xlarge, instances: 1, submit_at: 0, duration: 60}
""")
    out = invoke("simulate", str(path), "--format", "json")
    assert out.exit_code == 0, out.output
    jobs = {job["name"]: job for job in json.loads(out.output)["jobs"]}
    assert {name: (job["instance_type"], job["instances"], job["training_plan"]) for name, job in jobs.items()} == {
        "small": ("ml.g5.xlarge", 3, None), "planned": ("ml.p5.48xlarge", 2, "p5-plan"),
        "on-demand": ("ml.p5.48xlarge", 1, None)}


def test_until_reports_that_instant_and_leaves_out_later_submissions(write_file):
    out = invoke("simulate", str(scenario(write_file, JOBS)), "--format", "json", "--until", "50")
    data = json.loads(out.output)
    assert data["time"] == 50
    jobs = {j["name"]: j for j in data["jobs"]}
    assert "later" not in jobs
    # c arrived at 50 and reclaimed QS2's instance from b (borrowed)
    assert jobs["c"]["status"] == "RUNNING" and jobs["b"]["status"] == "RUNNABLE"
    assert jobs["b"]["preemptions"] == 1


@pytest.mark.parametrize(("until", "seconds"), [("2m", 120), ("1h", 3600), ("50", 50), ("0.5d", 43200)])
def test_until_reads_a_duration_as_people_write_it(write_file, until, seconds):
    out = invoke("simulate", str(scenario(write_file, JOBS)), "--format", "json", "--until", until)
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["time"] == seconds


@pytest.mark.parametrize(("until", "message"), [("7x", "'7x' is not a duration (30d, 12h, 90m, 3600s or seconds)"),
                                                ("-5", "'-5' is below 0s"), ("nan", "'nan' is not a finite duration")])
def test_until_that_is_not_a_duration_is_refused_exit_2(write_file, until, message):
    out = invoke("simulate", str(scenario(write_file, JOBS)), "--until", until)
    assert out.exit_code == 2 and message in out.output


def test_events_file_has_one_line_per_state_change(write_file, tmp_path):
    events = tmp_path / "events.jsonl"
    out = invoke("simulate", str(scenario(write_file, JOBS)), "--events", str(events), "--quiet")
    assert out.exit_code == 0, out.output
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert all(set(line) == {"time", "job", "from", "to", "reason"} for line in lines)
    path = [(e["from"], e["to"]) for e in lines if e["job"] == "later"]
    assert path == [("", "SUBMITTED"), ("SUBMITTED", "RUNNABLE"), ("RUNNABLE", "SCHEDULED"),
                    ("SCHEDULED", "STARTING"), ("STARTING", "RUNNING"), ("RUNNING", "SUCCEEDED")]
    # b borrowed QS2's instance until c reclaimed it at 50; at 60 b, raised to 5, preempted a inside QS1
    preempted = [(e["time"], e["job"]) for e in lines if e["from"] == "RUNNING" and e["to"] == "RUNNABLE"]
    assert preempted == [(50, "b"), (60, "a")]
    assert [e["time"] for e in lines] == sorted(e["time"] for e in lines)


def test_text_report_names_jobs_and_shares(write_file):
    out = invoke("simulate", str(scenario(write_file, JOBS)), "--until", "50")
    assert out.exit_code == 0
    assert "training/QS1" in out.output and "utilisation ml.g5.xlarge 66.7%" in out.output
    assert "cluster utilisation" not in out.output  # never one figure across instance types


BAD = """jobs:
  - {name: a, share: QS9, duration: 10}
  - {name: b, share: QS1, priority: 10000, duration: 10}
  - {name: c, share: QS1, instance_type: ml.p5.48xlarge, duration: 10}
  - {name: d, share: QS1, submit_at: -5, duration: 10}
  - {name: e, share: QS1, duration: 10, submit_at: 100}
  - {name: e, share: QS1, duration: 10}
  - {name: f, share: QS1, duraton: 10}
actions:
  - {at: 50, update_priority: {job: e, priority: 2}}
  - {at: 60, update_priority: {job: nobody, priority: 2}}
"""


def test_bad_scenario_reports_one_line_per_problem_and_exits_2(write_file):
    path = scenario(write_file, BAD)
    out = invoke("simulate", str(path))
    assert out.exit_code == 2
    lines = [line for line in out.output.splitlines() if line.startswith("error:")]
    expected = [
        ":3: jobs[a].share: no quota share 'QS9'",
        ":4: jobs[b].priority: must be at most 9999, got 10000",
        ":5: jobs[c].instance_type: share training/QS1 has no capacity for 'ml.p5.48xlarge'",
        ":6: jobs[d].submit_at: must be at least 0, got -5",
        ":8: jobs[e].name: duplicate job name 'e'",
        ":9: jobs[f]: unknown key 'duraton' (did you mean 'duration'?)",
        ":9: jobs[f].duration: missing required field",
        ":11: actions[0].at: update at 50 is before job 'e' is submitted (at 100)",
        ":12: actions[1].update_priority.job: no job named 'nobody'",
    ]
    assert len(lines) == len(expected), lines
    for line, fragment in zip(lines, expected, strict=True):
        assert str(path) in line and fragment in line, (line, fragment)
    assert "Traceback" not in out.output


def test_bad_inline_topology_and_settings_are_reported(write_file):
    path = write_file("s.yaml", """topology:
  service_environments: [{name: env, capacity: {ml.g5.xlarge: 1}}]
  job_queues: [{name: q, service_environment: env, shares: [{name: A, capacity: {ml.g5.xlarge: 1}, stratgy: LEND}]}]
settings: {victim_policy: random, startup_delay: -1, min_runtime: -1}
jobs: []
""")
    out = invoke("simulate", str(path))
    assert out.exit_code == 2
    assert "unknown key 'stratgy' (did you mean 'strategy'?)" in out.output
    assert "settings.victim_policy: unknown victim policy 'random'" in out.output
    assert "settings.startup_delay: must be a number of seconds >= 0, got -1" in out.output
    assert "settings.min_runtime: must be a number of seconds >= 0, got -1" in out.output


def test_missing_file_and_bad_job_file_exit_2(write_file, tmp_path):
    assert invoke("simulate", str(tmp_path / "nope.yaml")).exit_code == 2
    write_file("jobs.csv", "name,share,duration\nx,QS1,ten\n")
    out = invoke("simulate", str(scenario(write_file, "jobs: jobs.csv\n")))
    assert out.exit_code == 2
    assert "jobs.csv:2: jobs[x].duration: must be a number, got 'ten'" in out.output


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_generate_writes_a_workload_that_simulates_deterministically(tmp_path, suffix):
    jobs, scen = tmp_path / f"jobs.{suffix}", tmp_path / "gen.yaml"
    args = ["generate", str(TOPOLOGY), "-o", str(jobs), "--jobs", "300", "--rate", "30", "--sizes", "1:0.8,2:0.2",
            "--priorities", "1:0.7,5:0.3", "--share-priorities", "QS1=9:1", "--seed", "3", "--scenario", str(scen)]
    out = invoke(*args)
    assert out.exit_code == 0
    # QS2 and QS3 can never run a two-instance job: they get one-instance jobs only, and the user is told
    for name in ("QS2", "QS3"):
        assert (f"note: --sizes: training/{name} ml.g5.xlarge: can reach at most 1 instance(s); "
                "only size(s) 1 are drawn for it") in out.output
    first = jobs.read_text()
    assert invoke(*args).exit_code == 0
    assert jobs.read_text() == first  # same seed, same file
    runs = [invoke("simulate", str(scen), "--format", "json") for _ in range(2)]
    assert runs[0].exit_code == 0, runs[0].output
    assert runs[0].output == runs[1].output
    data = json.loads(runs[0].output)
    assert data["summary"]["jobs"] == 300
    assert data["summary"]["by_status"] == {"SUCCEEDED": 300}  # no misconfigured job blocks a line
    rows = jobs.read_text().splitlines()
    assert any("QS1" in row for row in rows)
    for row in rows:
        if "training/QS1" in row:
            assert ('"priority": 9' in row) if suffix == "jsonl" else (",9," in row)


def test_generate_rejects_bad_mixes(tmp_path):
    out = invoke("generate", "-o", str(tmp_path / "x.txt"), "--sizes", "0:1", "--priorities", "a:b")
    assert out.exit_code == 2
    assert "use a .csv or .jsonl" in out.output and "--sizes: instances must be at least 1" in out.output
    assert "--priorities: 'a:b' is not VALUE:WEIGHT" in out.output


def test_unwritable_outputs_are_one_line_errors(tmp_path, write_file):
    missing = tmp_path / "missing-dir"
    out = invoke("generate", "-o", str(tmp_path / "j.csv"), "--scenario", str(missing / "s.yaml"))
    assert out.exit_code == 2 and f"--scenario {missing / 's.yaml'}: cannot write" in out.output
    out = invoke("generate", "-o", str(missing / "j.csv"))
    assert out.exit_code == 2 and "cannot write" in out.output
    out = invoke("simulate", str(scenario(write_file, JOBS)), "--events", str(missing / "e.jsonl"))
    assert out.exit_code == 2 and "cannot write events file" in out.output
    assert "Traceback" not in out.output


def test_until_after_the_end_weights_utilisation_over_zero_to_until_and_says_so(write_file):
    path = scenario(write_file, "jobs:\n  - {name: a, share: QS1, duration: 100}\n")
    full = json.loads(invoke("simulate", str(path), "--format", "json").output)
    late = json.loads(invoke("simulate", str(path), "--format", "json", "--until", "1000").output)
    assert late["time"] == 1000 and late["jobs"][0]["status"] == "SUCCEEDED"  # the state at T (unchanged rule)
    diluted = late["summary"]["cluster_utilisation"]  # [0, 1000] instead of [0, 100]
    assert full["summary"]["cluster_utilisation"] == pytest.approx(10 * diluted, rel=1e-3)
    help_text = " ".join(invoke("simulate", "--help").output.split())
    assert "after the run has ended: utilisation is then time-weighted over [0, DURATION]" in help_text
    docs = " ".join((Path(__file__).parents[4] / "docs" / "simulator.md").read_text(encoding="utf-8").split())
    assert "time-weighted over [0, `T`], idle time after the end included" in docs


def test_text_counts_are_written_one_way_and_an_empty_workload_has_no_empty_parentheses(write_file, tmp_path):
    empty = invoke("simulate", str(scenario(write_file, "jobs: []\n")), "--quiet")
    assert empty.exit_code == 0
    assert "t=0s: 0 job(s); 0 preemption(s)" in empty.output and "()" not in empty.output
    jobs = tmp_path / "j.csv"
    out = invoke("generate", str(TOPOLOGY), "-o", str(jobs), "--jobs", "1200", "--rate", "3600",
                 "--duration-mean", "1")
    assert out.output.startswith("wrote 1,200 job(s) to ")
    (tmp_path / "big.yaml").write_text(f"topology: {TOPOLOGY.as_posix()}\njobs: j.csv\n", encoding="utf-8")
    out = invoke("simulate", str(tmp_path / "big.yaml"), "--quiet")
    assert "1,200 job(s) (use --format json for each job)" in out.output
    assert "s: 1,200 job(s) (1,200 SUCCEEDED); " in out.output


def test_a_time_limit_action_aws_refuses_is_named_on_stderr_and_never_fires(tmp_path):
    text = (Path(__file__).resolve().parents[4] / "scenarios" / "blocked-head.yaml").read_text(encoding="utf-8")
    path = tmp_path / "free-text.yaml"
    path.write_text(text.replace("MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED", "stuck at head"), encoding="utf-8")
    result = CliRunner().invoke(main, ["simulate", str(path), "--format", "json"])
    assert result.exit_code == 0
    assert ("warning: job_queues[training]: job_state_time_limit_actions[0].reason 'stuck at head' is not a status "
            "reason AWS accepts; the simulator never fires it") in result.stderr
    jobs = {job["name"]: job for job in json.loads(result.stdout)["jobs"]}
    assert jobs["too-big"]["status"] == "RUNNABLE"  # no action matches its reason
