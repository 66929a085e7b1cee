"""The output formats of every command that prints results (``--format``), and of ``graph``'s files.

Adding a format is one renderer module (a function ``write(subject, stream) -> None``, the subject
from ``reports.kit.subjects``), one row here and its test; the command's ``--format`` choices and
help follow from the table. A row is data: the format's name, what it is for, and its renderer's
dotted module path, imported only when the format is chosen, so a command loads only the renderer
it runs.
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


#: ``check``: CI reads it, so every machine format also writes a document for input that did not load.
CHECK_FORMATS: FormatTable[CheckRenderer] = FormatTable("check", [
    OutputFormat("text", "tables for people", "policy_engine.reports.check.text"),
    OutputFormat("json", "findings and summary", "policy_engine.reports.check.json"),
    OutputFormat("sarif", "code scanning", "policy_engine.reports.check.sarif"),
    OutputFormat("markdown", "a pull-request comment or CI job summary", "policy_engine.reports.check.markdown"),
], document=CheckRenderer)

SIMULATE_FORMATS: FormatTable[SimulateRenderer] = FormatTable("simulate", [
    OutputFormat("text", "tables for people", "policy_engine.reports.simulate.text"),
    OutputFormat("json", "every job, every share and the summary, for scripts", "policy_engine.reports.simulate.json"),
    OutputFormat("markdown", "a compact summary for a pull-request comment or CI job summary",
                 "policy_engine.reports.simulate.markdown"),
])

EXPLAIN_FORMATS: FormatTable[ExplainRenderer] = FormatTable("explain", [
    OutputFormat("text", "one sentence a line, under its topic, for people", "policy_engine.reports.explain.text"),
    OutputFormat("json", "the sentences and the share's figures, for scripts", "policy_engine.reports.explain.json"),
])

#: ``diff``: CI reads it, as ``check``.
DIFF_FORMATS: FormatTable[DiffRenderer] = FormatTable("diff", [
    OutputFormat("text", "sections for people", "policy_engine.reports.diff.text"),
    OutputFormat("json", "every change, guarantee, finding and hazard, for scripts", "policy_engine.reports.diff.json"),
    OutputFormat("markdown", "a pull-request comment that fits GitHub's limit", "policy_engine.reports.diff.markdown"),
], document=DiffRenderer)

DRIFT_FORMATS: FormatTable[DriftRenderer] = FormatTable("drift", [
    OutputFormat("text", "one line per difference, for people", "policy_engine.reports.drift.text"),
    OutputFormat("json", "every difference and unreadable call, for scripts", "policy_engine.reports.drift.json"),
    OutputFormat("markdown", "a table for a pull-request comment", "policy_engine.reports.drift.markdown"),
])

SWEEP_FORMATS: FormatTable[SweepRenderer] = FormatTable("sweep", [
    OutputFormat("text", "the best runs as a table, for people", "policy_engine.reports.sweep.text"),
    OutputFormat("json", "every run, for scripts", "policy_engine.reports.sweep.json"),
    OutputFormat("csv", "one row per run, for a spreadsheet", "policy_engine.reports.sweep.csv"),
])

TUNE_FORMATS: FormatTable[TuneRenderer] = FormatTable("tune", [
    OutputFormat("text", "the recommendation and its evidence, for people", "policy_engine.reports.tune.text"),
    OutputFormat("json", "the recommendation, the front and every run, for scripts", "policy_engine.reports.tune.json"),
])

#: ``compare``: designs side by side (``comparison.subjects.CompareOutput``; named, so check never loads it).
CompareRenderer = Callable[["CompareOutput", TextIO], None]

COMPARE_FORMATS: FormatTable[CompareRenderer] = FormatTable("compare", [
    OutputFormat("text", "the designs' figures per share side by side, with the differences, for people",
                 "policy_engine.reports.compare.text"),
    OutputFormat("markdown", "the same tables as GitHub-flavoured markdown, for a pull request",
                 "policy_engine.reports.compare.markdown"),
    OutputFormat("json", "every figure and every difference as a number, for scripts",
                 "policy_engine.reports.compare.json"),
])

WALKTHROUGH_FORMATS: FormatTable[WalkthroughRenderer] = FormatTable("walkthrough", [
    OutputFormat("text", "a jobs table per step, for people", "policy_engine.reports.walkthrough.text"),
    OutputFormat("json", "every job after every step, for scripts", "policy_engine.reports.walkthrough.json"),
])

GENERATE_FORMATS: FormatTable[GenerateRenderer] = FormatTable("generate", [
    OutputFormat("text", "what was written, for people", "policy_engine.reports.generate.text"),
    OutputFormat("json", "the files written and the job count, for scripts", "policy_engine.reports.generate.json"),
])

FitRenderer = Callable[[FitOutput, TextIO], None]

FIT_FORMATS: FormatTable[FitRenderer] = FormatTable("fit", [
    OutputFormat("text", "one row per share and every note, for people", "policy_engine.reports.fit.text"),
    OutputFormat("json", "per share, what was fitted, and the profile, for scripts", "policy_engine.reports.fit.json"),
])

#: ``top --once``: one read of a queue's figures (``adapters.aws.queue_figures.QueueFigures``).
TopRenderer = Callable[[Any, TextIO], None]

TOP_FORMATS: FormatTable[TopRenderer] = FormatTable("top", [
    OutputFormat("text", "the screen's tables, once, for people", "policy_engine.reports.top.screen",
                 function="write_text"),
    OutputFormat("json", "every figure (durations in seconds, times in epoch milliseconds), for scripts",
                 "policy_engine.reports.top.screen", function="write_json"),
])

#: ``graph -o FILE``: the picture (or its DOT source) written to ``FILE``.
GraphRenderer = Callable[["Digraph", Path], None]

#: Chosen by the suffix of ``-o FILE``; without ``-o`` the default, DOT, goes to standard output.
GRAPH_FORMATS: FormatTable[GraphRenderer] = FormatTable("graph", [
    OutputFormat("svg", "a picture for a browser or a wiki page", "policy_engine.reports.graph.borrow_graph",
                 (".svg",), "write_svg"),
    OutputFormat("png", "a picture for a chat or a slide", "policy_engine.reports.graph.borrow_graph",
                 (".png",), "write_png"),
    OutputFormat("dot", "Graphviz source, drawn by anything that reads DOT", "policy_engine.reports.graph.borrow_graph",
                 (".dot", ".gv"), "write_dot"),
], default="dot")
