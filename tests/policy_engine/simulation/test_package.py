"""The package imports its simulator on first use: ``check`` never pays for loading it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import policy_engine.simulation as simulation

ROOT = Path(__file__).parents[3]


def _loaded_after(code: str) -> list[str]:
    """The ``policy_engine.simulation`` modules a fresh interpreter has loaded after running ``code``."""
    probe = code + (
        "\nimport json, sys\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('policy_engine.simulation'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_package_loads_no_submodule():
    """Only the check of the compiled build (standard library only), and what that build recorded."""
    loaded = _loaded_after("import policy_engine.simulation")
    assert {"policy_engine.simulation", "policy_engine.simulation.compiled"} <= set(loaded)
    assert set(loaded) <= {"policy_engine.simulation", "policy_engine.simulation.compiled",
                           "policy_engine.simulation.core", "policy_engine.simulation.core._compiled_sources"}


def test_check_as_markdown_does_not_load_the_simulator():
    loaded = _loaded_after(
        "from policy_engine.cli.app import main\n"
        "try:\n"
        "    main(['check', '--format', 'markdown', 'topologies/example.yaml'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass")
    assert "policy_engine.simulation.core.engine" not in loaded
    assert "policy_engine.simulation.core.steps" not in loaded


def test_every_public_name_resolves_to_its_module_and_unknown_names_fail():
    for name in simulation.__all__:
        value = getattr(simulation, name)
        assert value.__module__.startswith("policy_engine.simulation."), name
    try:
        simulation.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_the_documented_results_path_is_a_real_package_naming_the_records():
    """docs/simulator.md imports ``build_result`` from ``policy_engine.simulation.results``: the package itself
    (no import hook), whose ``__init__`` names what ``results/records.py`` defines, loaded on first use."""
    loaded = _loaded_after("import policy_engine.simulation.results")
    assert "policy_engine.simulation.results.records" not in loaded

    from policy_engine.simulation import results
    from policy_engine.simulation.results import SimulationResult, build_result, simulate

    records = importlib.import_module("policy_engine.simulation.results.records")
    assert build_result is records.build_result and SimulationResult is records.SimulationResult
    assert simulate is records.simulate is simulation.simulate
    assert results.__file__ is not None and results.__file__.endswith("results/__init__.py")
    assert not [finder for finder in sys.meta_path if type(finder).__module__.startswith("policy_engine")]
