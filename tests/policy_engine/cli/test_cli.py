"""The command group: every listed command loads, and a check pays only for the renderer it runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import COMMANDS, main
from policy_engine.reports.registry import CHECK_FORMATS


def test_every_listed_command_loads_under_its_name():
    for name in COMMANDS:
        command = main.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None and command.name == name


def test_help_lists_every_command_and_unknown_command_exits_2():
    runner = CliRunner()
    listing = runner.invoke(main, ["--help"]).output
    assert all(name in listing for name in COMMANDS)
    assert runner.invoke(main, ["no-such-command"]).exit_code == 2


#: Modules no ``check`` format needs: the simulator, the charts, the picture and the other commands' reports.
NOT_FOR_CHECK = ("policy_engine.simulation", "policy_engine.sweep", "matplotlib", "graphviz", "dask",
                 "policy_engine.reports.graph.borrow_graph", "policy_engine.reports.page.html_report",
                 "policy_engine.simulation.results.aggregates", "policy_engine.reports.page.summary_png",
                 "policy_engine.reports.kit.vega", "policy_engine.reports.simulate.",
                 "policy_engine.reports.explain.view")


def _modules_after(*argv: str) -> list[str]:
    """``batch-quota ARGV`` in a fresh interpreter; the modules it had imported when it finished."""
    code = (
        "import json, sys\nfrom policy_engine.cli.app import main\n"
        f"try:\n    main({list(argv)!r})\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(finished.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("output_format", CHECK_FORMATS.names)
def test_check_loads_only_its_own_renderer_and_never_the_simulator_or_matplotlib(output_format):
    modules = _modules_after("check", "--format", output_format)
    assert f"policy_engine.reports.check.{output_format}" in modules  # the control: the renderer did run
    assert [m for m in modules if m.startswith(NOT_FOR_CHECK)] == []
    others = {f"policy_engine.reports.check.{name}" for name in CHECK_FORMATS.names} - {
        f"policy_engine.reports.check.{output_format}"}
    assert others.isdisjoint(modules)
    if output_format in ("json", "markdown"):  # documents for machines and GitHub: no terminal library
        assert not [m for m in modules if m == "rich" or m.startswith("rich.")]


def test_importing_reports_imports_none_of_its_renderers():
    code = ("import sys, policy_engine.reports\n"
            "print([m for m in sys.modules if m.startswith('policy_engine.reports.')])")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def test_every_command_is_in_the_readme_quickstart_and_documented():
    root = Path(__file__).parents[3]
    readme = (root / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    documents = readme + "".join(path.read_text(encoding="utf-8") for path in (root / "docs").glob("*.md"))
    for name in COMMANDS:
        assert re.search(rf"\b{re.escape(name)}\b", quickstart), f"{name}: not in the README's quickstart"
        assert f"batch-quota {name}" in documents, f"{name}: no 'batch-quota {name}' usage in README.md or docs/"


@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_no_help_text_shows_markup_or_an_empty_bound(name):
    """Help is read as plain text: no reStructuredText double backquotes, no ``[x<=None]`` from an unbounded range."""
    result = CliRunner().invoke(main, [*([name] if name else []), "--help"], terminal_width=300)
    assert result.exit_code == 0, result.output
    assert "``" not in result.output and "None]" not in result.output


def test_the_console_process_freezes_what_start_up_loaded_and_in_process_callers_are_left_alone():
    """``batch-quota`` itself freezes the objects loaded before its command runs (the cyclic collector would scan
    them again for nothing); a caller that passes its own arguments (CliRunner, tests) keeps its collector as it is."""
    import gc

    before = gc.get_freeze_count()
    assert CliRunner().invoke(main, ["check"]).exit_code == 0
    # nothing newly frozen; the count may fall when an object another test froze is freed meanwhile
    assert gc.get_freeze_count() <= before
    probe = ("import atexit, gc, os, sys\n"
             "atexit.register(lambda: os.write(2, f'frozen={gc.get_freeze_count()}'.encode()))\n"
             "sys.argv = ['batch-quota', 'check']\n"
             "from policy_engine.cli import main\nmain()\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stderr.rsplit("frozen=", 1)[1]) > 10_000  # the modules check loaded, not a handful of objects
