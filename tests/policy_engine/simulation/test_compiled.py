"""The compiled simulator (mypyc, ``setup.py``) decides exactly as its source, and never runs stale code."""

from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from policy_engine.simulation import compiled
from policy_engine.simulation.core.engine import SimulationSettings
from policy_engine.simulation.inputs.generate import GenerateOptions, ShareMix, generate_jobs
from tests.builders import share, simulated_topology
from tests.policy_engine.simulation.compiled_cases import outcomes
from tests.policy_engine.simulation.test_properties import contended, scenarios

ROOT = Path(__file__).parents[3]
compiled_only = pytest.mark.skipif(not compiled.runs_compiled,
                                      reason="the simulator runs from source here: nothing compiled to compare")


def _from_source(*args: str) -> subprocess.CompletedProcess:
    """Run Python with ``args`` from the repository, the simulator from source."""
    environment = {**os.environ, compiled.PURE_PYTHON_VARIABLE: "1"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=600)


def test_setup_compiles_the_modules_the_loader_checks():
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    listed = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "COMPILED_MODULES" for t in node.targets))
    assert ast.literal_eval(listed) == compiled.COMPILED_MODULES


@pytest.mark.skipif(compiled.asks_for_source(os.environ), reason="asked to run from source")
def test_the_installed_simulator_is_compiled():
    """``make test`` and ``make synth`` build it: the benchmarks' figures are the compiled simulator's."""
    how, stale = compiled.decide(Path(compiled.__file__).parent, compiled._recorded_hashes(), os.environ)
    assert compiled.runs_compiled, f"the simulator runs from source ({how}; changed: {stale}): run `make compile`"
    assert compiled.loaded_compiled()


def _larger_cases() -> list[tuple]:
    """Hundreds of jobs on a contended topology: deep lines, reclaim, in-share preemption, time limits."""
    topology = simulated_topology(
        8, share("S1", 3, "LEND_AND_BORROW", in_share_preemption=True), share("S2", 2, "LEND"),
        share("S3", 2, in_share_preemption=True), time_limit=1800)
    profile = GenerateOptions(jobs=600, arrival_rate=40, sizes={1: 0.6, 2: 0.3, 3: 0.1}, duration_mean=900,
                              priorities={1: 0.5, 5: 0.5}, seed=3,
                              share_mix=ShareMix.UNIFORM, burst_mean=20, burst_spread=300)
    jobs = list(generate_jobs(topology, profile))
    delayed = SimulationSettings(startup_delay=20, preemption_delay=5, victim_policy="fewest-instances")
    return [(topology, jobs, [], SimulationSettings(backfill=backfill, utilisation_series=True))
            for backfill in (False, True)] + [(topology, jobs, [], delayed)]


