"""The import graph of ``policy_engine`` and ``quota_constructs``, read from the source with ``ast`` (nothing imported).

Three rules hold the layering in place:

- ``policy_engine`` never imports the CDK (``aws_cdk``, ``constructs``, ``jsii``, ``cdk_nag``) or
  ``quota_constructs``, in any form: at load time, inside a function, or for type checking only. The policy
  engine installs and runs without the CDK (``pip install batch-quota``).
- No cycles among the modules of both packages in what Python runs. Every executed import counts as an
  edge, wherever it is written: at module level (``load``), inside a function or as
  ``importlib.import_module("literal")`` (``lazy``). A string that is exactly the dotted name of one of these
  modules is a lazy import too: registries load modules by name (``cli.COMMANDS``, the package's
  ``__getattr__``). A lazy import is the right way to keep a heavy dependency off the load path (``check``
  does not load the simulator), but it does not make two modules that need each other independent: a cycle
  through a lazy import is still a cycle in the design. It is broken by moving what both sides need into a
  third module (as ``quota_constructs/base.py`` does for the construct base classes, ``cli/commands/shared.py``
  for what every command needs from the command line, ``inputs/topology_data.py`` for what every topology reader
  ends with).
- Imports under ``if TYPE_CHECKING:`` (``typing``) are never executed, but they are dependencies of the design
  too, so they count: counting them, the only loops are the simulator core's two deliberate ones
  (``ALLOWED_LOOPS``, CONTRIBUTING.md): a ``Job`` knows its share's capacity, which holds its waiting line of
  jobs (``jobs`` <-> ``capacity`` <-> ``queues``), and the scheduling steps hold the lifecycle that runs them
  (``steps`` <-> ``lifecycle``). Anything else that needs a collaborator's type without depending on its module
  names a small ``Protocol`` of what it uses (``simulation/view.py``'s ``EngineView``, ``time_limits.TimerHost``).
- The folders of ``policy_engine`` are layers (``LAYERS``, CONTRIBUTING.md "Where things live"): every import from
  one folder to another points down the table of their nearest common folder, type-only imports included; the
  modules of a folder itself are the row ``"."`` of its table. Peers in one row never import each other, except
  the one pair ``ONE_UNIT`` names with its reason. A package's ``__init__`` may name anything inside its own
  package (its public surface). No folder holds more than ``MAX_MODULES`` modules, and ``policy_engine``'s root
  at most ``MAX_ROOT_MODULES``: the documented import paths and the pytest plugin, which nothing inside imports.

An edge goes to the module named: ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to
``a.b``. Loading ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``; those implicit parent edges are
not counted (every submodule would otherwise be in a cycle with a package that re-exports it). Module names
built at run time (``f"policy_engine.{name}"``) are not seen.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("policy_engine", "quota_constructs")
#: What ``policy_engine`` must never import (top-level names).
CDK_ONLY = ("aws_cdk", "constructs", "jsii", "cdk_nag", "quota_constructs")


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported module (absolute, dotted)
    line: int
    kind: str  # "load" | "lazy" | "typing"

    def where(self) -> str:
        return f"{self.source.replace('.', '/')}:{self.line} ({self.kind})"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(name: str, path: Path, known: set[str]) -> Iterator[Import]:
    """Every import in ``path``, absolute and classified by where it is written."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def resolve(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, node.module] if node.module else base)

    def visit(node: ast.AST, kind: str) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            child_kind = kind
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and kind == "load":
                child_kind = "lazy"
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.body:
                    yield from visit_statement(statement, "typing")
                for statement in child.orelse:
                    yield from visit_statement(statement, kind)
                continue
            yield from visit_statement(child, child_kind)

    def visit_statement(node: ast.AST, kind: str) -> Iterator[Import]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno, kind)
        elif isinstance(node, ast.ImportFrom):
            module = resolve(node)
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                yield Import(name, submodule if submodule in known else module, node.lineno, kind)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id == "import_module"))):
            yield Import(name, node.args[0].value, node.lineno, "lazy")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
            yield Import(name, node.value, node.lineno, "lazy")  # a registry entry loaded by name
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
              and getattr(node.func, "attr", getattr(node.func, "id", "")) == "files"):
            return  # ``importlib.resources.files("policy_engine")`` reads package data: not an import
        yield from visit(node, kind)

    yield from visit(tree, "load")


