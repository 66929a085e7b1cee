"""One format table for every command: ``--format`` comes from ``reports.registry``, never a list in ``commands/``.

The scan reads the command modules with ``ast`` (nothing is imported): a ``--format`` option written out by
hand, a ``click.Choice`` of format names, or a branch on a format name fails here. Every command that prints
results offers ``json``, with the keys its renderer documents.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from policy_engine.cli.app import COMMANDS, main
from policy_engine.reports import registry
from policy_engine.reports.kit.formats import FormatTable

COMMANDS_DIR = Path(__file__).resolve().parents[4] / "policy_engine" / "cli" / "commands"
TABLES = {table.command: table for table in vars(registry).values() if isinstance(table, FormatTable)}
FORMAT_NAMES = {name for table in TABLES.values() for name in table.names}
#: Commands whose standard output is a document another command (or AWS) reads, not a report: they have no
#: ``--format`` and say why in README's "Output formats".
DOCUMENTS = {"graph": "DOT, or the picture -o names", "serve": "the endpoint's URL",
             "iam-policy": "an IAM policy document (JSON)", "import": "a topology file",
             "snapshot": "a scenario file", "history": "a workload CSV"}


def _hand_written(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name == "option" and "--format" in strings:
                found.append(f"{path.name}:{node.lineno}: a --format option written by hand")
            if name == "Choice" and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
                literal = {e.value for e in node.args[0].elts if isinstance(e, ast.Constant)}
                if literal & FORMAT_NAMES:
                    found.append(f"{path.name}:{node.lineno}: click.Choice of format names {sorted(literal)}")
        if isinstance(node, ast.Compare):
            names = [n.id for n in (node.left, *node.comparators) if isinstance(n, ast.Name)]
            constants = {n.value for n in (node.left, *node.comparators) if isinstance(n, ast.Constant)}
            if any("format" in n or n == "output" for n in names) and constants & FORMAT_NAMES:
                found.append(f"{path.name}:{node.lineno}: a branch on format {sorted(constants & FORMAT_NAMES)}")
    return found


def test_no_command_writes_its_formats_by_hand():
    found = [line for path in sorted(COMMANDS_DIR.glob("*.py")) for line in _hand_written(path)]
    assert found == []


def test_the_scan_catches_a_hand_written_format_list(tmp_path):
    module = tmp_path / "demo.py"
    module.write_text('import click\n@click.option("--format", "output", type=click.Choice(["text", "json"]))\n'
                      'def command(output):\n    if output == "json":\n        pass\n')
    assert {line.split(": ", 1)[1] for line in _hand_written(module)} == {
        "a --format option written by hand", "click.Choice of format names ['json', 'text']",
        "a branch on format ['json']"}


def _format_option(name: str) -> click.Option | None:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    return next((p for p in command.params if isinstance(p, click.Option) and "--format" in p.opts), None)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_that_prints_results_offers_json_from_its_table(name):
    option = _format_option(name)
    if name in DOCUMENTS:
        assert option is None, f"{name} has --format: take it out of DOCUMENTS"
        return
    assert option is not None, f"{name} prints results but has no --format"
    table = TABLES[name]
    assert list(option.type.choices) == table.names and option.default == table.default  # type: ignore[attr-defined]
    assert option.help == table.help() and "json" in table.names


def test_every_table_belongs_to_a_command():
    assert set(TABLES) <= set(COMMANDS)


def test_explain_json_keys(tmp_path):
    result = CliRunner().invoke(main, ["explain", "training/QS1", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert list(data) == ["share", "sentences", "summary", "training_plans", "advice", "advice_tested", "helps_rule"]
    assert data["share"] == "training/QS1" and (data["advice"], data["advice_tested"]) == ([], False)
    assert all(list(s) == ["topic", "text"] for s in data["sentences"])
    assert data["sentences"][0]["topic"] == "what"
    assert set(data["summary"]) >= {"limit", "guaranteed", "max_burst"}


def test_walkthrough_json_keys():
    result = CliRunner().invoke(main, ["walkthrough", "--format", "json"])
    assert result.exit_code == 0, result.output
    steps = json.loads(result.output)["steps"]
    assert [s["time"] for s in steps] == [0, 100, 200]
    assert all(list(s) == ["time", "title", "expected", "jobs"] for s in steps)
    last = {job["name"]: job for job in steps[-1]["jobs"]}
    assert set(last["qs1_job_low"]) == {"name", "share", "instance_type", "instances", "training_plan", "status",
                                        "preemptions", "reason", "submitted_at", "started_at", "finished_at",
                                        "wait_seconds", "priority"}
    # AWS's step 3: low raised to 4 runs, high goes back to RUNNABLE
    assert (last["qs1_job_low"]["priority"], last["qs1_job_low"]["status"]) == (4, "RUNNING")
    assert last["qs1_job_high"]["status"] == "RUNNABLE"


def test_generate_json_keys(tmp_path):
    jobs, scenario = tmp_path / "jobs.csv", tmp_path / "scenario.yaml"
    result = CliRunner().invoke(main, ["generate", "-o", str(jobs), "--jobs", "7", "--scenario", str(scenario),
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"jobs": 7, "output": str(jobs), "scenario": str(scenario), "notes": []}
    assert len(jobs.read_text().splitlines()) == 8