@compiled_only
def test_the_compiled_simulator_decides_exactly_as_its_source(tmp_path):
    """Every record, attempt, metric and state change of random scenarios, compiled against from source."""
    cases: list[tuple] = []

    @given(scenarios())
    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    def collect(case):
        cases.append(case)

    @given(contended())
    @settings(max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    def collect_contended(case):
        cases.append(case)

    collect()
    collect_contended()
    cases.extend(_larger_cases())
    path = tmp_path / "cases.pickle"
    path.write_bytes(pickle.dumps(cases))
    run = _from_source("-m", "tests.policy_engine.simulation.compiled_cases", str(path))
    assert run.returncode == 0, run.stderr
    source = json.loads(run.stdout)
    here = outcomes(cases)
    assert len(here) == len(source) == 2 * len(cases) > 400
    mismatched = [index for index, (a, b) in enumerate(zip(here, source, strict=True)) if a != b]
    assert not mismatched, cases[mismatched[0] // 2]


@compiled_only
def test_the_tests_that_replace_simulator_internals_pass_from_source():
    """They are deselected in a compiled run (``conftest``): here they run, from source."""
    run = _from_source("-m", "pytest", "-q", "-m", "interpreted", "-p", "no:cacheprovider", "tests")
    assert run.returncode == 0, run.stdout[-3000:]
    assert " passed" in run.stdout and "deselected" in run.stdout


def test_a_source_edited_since_the_build_is_run_from_source(tmp_path):
    for name in compiled.COMPILED_MODULES:
        (tmp_path / f"{name}.py").write_text(f"# {name}\n", encoding="utf-8")
    assert compiled.decide(tmp_path, {}, {}) == ("not built", [])
    for name in compiled.COMPILED_MODULES:
        (tmp_path / f"{name}{compiled.importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    recorded = {name: compiled.source_hash(tmp_path / f"{name}.py") for name in compiled.COMPILED_MODULES}
    assert compiled.decide(tmp_path, recorded, {}) == ("compiled", [])
    assert compiled.decide(tmp_path, recorded, {compiled.PURE_PYTHON_VARIABLE: "1"}) == ("source", [])
    for value in ("true", "yes", "1"):
        assert compiled.decide(tmp_path, recorded, {compiled.PURE_PYTHON_VARIABLE: value}) == ("source", [])
    for value in ("", "0", "false", "No"):
        assert compiled.decide(tmp_path, recorded, {compiled.PURE_PYTHON_VARIABLE: value}) == ("compiled", [])
    (tmp_path / "steps.py").write_text("# steps, edited\n", encoding="utf-8")
    assert compiled.decide(tmp_path, recorded, {}) == ("source", ["steps"])
    assert compiled.decide(tmp_path, {}, {})[1] == list(compiled.COMPILED_MODULES)  # a build that recorded nothing
    # one module's compiled file gone: the shared library still holds its old code, so nothing runs compiled
    recorded["steps"] = compiled.source_hash(tmp_path / "steps.py")
    (tmp_path / f"queues{compiled.importlib.machinery.EXTENSION_SUFFIXES[0]}").unlink()
    assert compiled.decide(tmp_path, recorded, {}) == ("source", ["queues"])
    for name in compiled.COMPILED_MODULES:
        (tmp_path / f"{name}{compiled.importlib.machinery.EXTENSION_SUFFIXES[0]}").unlink(missing_ok=True)
    (tmp_path / f"{compiled.SHARED_LIBRARY}{compiled.importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    assert compiled.decide(tmp_path, recorded, {}) == ("source", list(compiled.COMPILED_MODULES))


def test_running_from_source_loads_every_hot_module_from_its_source():
    probe = ("import json, sys\nfrom policy_engine.simulation import compiled\n"
             "from policy_engine.simulation.core.engine import Engine\n"
             "print(json.dumps([compiled.runs_compiled, compiled.loaded_compiled(), "
             "[sys.modules[f'policy_engine.simulation.core.{n}'].__file__ for n in compiled.COMPILED_MODULES]]))")
    run = _from_source("-c", probe)
    assert run.returncode == 0, run.stderr
    runs, loaded, files = json.loads(run.stdout)
    assert runs is False and loaded is False
    assert all(file.endswith(".py") for file in files)


def test_numpy_values_from_a_data_frame_run_as_the_plain_values_they_stand_for():
    """The compiled engine checks types: values that are exactly ints or floats are taken as such."""
    import numpy as np

    from policy_engine.simulation.core.engine import PriorityUpdate
    from policy_engine.simulation.core.jobs import JobSpec
    from policy_engine.simulation.results.records import simulate

    topology = simulated_topology(4, share("A", 2, "LEND_AND_BORROW"), share("B", 2, "LEND"))
    gpu = "ml.g5.xlarge"
    plain = [JobSpec("a", "q/A", gpu, 2, 2, 0, 10.0), JobSpec("b", "q/B", gpu, 2, 1, 5, 20.0, 2, 3.0, 2, 1, 4.0),
             JobSpec("c", "q/A", gpu, 3, 1, 6, 30.0)]
    numpy = [JobSpec(*(np.int64(v) if type(v) is int else np.float64(v) if type(v) is float else v for v in spec))
             for spec in plain]
    runs = [simulate(topology, jobs, [PriorityUpdate(update_at, "c", priority)],
                     SimulationSettings(backfill=flag, startup_delay=delay), until=until)
            for jobs, update_at, priority, flag, delay, until in (
                (plain, 3.0, 5, True, 1.0, 100.0),
                (numpy, np.int64(3), np.int64(5), np.bool_(True), np.int64(1), np.int64(100)))]
    assert runs[0].jobs == runs[1].jobs and runs[0].summary == runs[1].summary
    assert [record.priority for record in runs[1].jobs] == [2, 1, 5]


@compiled_only
def test_a_value_that_is_not_exactly_an_integer_is_refused_with_its_job_and_field():
    from policy_engine.simulation.core.engine import PriorityUpdate
    from policy_engine.simulation.core.jobs import JobSpec
    from policy_engine.simulation.results.records import simulate

    topology = simulated_topology(4, share("A", 2))
    for spec, message in ((JobSpec("a", "q/A", "ml.g5.xlarge", 1, 2.5, 0, 10), "job 'a': priority"),
                          (JobSpec("a", "q/A", "ml.g5.xlarge", "1", 2, 0, 10), "job 'a': instances")):
        with pytest.raises(TypeError, match=f"{message} must be an integer"):
            simulate(topology, [spec])
    with pytest.raises(TypeError, match=r"priority must be an integer, not 2\.0"):
        PriorityUpdate(1, "a", 2.0)
    with pytest.raises(TypeError, match="backfill must be true or false"):
        SimulationSettings(backfill="yes")
