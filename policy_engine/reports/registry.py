"""The output formats of ``check``, ``simulate``, ``explain`` and ``graph``.

Adding a format is one renderer module (a function ``(subject, stream) -> None``, the subject
from ``reports.subjects``), one row here and its test; the command's ``--format`` choices and
help follow from the table. The loaders import inside the function so a command loads only the
renderer it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from policy_engine.reports.formats import FormatTable, OutputFormat
from policy_engine.reports.subjects import CheckLoadFailure, CheckOutput, ExplainOutput, FitOutput, SimulateOutput

if TYPE_CHECKING:
    from graphviz import Digraph


@dataclass(frozen=True)
class CheckRenderer:
    """A ``check`` format: the report, and (for machine formats) a document for input that did not load."""

    render: Callable[[CheckOutput, TextIO], None]
    load_failure: Callable[[CheckLoadFailure, TextIO], None] | None = None


SimulateRenderer = Callable[[SimulateOutput, TextIO], None]
ExplainRenderer = Callable[[ExplainOutput, TextIO], None]


def _check_text() -> CheckRenderer:
    from policy_engine.reports import check_text

    return CheckRenderer(check_text.write)


def _check_json() -> CheckRenderer:
    from policy_engine.reports import check_json

    return CheckRenderer(check_json.write, check_json.write_load_failure)


def _check_sarif() -> CheckRenderer:
    from policy_engine.reports import check_sarif

    return CheckRenderer(check_sarif.write, check_sarif.write_load_failure)


def _check_markdown() -> CheckRenderer:
    from policy_engine.reports import check_markdown

    return CheckRenderer(check_markdown.write, check_markdown.write_load_failure)


CHECK_FORMATS = FormatTable("check", [
    OutputFormat("text", "tables for people", _check_text),
    OutputFormat("json", "findings and summary", _check_json),
    OutputFormat("sarif", "code scanning", _check_sarif),
    OutputFormat("markdown", "a pull-request comment or CI job summary", _check_markdown),
])


def _simulate_text() -> SimulateRenderer:
    from policy_engine.reports import simulate_text

    return simulate_text.write


def _simulate_json() -> SimulateRenderer:
    from policy_engine.reports import simulate_json

    return simulate_json.write


def _simulate_markdown() -> SimulateRenderer:
    from policy_engine.reports import simulate_markdown

    return simulate_markdown.write


SIMULATE_FORMATS = FormatTable("simulate", [
    OutputFormat("text", "tables for people", _simulate_text),
    OutputFormat("json", "every job, every share and the summary, for scripts", _simulate_json),
    OutputFormat("markdown", "a compact summary for a pull-request comment or CI job summary", _simulate_markdown),
])


def _explain_text() -> ExplainRenderer:
    from policy_engine.reports import explain_text

    return explain_text.write


EXPLAIN_FORMATS = FormatTable("explain", [
    OutputFormat("text", "one sentence a line, under its topic, for people", _explain_text),
])

FitRenderer = Callable[[FitOutput, TextIO], None]


def _fit_text() -> FitRenderer:
    from policy_engine.reports import fit_text

    return fit_text.write


def _fit_json() -> FitRenderer:
    from policy_engine.reports import fit_json

    return fit_json.write


FIT_FORMATS = FormatTable("fit", [
    OutputFormat("text", "one row per share and every note, for people", _fit_text),
    OutputFormat("json", "per share, what was fitted, and the profile, for scripts", _fit_json),
])

#: ``graph -o FILE``: the picture (or its DOT source) written to ``FILE``.
GraphRenderer = Callable[["Digraph", Path], None]


def _graph_svg() -> GraphRenderer:
    from policy_engine.reports import borrow_graph_render

    return borrow_graph_render.write_svg


def _graph_png() -> GraphRenderer:
    from policy_engine.reports import borrow_graph_render

    return borrow_graph_render.write_png


def _graph_dot() -> GraphRenderer:
    from policy_engine.reports import borrow_graph_render

    return borrow_graph_render.write_dot


#: Chosen by the suffix of ``-o FILE``; without ``-o`` the default, DOT, goes to standard output.
GRAPH_FORMATS = FormatTable("graph", [
    OutputFormat("svg", "a picture for a browser or a wiki page", _graph_svg, (".svg",)),
    OutputFormat("png", "a picture for a chat or a slide", _graph_png, (".png",)),
    OutputFormat("dot", "Graphviz source, drawn by anything that reads DOT", _graph_dot, (".dot", ".gv")),
], default="dot")
