"""The documented import paths keep working after the modules moved (CONTRIBUTING.md, "Where things moved").

The root modules are the paths users were given (README, docs/); each names what its home module defines, and
the objects are the home's own (one class, not a copy). Every ``from policy_engine... import ...`` line the
README and docs/ show runs.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: documented path -> where the code lives now
KEPT = {
    "policy_engine.model": "policy_engine.foundation.model",
    "policy_engine.limits": "policy_engine.foundation.limits",
    "policy_engine.units": "policy_engine.foundation.units",
    "policy_engine.event_patterns": "policy_engine.events.patterns",
    "policy_engine.checks": "policy_engine.analysis.checks",
    "policy_engine.loading": "policy_engine.inputs.loading",
    "policy_engine.reports.aggregates": "policy_engine.simulation.results.aggregates",
}


def defined_names(module: str) -> set[str]:
    """The public names a module defines at its top level (its ``__all__`` when it has one)."""
    path = ROOT / (module.replace(".", "/") + ".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


@pytest.mark.parametrize(("path", "home"), sorted(KEPT.items()))
def test_a_documented_path_names_everything_its_home_defines_as_the_same_objects(path, home):
    kept, module = importlib.import_module(path), importlib.import_module(home)
    missing = defined_names(home) - set(kept.__all__)
    assert not missing, f"{path} does not name {sorted(missing)} of {home}"
    assert all(getattr(kept, name) is getattr(module, name) for name in kept.__all__)


def test_the_documented_packages_name_their_public_surface():
    from policy_engine import cli, simulation
    from policy_engine.simulation import results

    assert cli.main is importlib.import_module("policy_engine.cli.app").main
    records = importlib.import_module("policy_engine.simulation.results.records")
    assert results.build_result is records.build_result and simulation.simulate is records.simulate
    assert importlib.import_module("policy_engine.testing").assert_topology_ok


def doc_import_lines() -> list[tuple[str, str]]:
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in doc.read_text(encoding="utf-8").splitlines():
            match = re.match(r"\s*(from policy_engine[\w.]* import [\w, ]+)\s*$", line)
            if match:
                found.append((doc.name, match.group(1)))
    return found


@pytest.mark.parametrize(("doc", "line"), doc_import_lines())
def test_every_import_line_the_readme_and_docs_show_runs(doc, line):
    exec(line, {})  # the documentation's own line