def all_imports() -> list[Import]:
    found = modules()
    known = set(found)
    return list(dict.fromkeys(each for name, path in found.items() for each in imports_of(name, path, known)))


def import_graph(imports: list[Import]) -> nx.MultiDiGraph:
    known = set(modules())
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(known)
    for each in imports:
        if each.target in known and each.target != each.source:
            graph.add_edge(each.source, each.target, where=each.where())
    return graph


def cycle_groups(imports: list[Import]) -> dict[frozenset[str], str]:
    """Each group of modules that reach one another -> a shortest cycle through it, each edge with its lines."""
    graph = import_graph(imports)
    simple = nx.DiGraph(graph)
    found = {}
    for group in nx.strongly_connected_components(simple):
        if len(group) < 2:
            continue
        start = min(group)
        ring = min((nx.shortest_path(simple, start, other) + nx.shortest_path(simple, other, start)[1:]
                    for other in group if other != start), key=len)
        steps = [f"{a} -> {b} [{', '.join(d['where'] for d in graph.get_edge_data(a, b).values())}]"
                 for a, b in pairwise(ring)]
        found[frozenset(group)] = f"{len(group)} modules: " + "; ".join(steps)
    return found


def cycles(imports: list[Import]) -> list[str]:
    return sorted(cycle_groups(imports).values())


# --- the rules -----------------------------------------------------------------------------------------------


def cdk_imports(imports: list[Import]) -> list[str]:
    """Each import of the CDK or the constructs written in ``policy_engine``, with its line."""
    return [f"{each.where()}: imports {each.target}" for each in imports
            if each.source.split(".")[0] == "policy_engine" and each.target.split(".")[0] in CDK_ONLY]


def test_policy_engine_never_imports_the_cdk_or_the_constructs():
    offending = cdk_imports(all_imports())
    assert not offending, "\n".join(offending)


def test_no_import_cycles_among_the_modules_python_runs():
    found = cycles([each for each in all_imports() if each.kind != "typing"])
    assert not found, "import cycles:\n" + "\n".join(found)


#: The only import loops, type-only imports counted: the simulator core's aggregate and the steps' back-reference.
ALLOWED_LOOPS = {
    frozenset({"policy_engine.simulation.core.jobs", "policy_engine.simulation.core.capacity",
               "policy_engine.simulation.core.queues"}),
    frozenset({"policy_engine.simulation.core.steps", "policy_engine.simulation.core.lifecycle"}),
}


def test_the_only_loops_counting_type_only_imports_are_the_simulator_cores_deliberate_ones():
    found = cycle_groups(all_imports())
    unexpected = sorted(ring for group, ring in found.items() if group not in ALLOWED_LOOPS)
    assert not unexpected, "import loops (type-only imports counted) besides ALLOWED_LOOPS:\n" + "\n".join(unexpected)
    gone = ALLOWED_LOOPS - set(found)
    assert not gone, f"a deliberate loop is gone: drop it from ALLOWED_LOOPS: {gone}"


