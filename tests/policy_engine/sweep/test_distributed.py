"""Sweeps and simulations on real Dask clusters: an embedded LocalCluster, and a ``dask scheduler`` with two
``dask worker`` processes started here over TCP on 127.0.0.1. Same results as in-process; a worker killed
mid-sweep loses nothing and repeats nothing. Every process started here is stopped here."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.simulation.scenarios.workload import load_scenario
from policy_engine.sweep.dataset import ResultsDataset, share_pairs
from policy_engine.sweep.executor import DaskExecutor, InProcess, open_executor
from policy_engine.sweep.grammar import parse_vary
from policy_engine.sweep.grid import expand
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.runner import run_sweep
from policy_engine.sweep.split import simulate_parallel
from tests.policy_engine.sweep.scenarios import first_share, generated

ROOT = Path(__file__).parents[3]
SMALL = str(ROOT / "scenarios" / "borrow-and-reclaim.yaml")
SMALL_VARY = ["training/research.borrow_limit=0,100,-1", "training/vision.capacity.ml.p4d.24xlarge=1..3",
              "settings.backfill=false,true"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    """End a process started here and everything it started (its own session), politely first."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="module")
def dask_cluster():
    """``dask scheduler`` + two ``dask worker`` processes (one thread each) on 127.0.0.1; yields the address."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "dask"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    processes = [subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                   "--no-dashboard", "--no-show"], **quiet)]
    try:
        for _ in range(2):
            processes.append(subprocess.Popen([*dask, "worker", address, "--nthreads", "1", "--nworkers", "1",
                                               "--host", "127.0.0.1", "--no-dashboard"], **quiet))
        from dask.distributed import Client

        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=90)
        yield address
    finally:
        for process in reversed(processes):
            _stop(process)


def _sweep(executor, scenario_path: str = SMALL, vary=SMALL_VARY, **kwargs) -> list[dict]:
    scenario = load_scenario(scenario_path)
    axes = parse_vary(vary, scenario.topology)
    return run_sweep(scenario, axes, expand(axes), executor, **kwargs)


@pytest.fixture(scope="module")
def sequential() -> list[RunRecord]:
    return _sweep(InProcess())


def test_local_cluster_and_a_real_scheduler_give_the_sequential_table(sequential, dask_cluster):
    assert len(sequential) == 18 and {r.status for r in sequential} == {"ok", "invalid"}
    with open_executor(None, 2) as local:  # the embedded LocalCluster, as sweep uses by default
        assert isinstance(local, DaskExecutor) and len(local.client.nthreads()) == 2
        assert _sweep(local) == sequential
    with open_executor(dask_cluster, None) as remote:
        assert "2 worker(s)" in remote.description
        assert _sweep(remote) == sequential


def test_cli_on_the_scheduler_from_the_environment(dask_cluster, monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", dask_cluster)
    args = ["sweep", SMALL, *(f"--vary={v}" for v in SMALL_VARY), "--format", "json", "--quiet"]
    remote = CliRunner().invoke(main, args)
    local = CliRunner().invoke(main, [*args, "--workers", "1"])  # --workers wins over the environment
    assert remote.exit_code == local.exit_code == 0, remote.output
    assert json.loads(remote.stdout) == json.loads(local.stdout)


def test_simulate_queues_in_parallel_is_identical_to_sequential(dask_cluster, tmp_path: Path):
    path = generated(tmp_path / "three-queues", jobs=1500, queues=3, shares=3)
    sequential = CliRunner().invoke(main, ["simulate", str(path), "--format", "json"])
    for flags in (["--workers", "1"], ["--scheduler", dask_cluster]):
        parallel = CliRunner().invoke(main, ["simulate", str(path), "--format", "json", *flags])
        assert parallel.exit_code == 0, parallel.output
        assert parallel.stdout == sequential.stdout
    until = [CliRunner().invoke(main, ["simulate", str(path), "--format", "json", "--until", "20000", *flags]).stdout
             for flags in ([], ["--scheduler", dask_cluster])]
    assert until[0] == until[1]
    scenario = load_scenario(path)
    with open_executor(dask_cluster, None) as remote:
        assert simulate_parallel(scenario, remote).summary == json.loads(sequential.stdout)["summary"]
    small = generated(tmp_path / "two-queues", jobs=40, queues=2, shares=1)  # the report draws a chart per share
    reports = [tmp_path / "sequential", tmp_path / "parallel"]
    runs = [CliRunner().invoke(main, ["simulate", str(small), "--report", str(report), *flags])
            for report, flags in zip(reports, ([], ["--scheduler", dask_cluster]), strict=True)]
    assert [run.exit_code for run in runs] == [0, 0], [run.output for run in runs]
    assert sorted(p.name for p in reports[0].iterdir()) == sorted(p.name for p in reports[1].iterdir())
    assert all((reports[0] / p.name).read_bytes() == p.read_bytes() for p in reports[1].iterdir())
    events = CliRunner().invoke(main, ["simulate", str(path), "--workers", "1", "--events", str(tmp_path / "e")])
    assert events.exit_code == 2 and "--events" in events.stderr


def test_a_worker_killed_mid_sweep_loses_no_run_and_repeats_none(tmp_path: Path):
    path = generated(tmp_path / "slow", jobs=1500, queues=1, shares=4)
    share = first_share(tmp_path / "slow")
    vary = [f"{share}.borrow_limit=0,100,200,-1", "settings.backfill=false,true", "workload.scale=1,1.1"]
    expected = _sweep(InProcess(), str(path), vary)
    scenario = load_scenario(path)
    axes = parse_vary(vary, scenario.topology)
    out = tmp_path / "results"
    results = ResultsDataset(out, axes, share_pairs(scenario.topology, axes),
                             {"scenario": "s", "scenario_sha256": "x", "vary": vary}, resume=False)
    killed: list[int] = []
    seen: list[int] = []
    with open_executor(None, 2) as local:
        def kill_one_worker(record: RunRecord) -> None:
            seen.append(record.index)
            if not killed:  # after the first result, while the other runs are in flight
                pids = local.client.run(os.getpid)
                victim = sorted(pids.values())[0]
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        records = _sweep(local, str(path), vary, on_result=kill_one_worker, dataset=results, flush_runs=3)
        deadline = time.monotonic() + 60  # the nanny restarts the killed worker; leave a whole cluster behind
        while len(local.client.nthreads()) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
    assert killed and sorted(seen) == list(range(16))  # each run reported exactly once
    assert records == expected
    written = pd.read_parquet(out)
    assert sorted(written["run"]) == list(range(16))  # each run written exactly once, over several part files
    assert len(list(out.glob("part-*.parquet"))) > 1


def test_tune_on_the_cluster_asks_and_recommends_as_in_process(dask_cluster, tmp_path: Path):
    from tests.policy_engine.sweep.scenarios import KNOWN_OPTIMUM

    path = tmp_path / "known.yaml"
    path.write_text(KNOWN_OPTIMUM, encoding="utf-8")
    args = ["tune", str(path), "--vary", "q/A.capacity.ml.g5.xlarge=1..6", "--vary", "q/B.capacity.ml.g5.xlarge=1..6",
            "--budget", "6", "--format", "json", "--quiet"]
    remote = CliRunner().invoke(main, [*args, "--scheduler", dask_cluster])
    local = CliRunner().invoke(main, [*args, "--workers", "1"])
    assert remote.exit_code == local.exit_code == 0, remote.output
    assert json.loads(remote.stdout) == json.loads(local.stdout)


def test_the_workload_is_shipped_to_each_worker_once_not_per_task(dask_cluster, tmp_path: Path):
    from policy_engine.sweep.runner import SweepInput
    from tests.policy_engine.sweep.scenarios import CountingInput, counting_task

    scenario = load_scenario(SMALL)
    axes = parse_vary(SMALL_VARY, scenario.topology)
    log = tmp_path / "unpickled.log"
    log.touch()
    with open_executor(dask_cluster, None) as remote:
        records = list(remote.map(counting_task, CountingInput(SweepInput(scenario, tuple(axes)), str(log)),
                                  expand(axes)))
    assert len(records) == 18
    # one copy per worker (two workers), not one per task; Dask's memory manager may drop an idle replica and
    # copy it back once later, so at most two copies per worker over the whole sweep
    assert 2 <= len(log.read_text().splitlines()) <= 4


def test_simulate_queues_in_parallel_applies_topology_changes_like_the_sequential_run(tmp_path: Path):
    """A share's limit and an environment's capacity lowered mid-run: each part applies its own changes."""
    path = generated(tmp_path / "changes", jobs=600, queues=3, shares=2)
    topology = yaml.safe_load((tmp_path / "changes" / "topology.yaml").read_text(encoding="utf-8"))
    last_queue = topology["job_queues"][-1]
    environment = next(e for e in topology["service_environments"] if e["name"] == last_queue["service_environment"])
    (instance_type, capacity), = environment["capacity"].items()
    actions = [{"at": 3000, "update_share": {"share": first_share(tmp_path / "changes"),
                                             "capacity": {instance_type: 1}}},
               {"at": 6000, "update_environment": {"name": environment["name"],
                                                   "capacity": {instance_type: capacity - 2}}}]
    changed = path.with_name("changed.yaml")
    changed.write_text(path.read_text(encoding="utf-8") + yaml.safe_dump({"actions": actions}), encoding="utf-8")
    sequential = CliRunner().invoke(main, ["simulate", str(changed), "--format", "json"])
    parallel = CliRunner().invoke(main, ["simulate", str(changed), "--format", "json", "--workers", "1"])
    assert sequential.exit_code == parallel.exit_code == 0, sequential.output + parallel.output
    assert parallel.stdout == sequential.stdout
    plain = CliRunner().invoke(main, ["simulate", str(path), "--format", "json"])
    assert json.loads(plain.stdout)["summary"] != json.loads(sequential.stdout)["summary"]  # the changes mattered


def _with_changes(path: Path) -> Path:
    """``path``'s scenario plus a share's and an environment's capacity lowered mid-run (in different queues)."""
    directory = path.parent
    topology = yaml.safe_load((directory / "topology.yaml").read_text(encoding="utf-8"))
    last_queue = topology["job_queues"][-1]
    environment = next(e for e in topology["service_environments"] if e["name"] == last_queue["service_environment"])
    instance_type, capacity = next(iter(environment["capacity"].items()))
    share = first_share(directory)
    share_type = next(iter(topology["job_queues"][0]["shares"][0]["capacity"]))
    actions = [{"at": 3000, "update_share": {"share": share, "capacity": {share_type: 1}}},
               {"at": 6000, "update_environment": {"name": environment["name"],
                                                   "capacity": {instance_type: capacity - 2}}}]
    changed = path.with_name("changed.yaml")
    changed.write_text(path.read_text(encoding="utf-8") + yaml.safe_dump({"actions": actions}), encoding="utf-8")
    return changed


