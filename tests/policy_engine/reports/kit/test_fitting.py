"""Tables fitted to a terminal's width (``reports.kit.fitting``): never wider, no header broken inside a word,
no figure broken inside a value; in a pipe the full-width table as before."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

from policy_engine.reports.kit import terminal
from policy_engine.reports.kit.fitting import fit, wrap
from policy_engine.reports.kit.safe_text import rich_text
from policy_engine.reports.tables import share_comparison as sc

HEAD = ("share", "instance type", "jobs", "wait p50", "wait p95", "preemptions", "own utilisation (%)",
        "instance-hours lost", "cost (instance-hours, its bill)")
FIGURES = ("1,205 → 1,205 (±0)", "4h 13m → 5h 28m (+1h 14m)", "2d 6h → 2d 13h (+7h 2m)", "1 → 7 (+6)",
           "72.0% → 93.1% (+21.0 points)", "4.72 → 7.38 (+2.66)", "937.47 → 940.12 (+2.66)")


def _table(shares: int = 9) -> Table:
    rows = [(f"training/team-{i}", "ml.p4d.24xlarge", *FIGURES) for i in range(shares)]
    return sc.rich_table("Per share and instance type", HEAD, rows, caption=sc.LEGEND)


def _printed(table: Table, width: int) -> str:
    buffer = io.StringIO()
    terminal.console(fit=True, file=buffer, width=width, color_system=None).print(table)
    return buffer.getvalue()


def _cells(screen: str) -> list[str]:
    """Every cell line of the boxed or compact tables on ``screen``."""
    return [cell.strip() for line in screen.splitlines() for cell in re.split(r"[│┃]| {2,}", line) if cell.strip()]


@pytest.mark.parametrize("width", [60, 80, 100, 120, 160])
def test_a_wide_before_after_table_fits_every_width_and_keeps_headers_and_values_whole(width):
    screen = _printed(_table(), width)
    assert max(len(line.rstrip()) for line in screen.splitlines()) <= width
    tokens = set(screen.split())
    for word in {w for header in HEAD for w in header.split()}:  # every header word whole somewhere
        assert word in tokens, (word, screen)
    for value in ("4h 13m", "5h 28m", "(+1h 14m)", "72.0%", "(+21.0 points)", "training/team-8"):
        assert value in screen, (value, screen)
    for cell in _cells(screen):  # a difference opened in a figure's line closes on it: never split
        if re.search(r"\([+−±]", cell):
            assert cell.count("(") == cell.count(")"), (cell, screen)


def test_a_table_that_fits_is_printed_as_it_is():
    table = _table(2)
    natural = io.StringIO()
    Console(file=natural, width=400, color_system=None).print(table)
    width = max(len(line) for line in natural.getvalue().splitlines())
    assert fit(table, Console(width=width)) == [table]
    assert _printed(table, width) == natural.getvalue()


def test_split_parts_repeat_the_names_and_the_caption_comes_last():
    parts = fit(_table(), Console(width=80, color_system=None))
    assert len(parts) > 1
    assert all([str(c.header) for c in part.columns][:2] == ["share", "instance type"] for part in parts)
    assert [part.caption is not None for part in parts] == [False] * (len(parts) - 1) + [True]
    assert str(parts[0].title).endswith(f"(part 1 of {len(parts)})")
    shown = [str(c.header) for part in parts for c in part.columns[2:]]
    assert [h.replace("\n", " ") for h in shown] == list(HEAD[2:])  # every figure once, in order


def test_a_terminal_too_narrow_for_one_figure_beside_the_names_stacks_each_row():
    screen = _printed(_table(2), 44)
    assert max(len(line.rstrip()) for line in screen.splitlines()) <= 44
    assert "training/team-1" in screen and "ml.p4d.24xlarge" in screen
    assert "4h 13m →" in screen and "(+1h 14m)" in screen


def test_a_piece_wider_than_the_terminal_is_kept_whole_on_its_own_line_rather_than_folded():
    grid = Table.grid(padding=(0, 2))
    grid.add_column(justify="right")
    grid.add_column()
    grid.add_row("advice", "try " + "x" * 90 + " then look")
    screen = _printed(grid, 60)
    assert "x" * 90 in screen.split()  # whole, to copy: the terminal wraps it, nothing here cuts it
    assert all(len(line.rstrip()) <= 60 for line in screen.splitlines() if "x" * 90 not in line)


def _unbreakable(line: str) -> bool:
    """A line that is one piece with nowhere to break it (no space, ``/``, ``_`` or ``.``)."""
    return not re.search(r"[ /_.]", line.strip())


@settings(max_examples=80, deadline=None)
@given(width=st.integers(0, 300), shares=st.integers(1, 4))
def test_any_width_even_nonsense_gives_the_whole_table_and_no_word_cut(width, shares):
    rows = [(f"training/team-{i}", "ml.p4d.24xlarge", *FIGURES) for i in range(shares)]
    table = sc.rich_table("Per share and instance type", HEAD, rows, caption=sc.LEGEND)
    screen = _printed(table, width)
    laid_out = max(width, terminal.MIN_WIDTH)
    assert all(len(line.rstrip()) <= laid_out or _unbreakable(line) for line in screen.splitlines()), screen
    tokens = set(re.split(r"[\s│┃:]+", screen))
    for word in {w for header in HEAD for w in header.split()} - {"(instance-hours,"}:
        assert word.strip(",") in tokens or word in tokens, (word, screen)
    for value in ("4h 13m", "5h 28m", "(+1h 14m)", "training/team-0"):
        assert value in screen.replace("\n", " ") or value.replace(" ", "") in screen, (value, screen)


def test_a_stacked_row_says_which_number_is_which_axis():
    table = Table(title="Best runs")
    table.add_column("#", justify="right")
    for axis in ("borrow_limit", "transfer"):
        table.add_column(axis)
    for name in ("max(wait_p95)", "util ml.p5.48xlarge", "util ml.p4d.24xlarge", "wait p95", "preemptions"):
        table.add_column(name, justify="right")
    table.add_row("1", "100", "0", "29d 8h", "73.8%", "50.1%", "6h 29m", "208")
    screen = _printed(table, 40)
    assert "borrow_limit=100, transfer=0" in screen, screen
    assert "1 100 0" not in screen


def test_a_prose_column_is_split_off_rather_than_squeezed_below_its_floor():
    table = Table(title="Why jobs waited")
    for name in ("share", "instance type", "cause"):
        table.add_column(name)
    for name in ("wait-hours", "% of the share's wait", "jobs it held"):
        table.add_column(name, justify="right")
    for cause in ("behind the head of its line", "requeued after a preemption", "at its limit, cannot borrow more"):
        table.add_row("training/foundation", "ml.p5.48xlarge", cause, "74,598.6", "96.9%", "163")
    screen = _printed(table, 80)
    assert max(len(line.rstrip()) for line in screen.splitlines()) <= 80
    for words in ("behind the head of its", "at its limit, cannot"):  # the column kept 24 cells wide, not 10
        assert words in screen, screen
    assert len(screen.splitlines()) < 30


def test_at_20_columns_names_break_only_after_a_slash_or_underscore():
    table = Table(title="Shares")
    table.add_column("share")
    table.add_column("strategy")
    for name in ("preemptions", "borrowed (inst)"):
        table.add_column(name, justify="right")
    table.add_row("training/foundation-models", "LEND_AND_BORROW", "66", "0.28")
    screen = _printed(table, 20)
    tokens = set(re.split(r"[\s│┃:]+", screen))
    assert {"preemptions", "borrowed", "(inst)", "66", "0.28"} <= tokens, screen
    assert "training/" in screen and "foundation-models" in tokens, screen
    assert "LEND_AND_BORROW" in screen or "LEND_AND_" in tokens, screen
    assert all(len(line.rstrip()) <= 20 for line in screen.splitlines()), screen


def test_figures_break_only_between_their_parts():
    assert wrap(rich_text("4d 0h → 2d 18h (−1d 6h)"), 10, figure=True).plain == "4d 0h →\n2d 18h\n(−1d 6h)"
    assert wrap(rich_text("mean borrowed (inst)"), 8, figure=False).plain == "mean\nborrowed\n(inst)"


@settings(max_examples=60, deadline=None)
@given(width=st.integers(30, 200), shares=st.integers(1, 6),
       names=st.lists(st.text("abcdefgh-/", min_size=1, max_size=30), min_size=1, max_size=6))
def test_no_line_is_ever_wider_than_the_terminal(width, shares, names):
    rows = [(f"{names[i % len(names)]}", "ml.g5.12xlarge", *FIGURES) for i in range(shares)]
    screen = _printed(sc.rich_table("t", HEAD, rows, caption="a caption"), width)
    assert max(len(line.rstrip()) for line in screen.splitlines()) <= width


def test_in_a_pipe_a_table_wider_than_the_file_width_is_printed_whole():
    stream = io.StringIO()  # not a terminal
    console = terminal.for_stream(stream, file_width=100)
    console.print(_table(2))
    lines = stream.getvalue().splitlines()
    assert max(map(len, lines)) > 100  # at its own width, not folded into 100 columns
    assert any("4h 13m → 5h 28m (+1h 14m)" in line for line in lines)
    assert any("cost (instance-hours, its bill)" in line for line in lines)
