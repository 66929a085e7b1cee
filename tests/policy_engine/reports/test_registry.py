"""The format tables: every row loads its renderer, the commands' ``--format`` choices are the tables'."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import click
import pytest
from click.testing import CliRunner

from policy_engine.analysis.checks import check_topology
from policy_engine.cli.app import main
from policy_engine.inputs.examples import EXAMPLE_YAML, example_topology
from policy_engine.inputs.loading import LoadError
from policy_engine.reports.kit.formats import FormatTable, OutputFormat
from policy_engine.reports.registry import (
    CHECK_FORMATS,
    EXPLAIN_FORMATS,
    GRAPH_FORMATS,
    SIMULATE_FORMATS,
    CheckLoadFailure,
    CheckOutput,
    CheckRenderer,
)

TABLES = {"check": CHECK_FORMATS, "simulate": SIMULATE_FORMATS, "explain": EXPLAIN_FORMATS}


@pytest.mark.parametrize("command", TABLES)
def test_format_choices_default_and_help_come_from_the_table(command):
    table = TABLES[command]
    option = next(p for p in main.get_command(None, command).params if p.name in ("output_format", "output"))  # type: ignore[union-attr]
    assert list(option.type.choices) == table.names  # type: ignore[attr-defined]
    assert option.default == table.default == "text"
    help_text = CliRunner().invoke(main, [command, "--help"], terminal_width=1000).output
    assert all(f"{name}: {table[name].purpose}" in help_text for name in table.names)


@pytest.mark.parametrize(("command", "name"), [(c, n) for c, t in TABLES.items() for n in t.names])
def test_every_row_loads_a_callable_renderer(command, name):
    renderer = TABLES[command].renderer(name)
    if command == "check":
        assert isinstance(renderer, CheckRenderer) and callable(renderer.render)
        # A document for a file that did not load exists for the formats machines read, not for the tables.
        assert (renderer.load_failure is None) == (name == "text")
    else:
        assert callable(renderer)


@pytest.mark.parametrize("name", CHECK_FORMATS.names)
def test_every_check_format_writes_a_document_and_machine_ones_a_load_failure(name):
    renderer = CHECK_FORMATS.renderer(name)
    topology = example_topology()
    out = io.StringIO()
    renderer.render(CheckOutput(check_topology(topology), topology, source="t.yaml", file=EXAMPLE_YAML), out)
    assert "BQ302" in out.getvalue()  # the example's one warning, in every format
    if renderer.load_failure is not None:
        failed = io.StringIO()
        error = LoadError(["t.yaml:3: bad | thing"])
        renderer.load_failure(CheckLoadFailure(error, source="t.yaml", file=EXAMPLE_YAML), failed)
        assert "bad" in failed.getvalue() and "thing" in failed.getvalue()


def test_a_table_refuses_duplicate_or_no_formats_a_shared_suffix_and_an_unknown_default():
    module = "policy_engine.reports.check.text"
    with pytest.raises(ValueError, match="unique"):
        FormatTable("x", [OutputFormat("a", "one", module), OutputFormat("a", "two", module)])
    with pytest.raises(ValueError):
        FormatTable("x", [])
    with pytest.raises(ValueError, match="suffix"):
        FormatTable("x", [OutputFormat("a", "one", module, (".a",)), OutputFormat("b", "two", module, (".a",))])
    with pytest.raises(ValueError, match="default"):
        FormatTable("x", [OutputFormat("a", "one", module)], default="b")


def test_every_row_names_a_renderer_module_of_its_command_folder():
    """The rows are data: each names ``policy_engine.reports.<command>.<module>`` and a function in it."""
    from policy_engine.reports import registry

    tables = [value for value in vars(registry).values() if isinstance(value, FormatTable)]
    assert len(tables) == 13
    for table in tables:
        for name in table.names:
            row = table[name]
            assert row.module.startswith(f"policy_engine.reports.{table.command}."), (table.command, row)
            assert callable(row.load())


def test_graph_formats_are_chosen_by_the_file_suffix_and_dot_is_the_default():
    assert GRAPH_FORMATS.default == "dot"
    chosen = {name: GRAPH_FORMATS.for_path(Path(name)) for name in ("a.svg", "b.PNG", "c.gv", "d.dot", "e.txt", "f")}
    assert {name: f.name if f else None for name, f in chosen.items()} == {
        "a.svg": "svg", "b.PNG": "png", "c.gv": "dot", "d.dot": "dot", "e.txt": None, "f": None}
    assert GRAPH_FORMATS.suffix_list() == ".svg, .png or .dot"
    assert all(callable(GRAPH_FORMATS.renderer(name)) for name in GRAPH_FORMATS.names)


def test_a_new_format_is_a_row_and_a_renderer(tmp_path, monkeypatch):
    """The recipe in miniature: a row names its module, imported only when its format is chosen."""
    for name, body in (("demo_plain", "write = lambda text, stream: stream.write(text)\n"),
                       ("demo_shout", "def write(text, stream):\n    stream.write(text.upper())\n")):
        (tmp_path / f"{name}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    table: FormatTable[Callable[[str, TextIO], None]] = FormatTable(
        "demo", [OutputFormat("plain", "as given", "demo_plain"), OutputFormat("shout", "upper case", "demo_shout")])

    @click.command()
    @table.option()
    def demo(output_format: str) -> None:
        import sys

        table.renderer(output_format)("hello", sys.stdout)

    assert CliRunner().invoke(demo, ["--format", "shout"]).output == "HELLO"
    assert "demo_shout" in sys.modules and "demo_plain" not in sys.modules
    assert CliRunner().invoke(demo, []).output == "hello"
    assert "plain: as given; shout: upper case." in CliRunner().invoke(demo, ["--help"]).output
    assert CliRunner().invoke(demo, ["--format", "xml"]).exit_code == 2
    for name in ("demo_plain", "demo_shout"):
        sys.modules.pop(name, None)