def test_simulate_report_from_a_local_cluster_is_the_sequential_report(tmp_path: Path):
    """``simulate --report DIR --workers 2``: the queues on the embedded cluster, merged; every file identical."""
    scenario = _with_changes(generated(tmp_path / "queues", jobs=900, queues=3, shares=2, types=2))
    share = first_share(tmp_path / "queues")
    reports = {flags: tmp_path / f"report{len(flags)}" for flags in ((), ("--workers", "2"))}
    for flags, directory in reports.items():
        run = CliRunner().invoke(main, ["simulate", str(scenario), "--report", str(directory), "--report-share", share,
                                        "--format", "json", *flags])
        assert run.exit_code == 0, run.output
    sequential, parallel = reports.values()
    names = sorted(p.name for p in sequential.iterdir())
    assert "index.html" in names and names == sorted(p.name for p in parallel.iterdir())
    for name in names:
        assert (sequential / name).read_bytes() == (parallel / name).read_bytes(), name
    page = (sequential / "index.html").read_text(encoding="utf-8")
    assert share in page and "queue-02" in page  # the data of every part made it into the page


def test_quick_runs_share_tasks_and_each_result_comes_back_once(dask_cluster):
    from dask.distributed import get_task_stream

    from tests.policy_engine.sweep.scenarios import offset_task

    with open_executor(dask_cluster, None) as remote, get_task_stream(remote.client) as stream:
        results = list(remote.map(offset_task, 1000, list(range(300))))
    assert sorted(results) == [1000 + item for item in range(300)]
    tasks = {entry["key"] for entry in stream.data if str(entry["key"]).startswith("batch-quota-")}
    assert 2 <= len(tasks) < 100  # batched once the first tasks were timed, not one task per run


def test_ctrl_c_in_a_terminal_stops_the_local_cluster_quietly_and_keeps_the_finished_runs(tmp_path: Path):
    """SIGINT to the whole process group, as a terminal sends it: the workers ignore it, the command winds down."""
    path = generated(tmp_path / "long", jobs=3000, queues=1, shares=4)
    share = first_share(tmp_path / "long")
    out = tmp_path / "results"
    command = [sys.executable, "-c", "from policy_engine.cli.app import main; main()", "sweep", str(path),
               "--vary", f"{share}.borrow_limit=0..299", "--vary", "settings.backfill=false,true", "--workers", "2",
               "--out", str(out), "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("part-*.parquet")) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        _stop(process)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    kept = len(pd.read_parquet(out))
    assert 0 < kept < 600
    assert stderr.strip().splitlines()[-1] == (f"interrupted: {kept} of 600 run(s) are in {out}; run the same command "
                                               "with --resume to continue")
