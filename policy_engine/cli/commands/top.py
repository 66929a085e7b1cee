"""``batch-quota top --queue NAME``: a live, read-only view of a quota-managed job queue, per share and instance type.

Refreshed every ``--interval`` seconds full screen (keys: ``q`` quits, ``s`` sorts, ``/`` filters);
one table when standard output is not a terminal or with ``--once`` (``--format json`` too).
Works against AWS or ``batch-quota serve`` (``AWS_ENDPOINT_URL_BATCH``). Exit 0; 2 when a call
fails before the first screen (later failures are shown on the screen and retried).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from policy_engine.cli.commands.aws_options import aws_options, client_options, connect, exits_on_aws_errors
from policy_engine.cli.commands.shared import EXIT_OK, FiniteFloatRange, SafePath, fail_input
from policy_engine.reports.registry import TOP_FORMATS

if TYPE_CHECKING:
    from rich.console import Console

    from policy_engine.adapters.aws.queue_figures import QueueFigures, QueueReader

#: Columns of the one-shot table when standard output is not a terminal (rich would assume 80).
PIPE_WIDTH = 200


@click.command("top")
@click.option("--queue", required=True, metavar="NAME", help="The quota-managed job queue (name or ARN).")
@click.option("--interval", type=FiniteFloatRange(min=0.2), default=2.0, show_default=True, metavar="SECONDS",
              help="Seconds between refreshes.")
@click.option("--once", is_flag=True, help="Print one table and exit (the default when stdout is not a terminal).")
@TOP_FORMATS.option()
@click.option("--events", "events_file", type=SafePath(dir_okay=False), metavar="FILE.jsonl",
              help="EventBridge service-job events (as `serve --events` writes them) to count each share's "
                   "preemptions in the last hour; without it the column shows '-'.")
@click.option("--verbose", is_flag=True, help="Show the API calls each refresh made.")
@aws_options
def command(queue: str, interval: float, once: bool, output_format: str, events_file: str | None, verbose: bool,
            **connection: Any) -> None:
    """Show QUEUE's shares: limit, own use, borrowed, lent, waiting jobs, head job, preemptions; refreshed live."""
    from policy_engine.adapters.aws.queue_figures import PreemptionLog, QueueReader

    live = not once and sys.stdout.isatty() and sys.stdin.isatty()
    if live and output_format != TOP_FORMATS.default:  # the live screen is text; other formats are one read
        fail_input(["--format json: prints one read; add --once (or redirect standard output)"])
    log = PreemptionLog(events_file) if events_file else None
    if log is not None:
        with _events_errors():  # a FIFO or /dev/zero is refused before the first call, not after it
            log.read()
    warnings: list[str] = []  # about the events file: shown under the screen, or on stderr with --once

    def preemptions(now_ms: int) -> Mapping[tuple[str, str], int]:
        assert log is not None
        counts = log.counts(queue, now_ms)
        if log.unreadable:
            warnings[:] = [f"{events_file}: {log.unreadable} line(s) not service-job events; not counted"]
        return counts

    counter = preemptions if log is not None else None
    with exits_on_aws_errors(), _events_errors():
        reader = QueueReader(connect(client_options(**connection)), queue)
        figures = reader.read(counter)
    if not live:
        _print_once(figures, output_format, verbose)
        for line in warnings:
            click.echo(f"warning: {line}", err=True)
        raise SystemExit(EXIT_OK)
    _run_live(reader, figures, counter, interval, verbose, warnings)
    raise SystemExit(EXIT_OK)


@contextmanager
def _events_errors() -> Iterator[None]:
    """An events file that cannot be followed (a FIFO, ``/dev/zero``, a folder) -> one line, exit 2."""
    from policy_engine.adapters.aws.queue_figures import EventsFileError

    try:
        yield
    except EventsFileError as error:
        fail_input([str(error)])


