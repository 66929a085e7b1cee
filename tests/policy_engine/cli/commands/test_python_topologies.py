"""One rule for Python topology modules (``commands.shared.python_topologies``, README "Reading files"): every
command that can load a ``.py`` says in ``--help`` that it runs code; one reached through a scenario, a compare
design or another git revision needs ``--allow-python``, and every command that says so has the flag."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from policy_engine.cli import COMMANDS, main
from policy_engine.cli.commands.shared import RUNS_CODE
from tests.builders import scenario_files

#: Commands that load a topology: named on their command line (no flag) or inside another file (the flag).
DIRECT = ("check", "explain", "graph", "generate", "fit", "diff", "serve", "drift")
NEEDS_FLAG = ("simulate", "explain", "sweep", "tune", "compare", "diff")


def help_text(command: str) -> str:
    result = CliRunner().invoke(main, [command, "--help"], terminal_width=400)
    assert result.exit_code == 0
    return " ".join(result.output.split())


@pytest.mark.parametrize("command", sorted(set(DIRECT + NEEDS_FLAG)))
def test_every_command_that_loads_a_python_topology_says_it_runs_code(command):
    assert RUNS_CODE in help_text(command)


@pytest.mark.parametrize("command", NEEDS_FLAG)
def test_commands_that_need_the_flag_have_it_and_say_for_what(command):
    text = help_text(command)
    assert "--allow-python" in text and "needs --allow-python" in text


def test_a_command_that_loads_no_topology_says_nothing_about_python():
    assert set(COMMANDS) - set(DIRECT + NEEDS_FLAG) >= {"walkthrough", "iam-policy", "top"}
    assert RUNS_CODE not in help_text("iam-policy")


@pytest.mark.parametrize("command", ["sweep", "tune", "simulate"])
def test_a_scenario_naming_a_python_topology_is_refused_unless_asked(tmp_path, command):
    scenario_files(tmp_path)
    (tmp_path / "topo.py").write_text(
        "from policy_engine.inputs.loading import load_topology\n"
        f"TOPOLOGY = load_topology({str(tmp_path / 'topology.yaml')!r})\n", encoding="utf-8")
    (tmp_path / "scenario.yaml").write_text("topology: topo.py\njobs: jobs.csv\n", encoding="utf-8")
    extra = {"sweep": ["--vary", "QS1.borrow_limit=0,100", "--workers", "1"],
             "tune": ["--vary", "QS1.borrow_limit=0,100", "--workers", "1", "--budget", "2"], "simulate": []}[command]
    args = [command, str(tmp_path / "scenario.yaml"), *extra, "--quiet"]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2 and "pass --allow-python" in refused.stderr
    allowed = CliRunner().invoke(main, [*args, "--allow-python"])
    assert allowed.exit_code in (0, 1), allowed.output
