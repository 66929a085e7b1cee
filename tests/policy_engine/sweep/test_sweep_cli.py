"""``batch-quota sweep`` as a user runs it (in-process): the JSON contract, CSV, text, Parquet and resume."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.reports.sweep.json import run_json
from policy_engine.simulation.scenarios.workload import load_scenario
from policy_engine.sweep import dataset as dataset_module
from policy_engine.sweep.candidate import topology_for, variant
from policy_engine.sweep.cost_metrics import Pricing, RunCosts
from policy_engine.sweep.executor import InProcess
from policy_engine.sweep.grammar import parse_vary
from policy_engine.sweep.grid import expand
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.runner import run_sweep

ROOT = Path(__file__).parents[3]
SCENARIO = str(ROOT / "scenarios" / "borrow-and-reclaim.yaml")
VARY = ("--vary", "training/research.borrow_limit=0,200", "--vary", "training/vision.capacity.ml.p4d.24xlarge=1..3")


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def runs() -> list[dict]:
    result = invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--format", "json", "--quiet")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["runs"]


def test_json_contract_summary_and_shares_are_simulates_for_the_same_topology(runs, tmp_path: Path):
    assert [set(run) for run in runs] == [{"values", "status", "findings", "error", "summary", "shares",
                                                "targets", "costs"}] * 6
    assert [run["values"] for run in runs][:2] == [
        {"training/research.borrow_limit": 0, "training/vision.capacity.ml.p4d.24xlarge": 1},
        {"training/research.borrow_limit": 0, "training/vision.capacity.ml.p4d.24xlarge": 2}]
    scenario = load_scenario(SCENARIO)
    axes = parse_vary(VARY[1::2], scenario.topology)
    for run in (r for r in runs if r["status"] == "ok"):
        topology = topology_for(scenario.topology, axes, run["values"])
        data = yaml.safe_load(Path(SCENARIO).read_text())
        data["topology"] = topology.model_dump(mode="json", exclude_none=True)
        candidate = tmp_path / "candidate.yaml"
        candidate.write_text(yaml.safe_dump(data))
        simulated = json.loads(invoke("simulate", str(candidate), "--format", "json", "--costs").stdout)
        # the time-weighted figures are over the sweep's window (the latest end): simulate's with --until it
        summary = {key: value for key, value in run["summary"].items() if key != "window_seconds"}
        window = run["summary"]["window_seconds"]
        assert window >= simulated["time"]
        until = json.loads(invoke("simulate", str(candidate), "--format", "json", "--until", str(window)).stdout)
        assert summary == until["summary"] and run["shares"] == until["shares"]
        if window == simulated["time"]:
            assert summary == simulated["summary"] and run["shares"] == simulated["shares"]
        # the run's costs are simulate's: the same billed instance-hours per type and quota held per share
        def ledger(costs: dict) -> list:
            return [costs["instance_types"], costs["capacity"]["shares"]]
        assert run["costs"]["unit"] == simulated["costs"]["unit"] == "instance-hours"
        assert ledger(run["costs"]) == ledger(simulated["costs"]) and ledger(run["costs"])
    # capacity 3 for vision oversubscribes the 8 instances: check's error, recorded, not simulated
    invalid = [r for r in runs if r["status"] == "invalid"]
    assert [r["values"]["training/vision.capacity.ml.p4d.24xlarge"] for r in invalid] == [3, 3]
    assert all(r["summary"] == {} and r["shares"] == [] and r["costs"] is None for r in invalid)
    assert all(any(f["rule"] == "BQ201" and f["severity"] == "error" for f in r["findings"]) for r in invalid)


def test_csv_has_a_row_per_run_with_values_and_per_share_columns():
    result = invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--format", "csv", "--quiet")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 6 and [row["status"] for row in rows].count("invalid") == 2
    assert rows[0]["training/research.borrow_limit"] == "0"
    assert "training/research[ml.p4d.24xlarge].wait_p95" in rows[0]


def test_text_ranks_ok_runs_and_explains_invalid_ones():
    result = invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--quiet")
    assert result.exit_code == 0
    assert "Best 4 of 4 run(s) by min max(wait_p95)" in result.stdout
    assert "6 run(s): 2 invalid, 4 ok" in result.stdout
    assert result.stdout.count("invalid  training/research.borrow_limit=") == 2


def test_the_workload_transforms_change_the_replay():
    result = invoke("sweep", SCENARIO, "--vary", "workload.scale=1,2", "--vary", "workload.duration_scale=1,0.5",
                    "--workers", "1", "--format", "json", "--quiet")
    runs = {tuple(r["values"].values()): r["summary"] for r in json.loads(result.stdout)["runs"]}
    assert runs[(1.0, 1.0)] != runs[(2.0, 1.0)] != runs[(1.0, 0.5)]
    scenario = load_scenario(SCENARIO)
    axes = parse_vary(["workload.scale=2", "workload.duration_scale=0.5"], scenario.topology)
    changed = variant(scenario, axes, {"workload.scale": 2.0, "workload.duration_scale": 0.5})
    assert [(j.submit_at, j.duration) for j in changed.jobs] == [(j.submit_at / 2, j.duration / 2)
                                                                 for j in scenario.jobs]
    assert scenario.jobs[2].submit_at == 10  # the shared workload is untouched


def test_parquet_dataset_opens_in_pandas_and_resume_runs_only_what_is_missing(tmp_path: Path, runs):
    out = tmp_path / "results"
    scenario = load_scenario(SCENARIO)
    axes = parse_vary(VARY[1::2], scenario.topology)
    manifest = {"scenario": "s", "scenario_sha256": "x", "vary": [{"path": a.path, "values": list(a.values)}
                                                                    for a in axes]}
    pairs = dataset_module.share_pairs(scenario.topology, axes)
    candidates = list(expand(axes))

    class Interrupted(Exception):
        pass

    def stop_after_three(record: RunRecord) -> None:
        if record.index == 2:
            raise Interrupted

    first = dataset_module.ResultsDataset(out, axes, pairs, manifest, resume=False)
    with pytest.raises(Interrupted):
        run_sweep(scenario, axes, candidates, InProcess(), first, on_result=stop_after_three)
    assert sorted(pd.read_parquet(out)["run"]) == [0, 1, 2]  # what finished was written before the interruption

    with pytest.raises(dataset_module.DatasetError, match="pass --resume"):
        dataset_module.ResultsDataset(out, axes, pairs, manifest, resume=False)
    evaluated = []
    again = dataset_module.ResultsDataset(out, axes, pairs, manifest, resume=True)
    records = run_sweep(scenario, axes, candidates, InProcess(), again,
                        on_result=lambda r: evaluated.append(r.index))
    assert evaluated == [3, 4, 5]  # finished runs are not repeated
    costs = RunCosts(scenario.topology, Pricing())
    assert [run_json(r, costs) for r in records] == runs  # the resumed runs read back exactly
    frame = pd.read_parquet(out)
    assert sorted(frame["run"]) == list(range(6)) and frame["key"].is_unique
    assert frame.loc[frame["run"] == 1, "training/vision.capacity.ml.p4d.24xlarge"].item() == 2
    assert set(frame["status"]) == {"ok", "invalid"}
    assert len(list(out.glob("part-*.parquet"))) == 2


def test_cli_resume_refuses_another_sweep_and_needs_out(tmp_path: Path):
    out = tmp_path / "results"
    assert invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--quiet", "--out", str(out)).exit_code == 0
    again = invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--quiet", "--out", str(out), "--resume",
                   "--format", "json")
    assert again.exit_code == 0 and len(json.loads(again.stdout)["runs"]) == 6
    other = invoke("sweep", SCENARIO, "--vary", "training/research.borrow_limit=0", "--workers", "1", "--quiet",
                   "--out", str(out), "--resume")
    assert other.exit_code == 2 and "other --vary fields or values" in other.stderr
    assert invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--out", str(out)).exit_code == 2
    missing = invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--resume")
    assert missing.exit_code == 2 and missing.stderr.strip() == "error: --resume needs --out DIR: the dataset of " \
                                                              "the sweep to continue"



@pytest.mark.parametrize(("column", "value", "says"), [
    ("status", "done", "run 0 has status 'done', not one of ok, invalid, error: the file was not written by a sweep"),
    ("findings", "not json", "run 0 cannot be read back (JSONDecodeError: Expecting value: line 1 column 1 (char 0)): "
                             "the file was not written by a sweep"),
])
def test_resume_refuses_a_row_no_sweep_wrote_in_one_line(tmp_path: Path, column: str, value: str, says: str):
    import pyarrow.parquet as pq

    out = tmp_path / "results"
    assert invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--quiet", "--out", str(out)).exit_code == 0
    (part,) = out.glob("part-*.parquet")
    table = pq.read_table(part)
    rows = table.to_pylist()
    rows[0][column] = value
    pq.write_table(table.from_pylist(rows, schema=table.schema), part)
    again = invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--quiet", "--out", str(out), "--resume")
    assert again.exit_code == 2 and again.stderr == f"error: {part}: {says}\n"

def test_bad_objective_and_bad_scheduler_are_one_line_exit_2():
    bad = invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--minimize", "max(wait_p96)")
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "did you mean 'wait_p95'?" in bad.stderr
    unknown = invoke("sweep", SCENARIO, *VARY, "--workers", "1", "--minimize", "share(training/nope).wait_p95")
    assert unknown.exit_code == 2 and "is not a quota share" in unknown.stderr
    both = invoke("sweep", SCENARIO, *VARY, "--workers", "2", "--scheduler", "tcp://127.0.0.1:9")
    assert both.exit_code == 2 and "give one or the other" in both.stderr


@pytest.mark.parametrize(("address", "message"), [
    ("http://127.0.0.1:9", "--scheduler 'http://127.0.0.1:9': unknown scheme 'http' (one of"),
    ("", "--scheduler: the address is empty (expected tcp://HOST:PORT"),
    ("localhost:bar", "--scheduler 'localhost:bar': port 'bar' is not a number from 1 to 65535"),
    ("tcp://127.0.0.1:99999", "--scheduler 'tcp://127.0.0.1:99999': port '99999' is not a number from 1 to 65535"),
    ("nonsense", "--scheduler 'nonsense': no host and port (expected tcp://HOST:PORT"),
])
def test_a_scheduler_address_dask_cannot_use_is_refused_at_once(address: str, message: str):
    for command in (("sweep", SCENARIO, *VARY), ("tune", SCENARIO, *VARY, "--budget", "2")):
        bad = invoke(*command, "--scheduler", address)
        assert bad.exit_code == 2
        assert bad.stderr.startswith(f"error: {message}") and bad.stderr.count("\n") == 1


def test_a_bad_scheduler_address_in_the_environment_is_named_as_such(monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "garbage")
    bad = invoke("sweep", SCENARIO, *VARY)
    assert bad.exit_code == 2 and bad.stderr.startswith("error: $DASK_SCHEDULER_ADDRESS 'garbage': no host and port")


def test_a_sweep_from_a_live_snapshot_starts_every_candidate_from_it():
    from policy_engine.simulation.core.jobs import JobSpec, LiveState, Status
    from policy_engine.simulation.results.records import simulate
    from policy_engine.simulation.scenarios.workload import Scenario
    from policy_engine.sweep.evaluate import evaluate, simulation_json
    from policy_engine.sweep.grid import Candidate

    topology = load_scenario(str(ROOT / "scenarios" / "walkthrough.yaml")).topology
    jobs = [JobSpec("a", "training/QS1", "ml.g5.xlarge", 1, 0, 0, 1000), JobSpec("b", "training/QS2", "ml.g5.xlarge",
                                                                                 1, 0, 0, 50)]
    live = {"a": LiveState(Status.RUNNING, -900, 100.0)}
    scenario = Scenario(topology, jobs, live=live)
    axes = parse_vary(["settings.backfill=true"], topology)
    record = evaluate(scenario, axes, Candidate(0, {"settings.backfill": True}))
    expected = simulate(topology, jobs, settings=scenario.settings.__class__(backfill=True), live=live)
    summary, shares = simulation_json(expected)
    assert (record.summary, record.shares) == (summary, tuple(shares))
    assert expected.job("a").finished_at == 100  # the live job's remaining work, not its whole duration


def test_ctrl_c_keeps_the_finished_runs_and_resume_completes_the_sweep(tmp_path: Path, monkeypatch):
    from policy_engine.sweep import runner

    args = ["sweep", SCENARIO, *VARY, "--workers", "1", "--quiet", "--format", "json"]
    whole = invoke(*args)
    assert whole.exit_code == 0
    calls = []
    real = runner.evaluate

    def interrupted_at_the_fourth_run(*arguments):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt  # what Ctrl-C raises in the main thread
        return real(*arguments)

    monkeypatch.setattr(runner, "evaluate", interrupted_at_the_fourth_run)
    out = tmp_path / "results"
    stopped = invoke(*args, "--out", str(out))
    assert stopped.exit_code == 130 and stopped.stdout == ""
    assert stopped.stderr == (f"interrupted: 3 of 6 run(s) are in {out}; run the same command with --resume to "
                              "continue\n")
    assert len(pd.read_parquet(out)) == 3
    monkeypatch.setattr(runner, "evaluate", real)
    again = invoke(*args, "--out", str(out))
    assert again.exit_code == 2 and "pass --resume" in again.stderr
    resumed = invoke(*args, "--out", str(out), "--resume")
    assert resumed.exit_code == 0 and json.loads(resumed.stdout) == json.loads(whole.stdout)
    assert sorted(pd.read_parquet(out)["run"]) == list(range(6))  # each run written once
    monkeypatch.setattr(runner, "evaluate", interrupted_at_the_fourth_run)
    calls.clear()
    unkept = invoke(*args)  # without --out nothing is kept, and the user is told so
    assert unkept.exit_code == 130 and unkept.stderr.startswith("interrupted: no results kept (with --out DIR")


def test_a_sweep_stopped_before_its_first_result_starts_afresh_without_resume(tmp_path: Path, monkeypatch):
    from policy_engine.sweep import runner

    real = runner.evaluate

    def interrupted(*arguments):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "evaluate", interrupted)
    out = tmp_path / "results"
    args = ["sweep", SCENARIO, *VARY, "--workers", "1", "--quiet", "--out", str(out), "--format", "json"]
    stopped = invoke(*args)
    assert stopped.exit_code == 130 and "0 of 6 run(s)" in stopped.stderr
    monkeypatch.setattr(runner, "evaluate", real)
    fresh = invoke(*args)  # nothing was kept, so there is nothing to resume: no --resume needed
    assert fresh.exit_code == 0 and len(json.loads(fresh.stdout)["runs"]) == 6