#: Each folder's sub-folders (and ``"."``, its own modules) in rows, bottom first: a module may import a folder of
#: its own row only as ``ONE_UNIT`` allows, and of a lower row always. Every folder is in its parent's table.
LAYERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "policy_engine": (
        ("foundation",),  # the model, AWS's limits, instance types, units, diagnostics, findings
        ("inputs",),  # reading files, YAML, Python modules, templates, prices: a topology or every problem
        ("analysis",),  # the borrow graph, the guarantees' proofs, the rules, the checks, the summary
        ("simulation",),  # the simulator: its core, its inputs, scenarios, profiles and results
        ("changes", "comparison", "sweep", "events"),  # the features: peers that never import each other
        ("adapters",),  # an AWS account (aws) and the local AWS Batch endpoint (endpoint)
        ("reports",),  # every command's formats
        ("cli",),  # the click app, one module per command, the pre-commit hook
        (".",),  # the public surface: the documented import paths and the pytest plugin
    ),
    "policy_engine.analysis": (("borrow",), ("rules",), (".",)),
    "policy_engine.simulation": ((".", "core"), ("inputs",), ("profiles",), ("scenarios",), ("results",)),
    "policy_engine.adapters": (("aws",), ("endpoint",)),
    "policy_engine.adapters.endpoint": (("base",), ("handlers",), ("rehearsal",), (".",)),
    "policy_engine.reports": (
        ("kit",),  # formats, Markdown, safe text, the terminal, Vega, what commands hand renderers
        ("tables",),  # tables several reports share
        ("page",),  # the HTML pages and their script
        # one folder per command: its view and one module per format; commands never import each other
        ("check", "compare", "diff", "drift", "explain", "fit", "generate", "graph", "simulate", "sweep", "top",
         "tune", "walkthrough"),
        (".",),  # the registry of every command's formats
    ),
    "policy_engine.cli": (("commands",), (".",)),
}
#: Peers of one row that import each other, with why: the only exception to the layers.
ONE_UNIT = {
    ("policy_engine.simulation", frozenset({".", "core"})):
        "core/ is exactly the set mypyc compiles (setup.py), a build boundary: the modules beside it (settings, "
        "causes, reasons, usage, time_limits, plan_windows, topology_changes, exact_types, live) are what the "
        "event loop calls or records, and they act on its values; together they are the engine",
}
MAX_MODULES = 30  #: modules in one folder, ``__init__`` not counted
MAX_ROOT_MODULES = 8  #: modules at ``policy_engine``'s root, ``__init__`` not counted


def folder_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def layer_violations(imports: list[Import]) -> list[str]:
    """Each import between folders of ``policy_engine`` that does not point down ``LAYERS``, with its line."""
    found = modules()
    bad = []
    for each in imports:
        if not (each.source.startswith("policy_engine") and each.target.startswith("policy_engine")):
            continue
        if each.target not in found:
            continue
        source, target = folder_of(each.source, found[each.source]), folder_of(each.target, found[each.target])
        if source == target:
            continue
        if found[each.source].name == "__init__.py" and target.startswith(source + "."):
            continue  # a package's public surface names what its modules define
        a, b = source.split("."), target.split(".")
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        parent = ".".join(a[:common])
        ours, theirs = (a[common] if len(a) > common else "."), (b[common] if len(b) > common else ".")
        rows = {entry: rank for rank, row in enumerate(LAYERS.get(parent, ())) for entry in row}
        if ours not in rows or theirs not in rows:
            bad.append(f"{each.where()}: {parent} has no row for {ours!r} or {theirs!r} in LAYERS")
        elif rows[theirs] > rows[ours] or (
                rows[theirs] == rows[ours] and (parent, frozenset({ours, theirs})) not in ONE_UNIT):
            bad.append(f"{each.where()}: {parent}: {ours} imports {theirs} ({each.target})")
    return bad


def folders() -> dict[str, list[str]]:
    """Each folder of ``policy_engine`` -> its modules (``__init__`` not counted)."""
    found: dict[str, list[str]] = {}
    for name, path in modules().items():
        if name.startswith("policy_engine"):
            found.setdefault(folder_of(name, path), [])
            if path.name != "__init__.py":
                found[name.rpartition(".")[0]].append(name)
    return found


def test_every_import_between_folders_points_down_the_layers():
    bad = layer_violations(all_imports())
    assert not bad, "imports against the layers (LAYERS, CONTRIBUTING.md):\n" + "\n".join(bad)


def test_every_folder_has_a_row_in_its_parents_table_and_every_row_a_folder():
    tree = folders()
    def rows_of(parent: str) -> set[str]:
        return {entry for row in LAYERS.get(parent, ()) for entry in row}

    missing = sorted(name for name in tree
                     if name != "policy_engine" and name.rpartition(".")[2] not in rows_of(name.rpartition(".")[0]))
    assert not missing, f"folders without a row in their parent's LAYERS table: {missing}"
    gone = sorted(f"{parent}.{entry}" for parent, rows in LAYERS.items() for row in rows for entry in row
                  if entry != "." and f"{parent}.{entry}" not in tree)
    assert not gone, f"rows of LAYERS naming no folder: {gone}"


