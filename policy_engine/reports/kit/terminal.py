"""The rich ``Console`` that the text reports of ``explain``, ``simulate``, ``walkthrough``, ``sweep`` and
``tune`` print with: styled on a terminal, plain everywhere else. (``check`` renders its text into a
string first, with its own ``Console``, and prints it with click.)

rich already drops colour for a non-terminal and with ``NO_COLOR``, but keeps bold and dim under
``NO_COLOR``; no colour system at all means no ANSI escape of any kind, which is what people who
set ``NO_COLOR`` (and the logs they paste) expect. In a file or a pipe a table is laid out by ``plain_tables`` when it
can be (the bytes rich prints, without rich's per-cell work: a million-job ``simulate`` prints a 1,000-row table).
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterable
from typing import Any, TextIO

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table

from policy_engine.reports.kit import plain_tables
from policy_engine.reports.kit.fitting import MIN_WIDTH, Listed, fit


class _Console(Console):
    """rich's ``Console``, except that a closed pipe is the command line's to report (one line, exit 2):
    rich would end the process with exit 1, which means "a rule found an error"."""

    #: Fit every table to the width and wrap every line at it (a terminal: see ``reports.kit.fitting``).
    fit_tables = False
    #: Print a table wider than the width at its own width (a file or a pipe: nothing folded, no header cut).
    full_width_tables = False
    #: Lay out a table that needs none of rich's per-cell work itself (a file or a pipe: see ``plain_tables``).
    plain_tables = False

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    def print(self, *objects: Any, **options: Any) -> None:
        """rich's ``print``; on a terminal each table fitted to the width and no line left to the terminal to
        wrap (``soft_wrap`` would let it cut a word)."""
        if self.fit_tables:
            fitted = [fit(o, self) if isinstance(o, Table) else [o] for o in objects]
            if any(isinstance(part, Listed) for parts in fitted for part in parts):  # listed lines: never re-wrapped
                for parts in fitted:
                    for part in parts:
                        super().print(part, **{**options, "soft_wrap": isinstance(part, Listed)})
                return
            objects = tuple(Group(*parts) if len(parts) > 1 or isinstance(o, Table) else parts[0]
                            for o, parts in zip(objects, fitted, strict=True))
            options["soft_wrap"] = False
        elif self.full_width_tables and len(objects) == 1 and isinstance(objects[0], Table) and \
                _may_be_wider(objects[0], self.width):
            unbounded = self.options.update_width(_UNBOUNDED)
            natural = plain_tables.natural_width(objects[0], self, unbounded) \
                if self.plain_tables and type(objects[0]) is Table else None
            if natural is None:
                natural = Measurement.get(self, unbounded, objects[0]).maximum
            if natural > self.width:  # rich's ``print(width=...)`` only narrows: widen the console for this table
                width, self.width = self.width, natural
                try:
                    super().print(*objects, **options)
                finally:
                    self.width = width
                return
        super().print(*objects, **options)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        """rich's ``render``; a table that ``plain_tables`` lays out (the same bytes) skips rich's per-cell work."""
        if self.plain_tables and type(renderable) is Table:  # a subclass may render itself otherwise
            laid_out = plain_tables.segments(renderable, self, options or self.options)
            if laid_out is not None:
                return laid_out
        return super().render(renderable, options)


def _may_be_wider(table: Table, width: int) -> bool:
    """Whether ``table`` may be wider than ``width``: its cells' plain lengths, padding and borders added (a bound
    far cheaper than rich's measure, which a table of 5,000 rows would otherwise pay twice)."""
    total = 1 + 3 * len(table.columns)
    for column in table.columns:
        total += max((len(str(value)) for value in (column.header, *column.cells)), default=0)
        if total > width:
            return True
    return False


#: How wide a wide table may be when written to a file or a pipe: as wide as its cells, so no value is folded
#: mid-way (``4d 0h → 2d 18h (−1d`` / ``7h)``) for a reader or a ``grep``; a terminal keeps its own width.
FILE_WIDTH = 400
#: Wider than any table: a table's own width is measured against it.
_UNBOUNDED = 100_000




def width(fallback: int = 80) -> int:
    """The width a report is laid out for on a terminal: ``COLUMNS`` when it is a positive number, else the
    terminal's own width (``fallback`` when there is none), never below ``MIN_WIDTH``."""
    return max(MIN_WIDTH, shutil.get_terminal_size((fallback, 24)).columns)


def console(fit: bool = False, **options: Any) -> Console:
    """A ``Console`` (``options`` as rich's) that emits no ANSI escape when ``NO_COLOR`` is set; with ``fit``, every
    table it prints fits its width (``reports.kit.fitting``) and every line is wrapped at it."""
    return _console(fit, **options)


def _console(fit: bool, **options: Any) -> _Console:
    if "NO_COLOR" in os.environ:
        options["color_system"] = None
    out = _Console(**options)
    if out.width < MIN_WIDTH:  # ``COLUMNS=0`` or ``COLUMNS=5`` (or such a width asked for): see ``MIN_WIDTH``
        out.width = max(MIN_WIDTH, options["width"]) if "width" in options else width()
    out.fit_tables = fit
    return out


def for_stream(stream: TextIO, file_width: int = FILE_WIDTH, **options: Any) -> Console:
    """The console a text report prints to ``stream`` with: on a terminal as wide as the terminal (or ``COLUMNS``),
    every table fitted to it; in a file or a pipe ``file_width`` wide for text, and every table at its full width
    however wide (a reader or a ``grep`` never meets a folded value or a header cut mid-word)."""
    if stream.isatty():
        return _console(True, file=stream, **options)
    out = _console(False, file=stream, width=file_width, **options)
    out.full_width_tables = True
    out.plain_tables = True
    return out
