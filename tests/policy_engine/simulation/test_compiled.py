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
from policy_engine.simulation.engine import SimulationSettings
from policy_engine.simulation.generate import WorkloadProfile, generate_jobs
from tests.builders import share, simulated_topology
from tests.policy_engine.simulation.compiled_cases import outcomes
from tests.policy_engine.simulation.test_properties import contended, scenarios

ROOT = Path(__file__).parents[3]
from_source_only = pytest.mark.skipif(not compiled.runs_compiled,
                                      reason="the simulator runs from source here: nothing compiled to compare")


def _from_source(*args: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, compiled.PURE_PYTHON_VARIABLE: "1"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=600)


def test_setup_compiles_the_modules_the_loader_checks():
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    listed = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "COMPILED_MODULES" for t in node.targets))
    assert ast.literal_eval(listed) == compiled.COMPILED_MODULES


@pytest.mark.skipif(os.environ.get(compiled.PURE_PYTHON_VARIABLE) == "1", reason="asked to run from source")
def test_the_installed_simulator_is_compiled():
    """``make test`` and ``make synth`` build it: the benchmarks' figures are the compiled simulator's."""
    assert compiled.runs_compiled, compiled.decide(Path(compiled.__file__).parent, compiled._recorded_hashes(),
                                                   os.environ)
    assert compiled.loaded_compiled()


def _larger_cases() -> list[tuple]:
    """Hundreds of jobs on a contended topology: deep lines, reclaim, in-share preemption, time limits."""
    topology = simulated_topology(
        8, share("S1", 3, "LEND_AND_BORROW", in_share_preemption=True), share("S2", 2, "LEND"),
        share("S3", 2, in_share_preemption=True), time_limit=1800)
    profile = WorkloadProfile(jobs=600, arrival_rate=40, sizes={1: 0.6, 2: 0.3, 3: 0.1}, duration_mean=900,
                              priorities={1: 0.5, 5: 0.5}, seed=3, burst_mean=20, burst_spread=300)
    jobs = list(generate_jobs(topology, profile))
    delayed = SimulationSettings(startup_delay=20, preemption_delay=5, victim_policy="fewest-instances")
    return [(topology, jobs, [], SimulationSettings(backfill=backfill, utilisation_series=True))
            for backfill in (False, True)] + [(topology, jobs, [], delayed)]


@from_source_only
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


@from_source_only
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
    (tmp_path / "steps.py").write_text("# steps, edited\n", encoding="utf-8")
    assert compiled.decide(tmp_path, recorded, {}) == ("source", ["steps"])
    assert compiled.decide(tmp_path, {}, {})[1] == list(compiled.COMPILED_MODULES)  # a build that recorded nothing


def test_running_from_source_loads_every_hot_module_from_its_source():
    probe = ("import json, sys\nfrom policy_engine.simulation import compiled\n"
             "from policy_engine.simulation.engine import Engine\n"
             "print(json.dumps([compiled.runs_compiled, compiled.loaded_compiled(), "
             "[sys.modules[f'policy_engine.simulation.{n}'].__file__ for n in compiled.COMPILED_MODULES]]))")
    run = _from_source("-c", probe)
    assert run.returncode == 0, run.stderr
    runs, loaded, files = json.loads(run.stdout)
    assert runs is False and loaded is False
    assert all(file.endswith(".py") for file in files)
