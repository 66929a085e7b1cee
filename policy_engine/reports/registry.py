"""The output formats of ``check``, ``simulate``, ``explain`` and ``graph``, and what their renderers are given.

Adding a format is one renderer module (a function ``(subject, stream) -> None``), one row
here and its test; the command's ``--format`` choices and help follow from the table. The
loaders import inside the function so a command loads only the renderer it runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from policy_engine.reports.formats import FormatTable, OutputFormat

if TYPE_CHECKING:
    from graphviz import Digraph

    from policy_engine.checks import CheckReport
    from policy_engine.loading import LoadError
    from policy_engine.model import Topology
    from policy_engine.simulation.calibration import ShareCalibration
    from policy_engine.simulation.results import SimulationResult


@dataclass(frozen=True)
class CheckOutput:
    """What ``check`` found, with where the topology came from (``file`` locates findings for SARIF)."""

    report: CheckReport
    topology: Topology
    source: str  # as the header names it: the path given, ``(stdin)`` or ``(embedded example)``
    file: Path
    strict: bool = False
    root: Path | None = None  # file locations are relative to this directory (default: the working directory)

    def uri(self) -> str:
        return file_uri(self.file, self.root)

    def lines(self) -> Mapping[tuple[str | int, ...], int]:
        """Line numbers per object path (YAML only); a file that loaded once reads again without problems."""
        from policy_engine.loading import LoadError, read_data

        if self.file.suffix.lower() not in (".yaml", ".yml"):
            return {}
        try:
            return dict(read_data(self.file)[1])
        except LoadError:
            return {}


@dataclass(frozen=True)
class CheckLoadFailure:
    """A topology ``check`` could not load: the document CI reads says so (the command then exits 2)."""

    error: LoadError
    source: str  # the argument as given
    file: Path
    root: Path | None = None

    @property
    def problems(self) -> list[str]:
        """One line per problem, as the command prints them on stderr."""
        return self.error.problems

    def uri(self) -> str:
        return file_uri(self.file, self.root)


def file_uri(path: Path, root: Path | None = None) -> str:
    """The file as code scanning wants it: relative to ``root`` (default: the working directory, the repository
    root in CI), as the user named it, so a symlink in the repository is reported as itself and not as its target.
    Outside ``root`` the uri is an absolute ``file://`` one, which code scanning cannot place on a diff."""
    base = Path(os.path.abspath(root or Path.cwd()))
    absolute = Path(os.path.abspath(path))  # normalises ``..`` without resolving symlinks
    if absolute.is_relative_to(base):
        return absolute.relative_to(base).as_posix()
    if absolute.resolve().is_relative_to(base.resolve()):  # e.g. the working directory is reached via a symlink
        return absolute.resolve().relative_to(base.resolve()).as_posix()
    return absolute.as_uri()


@dataclass(frozen=True)
class CheckRenderer:
    """A ``check`` format: the report, and (for machine formats) a document for input that did not load."""

    render: Callable[[CheckOutput, TextIO], None]
    load_failure: Callable[[CheckLoadFailure, TextIO], None] | None = None


@dataclass(frozen=True)
class SimulateOutput:
    """A finished simulation; ``calibration`` compares it with observed jobs when the workload has them."""

    result: SimulationResult
    source: str
    calibration: list[ShareCalibration] | None = None


@dataclass(frozen=True)
class ExplainOutput:
    """One share (``QUEUE/SHARE``) of a checked topology, to be explained to its team."""

    topology: Topology
    share: str
    report: CheckReport


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
