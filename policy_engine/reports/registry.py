"""The output formats of every command that prints results (``--format``), and of ``graph``'s files.

Adding a format is one renderer module (a function ``(subject, stream) -> None``, the subject
from ``reports.kit.subjects``), one row here and its test; the command's ``--format`` choices and
help follow from the table. The loaders import inside the function so a command loads only the
renderer it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TextIO, TypeVar

from policy_engine.reports.kit.formats import FormatTable, OutputFormat
from policy_engine.reports.kit.subjects import (
    CheckLoadFailure,
    CheckOutput,
    DiffLoadFailure,
    DiffOutput,
    DriftOutput,
    ExplainOutput,
    FitOutput,
    GenerateOutput,
    SimulateOutput,
    WalkthroughStep,
)

if TYPE_CHECKING:
    from graphviz import Digraph

    from policy_engine.comparison.subjects import CompareOutput
    from policy_engine.sweep.subjects import SweepOutput, TuneOutput


Subject = TypeVar("Subject")
Failure = TypeVar("Failure")


@dataclass(frozen=True)
class DocumentRenderer(Generic[Subject, Failure]):
    """A format of a command CI reads: the report, and (for machine formats) a document for input that did
    not load, so whatever stdout holds says so (the command then exits 2)."""

    render: Callable[[Subject, TextIO], None]
    load_failure: Callable[[Failure, TextIO], None] | None = None


class CheckRenderer(DocumentRenderer[CheckOutput, CheckLoadFailure]):
    """A ``check`` format."""


class DiffRenderer(DocumentRenderer[DiffOutput, DiffLoadFailure]):
    """A ``diff`` format."""


SimulateRenderer = Callable[[SimulateOutput, TextIO], None]
ExplainRenderer = Callable[[ExplainOutput, TextIO], None]
DriftRenderer = Callable[[DriftOutput, TextIO], None]
SweepRenderer = Callable[["SweepOutput", TextIO], None]  # named: check never loads the sweep package
TuneRenderer = Callable[["TuneOutput", TextIO], None]
WalkthroughRenderer = Callable[[Sequence[WalkthroughStep], TextIO], None]
GenerateRenderer = Callable[[GenerateOutput, TextIO], None]


def _check_text() -> CheckRenderer:
    from policy_engine.reports.check import text as check_text

    return CheckRenderer(check_text.write)


def _check_json() -> CheckRenderer:
    from policy_engine.reports.check import json as check_json

    return CheckRenderer(check_json.write, check_json.write_load_failure)


def _check_sarif() -> CheckRenderer:
    from policy_engine.reports.check import sarif as check_sarif

    return CheckRenderer(check_sarif.write, check_sarif.write_load_failure)


def _check_markdown() -> CheckRenderer:
    from policy_engine.reports.check import markdown as check_markdown

    return CheckRenderer(check_markdown.write, check_markdown.write_load_failure)


CHECK_FORMATS = FormatTable("check", [
    OutputFormat("text", "tables for people", _check_text),
    OutputFormat("json", "findings and summary", _check_json),
    OutputFormat("sarif", "code scanning", _check_sarif),
    OutputFormat("markdown", "a pull-request comment or CI job summary", _check_markdown),
])


def _simulate_text() -> SimulateRenderer:
    from policy_engine.reports.simulate import text as simulate_text

    return simulate_text.write


def _simulate_json() -> SimulateRenderer:
    from policy_engine.reports.simulate import json as simulate_json

    return simulate_json.write


def _simulate_markdown() -> SimulateRenderer:
    from policy_engine.reports.simulate import markdown as simulate_markdown

    return simulate_markdown.write


SIMULATE_FORMATS = FormatTable("simulate", [
    OutputFormat("text", "tables for people", _simulate_text),
    OutputFormat("json", "every job, every share and the summary, for scripts", _simulate_json),
    OutputFormat("markdown", "a compact summary for a pull-request comment or CI job summary", _simulate_markdown),
])


def _explain_text() -> ExplainRenderer:
    from policy_engine.reports.explain import text as explain_text

    return explain_text.write


def _explain_json() -> ExplainRenderer:
    from policy_engine.reports.explain import json as explain_json

    return explain_json.write


EXPLAIN_FORMATS = FormatTable("explain", [
    OutputFormat("text", "one sentence a line, under its topic, for people", _explain_text),
    OutputFormat("json", "the sentences and the share's figures, for scripts", _explain_json),
])

def _diff_text() -> DiffRenderer:
    from policy_engine.reports.diff import text as diff_text

    return DiffRenderer(diff_text.write)


def _diff_json() -> DiffRenderer:
    from policy_engine.reports.diff import json as diff_json

    return DiffRenderer(diff_json.write, diff_json.write_load_failure)


def _diff_markdown() -> DiffRenderer:
    from policy_engine.reports.diff import markdown as diff_markdown

    return DiffRenderer(diff_markdown.write, diff_markdown.write_load_failure)


DIFF_FORMATS = FormatTable("diff", [
    OutputFormat("text", "sections for people", _diff_text),
    OutputFormat("json", "every change, guarantee, finding and hazard, for scripts", _diff_json),
    OutputFormat("markdown", "a pull-request comment that fits GitHub's limit", _diff_markdown),
])


def _drift_text() -> DriftRenderer:
    from policy_engine.reports.drift import text as drift_text

    return drift_text.write


def _drift_json() -> DriftRenderer:
    from policy_engine.reports.drift import json as drift_json

    return drift_json.write


def _drift_markdown() -> DriftRenderer:
    from policy_engine.reports.drift import markdown as drift_markdown

    return drift_markdown.write


DRIFT_FORMATS = FormatTable("drift", [
    OutputFormat("text", "one line per difference, for people", _drift_text),
    OutputFormat("json", "every difference and unreadable call, for scripts", _drift_json),
    OutputFormat("markdown", "a table for a pull-request comment", _drift_markdown),
])


def _sweep_text() -> SweepRenderer:
    from policy_engine.reports.sweep import text as sweep_text

    return sweep_text.write


def _sweep_json() -> SweepRenderer:
    from policy_engine.reports.sweep import json as sweep_json

    return sweep_json.write


def _sweep_csv() -> SweepRenderer:
    from policy_engine.reports.sweep import csv as sweep_csv

    return sweep_csv.write


SWEEP_FORMATS = FormatTable("sweep", [
    OutputFormat("text", "the best runs as a table, for people", _sweep_text),
    OutputFormat("json", "every run, for scripts", _sweep_json),
    OutputFormat("csv", "one row per run, for a spreadsheet", _sweep_csv),
])


def _tune_text() -> TuneRenderer:
    from policy_engine.reports.tune import text as tune_text

    return tune_text.write


def _tune_json() -> TuneRenderer:
    from policy_engine.reports.tune import json as tune_json

    return tune_json.write


TUNE_FORMATS = FormatTable("tune", [
    OutputFormat("text", "the recommendation and its evidence, for people", _tune_text),
    OutputFormat("json", "the recommendation, the front and every run, for scripts", _tune_json),
])

#: ``compare``: designs side by side (``comparison.subjects.CompareOutput``; named, so check never loads it).
CompareRenderer = Callable[["CompareOutput", TextIO], None]


def _compare_text() -> CompareRenderer:
    from policy_engine.reports.compare import text as compare_text

    return compare_text.write


def _compare_markdown() -> CompareRenderer:
    from policy_engine.reports.compare import markdown as compare_markdown

    return compare_markdown.write


def _compare_json() -> CompareRenderer:
    from policy_engine.reports.compare import json as compare_json

    return compare_json.write


COMPARE_FORMATS = FormatTable("compare", [
    OutputFormat("text", "the designs' figures per share side by side, with the differences, for people",
                 _compare_text),
    OutputFormat("markdown", "the same tables as GitHub-flavoured markdown, for a pull request", _compare_markdown),
    OutputFormat("json", "every figure and every difference as a number, for scripts", _compare_json),
])


def _walkthrough_text() -> WalkthroughRenderer:
    from policy_engine.reports.walkthrough import text as walkthrough_text

    return walkthrough_text.write


def _walkthrough_json() -> WalkthroughRenderer:
    from policy_engine.reports.walkthrough import json as walkthrough_json

    return walkthrough_json.write


WALKTHROUGH_FORMATS = FormatTable("walkthrough", [
    OutputFormat("text", "a jobs table per step, for people", _walkthrough_text),
    OutputFormat("json", "every job after every step, for scripts", _walkthrough_json),
])


def _generate_text() -> GenerateRenderer:
    from policy_engine.reports.generate import text as generate_text

    return generate_text.write


def _generate_json() -> GenerateRenderer:
    from policy_engine.reports.generate import json as generate_json

    return generate_json.write


GENERATE_FORMATS = FormatTable("generate", [
    OutputFormat("text", "what was written, for people", _generate_text),
    OutputFormat("json", "the files written and the job count, for scripts", _generate_json),
])

FitRenderer = Callable[[FitOutput, TextIO], None]


def _fit_text() -> FitRenderer:
    from policy_engine.reports.fit import text as fit_text

    return fit_text.write


def _fit_json() -> FitRenderer:
    from policy_engine.reports.fit import json as fit_json

    return fit_json.write


FIT_FORMATS = FormatTable("fit", [
    OutputFormat("text", "one row per share and every note, for people", _fit_text),
    OutputFormat("json", "per share, what was fitted, and the profile, for scripts", _fit_json),
])

#: ``top --once``: one read of a queue's figures (``adapters.aws.queue_figures.QueueFigures``).
TopRenderer = Callable[[Any, TextIO], None]


def _top_text() -> TopRenderer:
    from policy_engine.reports.top import screen as top_view

    return top_view.write_text


def _top_json() -> TopRenderer:
    from policy_engine.reports.top import screen as top_view

    return top_view.write_json


TOP_FORMATS = FormatTable("top", [
    OutputFormat("text", "the screen's tables, once, for people", _top_text),
    OutputFormat("json", "every figure (durations in seconds, times in epoch milliseconds), for scripts", _top_json),
])

#: ``graph -o FILE``: the picture (or its DOT source) written to ``FILE``.
GraphRenderer = Callable[["Digraph", Path], None]


def _graph_svg() -> GraphRenderer:
    from policy_engine.reports.graph import borrow_graph as borrow_graph_render

    return borrow_graph_render.write_svg


def _graph_png() -> GraphRenderer:
    from policy_engine.reports.graph import borrow_graph as borrow_graph_render

    return borrow_graph_render.write_png


def _graph_dot() -> GraphRenderer:
    from policy_engine.reports.graph import borrow_graph as borrow_graph_render

    return borrow_graph_render.write_dot


#: Chosen by the suffix of ``-o FILE``; without ``-o`` the default, DOT, goes to standard output.
GRAPH_FORMATS = FormatTable("graph", [
    OutputFormat("svg", "a picture for a browser or a wiki page", _graph_svg, (".svg",)),
    OutputFormat("png", "a picture for a chat or a slide", _graph_png, (".png",)),
    OutputFormat("dot", "Graphviz source, drawn by anything that reads DOT", _graph_dot, (".dot", ".gv")),
], default="dot")