def _print_once(figures: QueueFigures, output_format: str, verbose: bool) -> None:
    from policy_engine.reports.top import screen as top_view

    TOP_FORMATS.renderer(output_format)(figures, sys.stdout)
    if verbose:
        click.echo(top_view.calls_line(figures), err=True)


class _Screen:
    """The live view's state: the last figures, the sort, the filter being typed, the last error."""

    def __init__(self, figures: QueueFigures, interval: float, verbose: bool, warnings: list[str]) -> None:
        self.figures = figures
        self.warnings = warnings
        self.interval = interval
        self.verbose = verbose
        self.sort = 0
        self.filter = ""
        self.typing: str | None = None  # the filter being typed after '/', until Enter or Esc
        self.error = ""

    def render(self) -> Any:
        from rich.text import Text

        from policy_engine.reports.top import screen as top_view

        footer = [Text(f"{top_view.clock_text(self.figures)}, every {self.interval:g}s; "
                       f"sort: {top_view.SORTS[self.sort].name}; "
                       f"filter: {self.filter or '(none)'}   q quit  s sort  / filter")]
        if self.typing is not None:
            footer.append(Text(f"filter: {self.typing}_  (Enter applies, Esc cancels)"))
        if self.verbose:
            footer.append(Text(top_view.calls_line(self.figures)))
        footer += [Text(f"warning: {line}") for line in self.warnings]
        if self.error:
            footer.append(Text(f"error: {self.error} (showing the last figures; retrying)"))
        return top_view.screen(self.figures, top_view.SORTS[self.sort], self.filter, footer)

    def key(self, char: str) -> bool:
        """Apply one key; ``False`` when it quits."""
        from policy_engine.reports.top import screen as top_view

        if self.typing is not None:
            if char in ("\r", "\n"):
                self.filter, self.typing = self.typing, None
            elif char == "\x1b":
                self.typing = None
            elif char in ("\x7f", "\b"):
                self.typing = self.typing[:-1]
            elif char.isprintable():
                self.typing += char
            return True
        if char in ("q", "Q", "\x03"):
            return False
        if char == "s":
            self.sort = (self.sort + 1) % len(top_view.SORTS)
        elif char == "/":
            self.typing = ""
        return True


def _run_live(reader: QueueReader, figures: QueueFigures,
              preemptions: Callable[[int], Mapping[tuple[str, str], int]] | None, interval: float,
              verbose: bool, warnings: list[str]) -> None:
    from rich.console import Console
    from rich.live import Live

    from policy_engine.adapters.aws.clients import AwsError
    from policy_engine.adapters.aws.queue_figures import EventsFileError

    view = _Screen(figures, interval, verbose, warnings)
    console: Console = Console(highlight=False)
    with _keys(sys.stdin.fileno()) as read_key, Live(view.render(), console=console, screen=True,
                                                       auto_refresh=False) as live:
        due = time.monotonic() + interval
        while True:
            wait = due - time.monotonic()
            if wait <= 0:
                try:
                    view.figures = reader.read(preemptions)
                    view.error = ""
                except AwsError as error:
                    view.error = error.line
                except EventsFileError as error:  # the events file became a FIFO or a folder: said, not followed
                    view.error = str(error)
                due = time.monotonic() + interval
                live.update(view.render(), refresh=True)
                continue
            char = read_key(wait)
            if char is None:
                continue
            if not view.key(char):
                return
            live.update(view.render(), refresh=True)


@contextmanager
def _keys(fd: int) -> Iterator[Callable[[float], str | None]]:
    """The terminal in cbreak mode (keys arrive one at a time, unechoed); yields ``read(timeout)``."""
    import select
    import termios
    import tty

    saved = termios.tcgetattr(fd)

    def read(timeout: float) -> str | None:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return None
        data = os.read(fd, 1)
        if data == b"\x1b":  # an escape sequence (an arrow key) arrives at once: drop the rest of it
            while select.select([fd], [], [], 0.01)[0]:
                os.read(fd, 16)
        return data.decode("latin-1") if data else "q"  # end of input: quit

    try:
        tty.setcbreak(fd)
        yield read
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