def test_no_folder_holds_more_than_thirty_modules_and_the_root_at_most_eight():
    crowded = {name: len(members) for name, members in folders().items() if len(members) > MAX_MODULES}
    assert not crowded, f"folders over {MAX_MODULES} modules: {crowded}"
    root = folders()["policy_engine"]
    assert len(root) <= MAX_ROOT_MODULES, f"{len(root)} modules at policy_engine's root: {sorted(root)}"


# --- the reader itself ---------------------------------------------------------------------------------------


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A throwaway ``policy_engine`` tree under ``tmp_path``, read by the same functions."""
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    root = tmp_path / "policy_engine"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "quota_constructs").mkdir()
    (tmp_path / "quota_constructs" / "__init__.py").write_text("")

    def write(files: dict[str, str]) -> list[Import]:
        for relative, text in {"__init__.py": "", "sub/__init__.py": "", **files}.items():
            (root / relative).write_text(text)
        return all_imports()

    return write


def test_reader_classifies_load_lazy_and_typing_imports(package):
    found = package({
        "a.py": "import importlib\nfrom typing import TYPE_CHECKING\nfrom . import b\n"
                "if TYPE_CHECKING:\n    from policy_engine.sub import c\n"
                "def f():\n    from .sub.c import thing\n    importlib.import_module('policy_engine.b')\n",
        "b.py": "COMMANDS = {'c': ('policy_engine.sub.c', 'help text')}\n", "sub/c.py": "from ..a import x\n",
    })
    edges = {(each.source, each.target, each.kind) for each in found if each.target.startswith("policy_engine")}
    assert edges == {
        ("policy_engine.a", "policy_engine.b", "load"),
        ("policy_engine.a", "policy_engine.sub.c", "typing"),
        ("policy_engine.a", "policy_engine.sub.c", "lazy"),
        ("policy_engine.a", "policy_engine.b", "lazy"),
        ("policy_engine.sub.c", "policy_engine.a", "load"),
        ("policy_engine.b", "policy_engine.sub.c", "lazy"),
    }


def test_a_cycle_through_a_lazy_import_is_reported_with_its_lines(package):
    found = package({"a.py": "from policy_engine import b\n", "b.py": "def f():\n    import policy_engine.a\n"})
    assert cycles(found) == ["2 modules: policy_engine.a -> policy_engine.b [policy_engine/a:1 (load)]; "
                             "policy_engine.b -> policy_engine.a [policy_engine/b:2 (lazy)]"]


def test_a_lazy_cdk_import_in_the_engine_is_caught(package):
    found = package({"a.py": "def f():\n    from aws_cdk import App\n",
                     "b.py": "if TYPE_CHECKING:\n    import quota_constructs.base\n"})
    assert cdk_imports(found) == ["policy_engine/a:2 (lazy): imports aws_cdk",
                                  "policy_engine/b:2 (typing): imports quota_constructs.base"]


def test_an_import_up_the_layers_or_across_peers_is_caught_type_only_imports_too(package, tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.LAYERS", {"policy_engine": (("low",), ("left", "right"), ("high",), (".",))})
    for folder in ("low", "left", "right", "high"):
        (tmp_path / "policy_engine" / folder).mkdir()
        (tmp_path / "policy_engine" / folder / "__init__.py").write_text("")
    found = package({
        "low/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from policy_engine.high import h\n",
        "left/l.py": "def f():\n    from policy_engine.right import r\n",
        "right/r.py": "from policy_engine.low import a\n",
        "high/h.py": "from policy_engine.left import l\nimport importlib\nimportlib.resources.files('policy_engine')\n",
        "api.py": "from policy_engine.high import h\n",
    })
    assert sorted(layer_violations(found)) == [
        "policy_engine/left/l:2 (lazy): policy_engine: left imports right (policy_engine.right.r)",
        "policy_engine/low/a:3 (typing): policy_engine: low imports high (policy_engine.high.h)",
    ]


#: The folders of ``policy_engine.reports`` that are not a command's: what every command's formats may build on.
#: ``kit`` is the renderers' toolbox (formats, Markdown, safe text, the terminal, Vega, the subjects commands hand
#: over); ``tables`` and ``page`` are shared report machinery: tables and the HTML page several commands draw alike
#: (a format hands them what its view carries; only these and the views read the domain's types).
REPORT_KIT = ("kit", "tables", "page")
#: A command folder's modules that are not formats: its view, and what the view is built from (``explain``'s plan
#: windows' sentences and figures, ``plans``, and its replayed advice, ``advice``).
VIEW_MODULES = {"view", "plans", "advice"}
#: Modules outside ``reports`` a format may import, each with why: nothing else of ``policy_engine``.
FORMAT_MAY_IMPORT = {
    "policy_engine.foundation.output_files":
        "the one way a format opens a file it writes (a device or FIFO written in place, never replaced or waited "
        "on): graph's pictures and compare's HTML page",
    "policy_engine.foundation.units":
        "how every output writes a figure (a duration, instance-hours, money, a percentage): one writing per unit, "
        "shared with the domain's own messages, so a report and a finding never write 1h 05m two ways",
}


def format_import_violations(imports: list[Import]) -> list[str]:
    """Every import of ``policy_engine`` written in a command's format module (``reports/<command>/<format>.py``)
    other than its own view (``reports.<command>.view``), the kit and the shared report machinery
    (``REPORT_KIT``) and ``FORMAT_MAY_IMPORT``: never a sibling format, another command's module or a domain
    module (the domain is read by the view), type-only and lazy imports included. The standard library and
    third-party packages are free."""
    out = []
    for each in imports:
        parts = each.source.split(".")
        if len(parts) != 4 or parts[:2] != ["policy_engine", "reports"] or parts[2] in REPORT_KIT:
            continue
        if parts[3] in VIEW_MODULES:
            continue
        target = each.target.split(".")
        if target[0] != "policy_engine" or each.target in FORMAT_MAY_IMPORT:
            continue
        if target[:2] == ["policy_engine", "reports"] and len(target) >= 3 and (
                target[2] in REPORT_KIT or target[2:] in ([parts[2]], [parts[2], "view"])):
            continue
        out.append(f"{each.where()} imports {each.target}")
    return out


def test_a_format_imports_only_its_view_and_the_reports_kit_never_another_format_or_the_domain():
    violations = format_import_violations(all_imports())
    assert not violations, ("a format imports more than its view, reports' kit, tables and page "
                            "(FORMAT_MAY_IMPORT):\n" + "\n".join(violations))


def test_every_command_with_a_format_has_a_view():
    commands = {name.split(".")[2] for name in modules() if name.startswith("policy_engine.reports.")
                and len(name.split(".")) == 4 and name.split(".")[2] not in REPORT_KIT}
    missing = sorted(command for command in commands if f"policy_engine.reports.{command}.view" not in modules())
    assert not missing, f"reports/<command>/ without a view.py: {missing}"


def test_a_format_importing_a_sibling_format_or_the_domain_is_caught(package, tmp_path):
    """Read from a throwaway tree, as the other rules: each kind of import a format may not write, and each it may."""
    for folder in ("reports", "reports/kit", "reports/tables", "reports/diff", "reports/tune", "reports/sweep",
                   "changes", "foundation"):
        (tmp_path / "policy_engine" / folder).mkdir(exist_ok=True)
        (tmp_path / "policy_engine" / folder / "__init__.py").write_text("")
    found = package({
        "changes/report.py": "", "foundation/output_files.py": "", "reports/kit/markdown.py": "",
        "reports/tables/sweep_runs.py": "", "reports/diff/view.py": "from policy_engine.changes.report import x\n",
        "reports/diff/text.py": "", "reports/sweep/json.py": "",
        "reports/diff/markdown.py": "import json\nfrom policy_engine.reports.diff.text import f\n"
                                    "from policy_engine.reports.diff.view import v\n"
                                    "from policy_engine.reports.kit.markdown import table\n"
                                    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                    "    from policy_engine.changes.report import ChangeReport\n",
        "reports/tune/json.py": "from policy_engine.reports.tables import sweep_runs\n"
                                "from policy_engine.foundation import output_files\n"
                                "def f():\n    from policy_engine.reports.sweep.json import run_json\n",
    })
    assert sorted(format_import_violations(found)) == [
        "policy_engine/reports/diff/markdown:2 (load) imports policy_engine.reports.diff.text",
        "policy_engine/reports/diff/markdown:7 (typing) imports policy_engine.changes.report",
        "policy_engine/reports/tune/json:4 (lazy) imports policy_engine.reports.sweep.json",
    ]
