"""``plain_tables`` prints a table byte for byte as rich does, or leaves it to rich: drawn tables against rich's own
output, the fallbacks, and the simulate report through the file console with and without it."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.errors import MarkupError
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from policy_engine.reports.kit import plain_tables, terminal

#: Pieces of cell text: ASCII, Latin, Greek, CJK (two cells each), emoji (two cells), combining accents (zero),
#: fullwidth forms, the ideographic space (a two-cell space), no-break and other spaces.
PLAIN_PIECES = ["a", "Z", "7", "-", "/", ".", "%", ",", " ", "  ", "é", "e\u0301", "ß", "Ω", "ж", "漢", "字", "テ",
                "한", "😀", "🚀", "Ａ", "\u3000", "\xa0", "\u2003", "│", "…", "→", "(", ")", "!", "_"]
#: What ``plain_tables`` leaves to rich: line breaks and separators, a tab, controls, ZWJ sequences and
#: variation selectors, markup and emoji codes in a ``str`` (rich reads those).
ODD_PIECES = ["\n", "\t", "\x1b", "\x85", "\u2028", "👩\u200d👩\u200d👧", "❤\ufe0f", "\u200d", "\ufe0f", ":smile:",
              "[bold]b[/bold]", "\\[x]", "[", ":"]
BOXES = [box.HEAVY_HEAD, box.SQUARE, box.ROUNDED, box.ASCII, box.SIMPLE_HEAD, box.MINIMAL, box.DOUBLE_EDGE,
         box.HORIZONTALS, box.MARKDOWN]
JUSTIFY = ["left", "right", "center", "default", "full"]
OVERFLOW = ["fold", "crop", "ellipsis", "ignore"]


def _texts(pieces: st.SearchStrategy[str], max_size: int = 8) -> st.SearchStrategy[str]:
    return st.lists(pieces, max_size=max_size).map("".join)


def _cell(pieces: st.SearchStrategy[str]) -> st.SearchStrategy[str | Text]:
    """A cell as a ``str`` or a ``Text`` (its own justification and overflow sometimes, a styled span sometimes)."""
    text = _texts(pieces)
    styled = st.builds(lambda plain, justify, overflow, no_wrap, spanned:
                       _text(plain, justify, overflow, no_wrap, spanned),
                       text, st.sampled_from([None, *JUSTIFY]), st.sampled_from([None, *OVERFLOW]),
                       st.sampled_from([None, True, False]), st.booleans())
    return st.one_of(text, styled)


def _text(plain: str, justify: str | None, overflow: str | None, no_wrap: bool | None, spanned: bool) -> Text:
    text = Text(plain, style="bold", justify=justify, overflow=overflow, no_wrap=no_wrap)
    if spanned and len(plain) > 1:
        text.stylize("italic red", 0, len(plain) // 2)
    return text


@st.composite
def tables(draw: st.DrawFn, odd: bool = True, limits: bool = True) -> Table:
    """A table of 1-6 columns and 0-8 rows, some rows a group whose leading names are blank (as "why jobs waited"
    shows a share once), with or without a header, a title and a caption longer or shorter than the table; with
    ``odd``, half the tables have ``ODD_PIECES`` and any other character in their text, with ``limits`` half have
    columns' minimum, maximum and fixed widths."""
    pieces = st.one_of(st.sampled_from(PLAIN_PIECES + ODD_PIECES), st.characters(exclude_categories=["Cs"])) \
        if odd and draw(st.booleans()) else st.sampled_from(PLAIN_PIECES)
    limits = limits and draw(st.booleans())
    words = _texts(pieces, max_size=60)
    table = Table(title=draw(st.one_of(st.none(), words, words.map(Text))), caption=draw(st.one_of(st.none(), words)),
                  box=draw(st.sampled_from(BOXES)), show_header=draw(st.booleans()),
                  title_justify=draw(st.sampled_from(JUSTIFY)), caption_justify=draw(st.sampled_from(JUSTIFY)),
                  header_style=draw(st.sampled_from(["table.header", "bold magenta", ""])),
                  row_styles=draw(st.sampled_from([None, ["dim", ""], ["on blue"]])))
    columns = draw(st.integers(1, 6))
    for _ in range(columns):
        width = st.one_of(st.none(), st.integers(0, 12)) if limits else st.none()
        table.add_column(draw(_texts(pieces)), justify=draw(st.sampled_from(JUSTIFY)),
                         overflow=draw(st.sampled_from(OVERFLOW)), no_wrap=draw(st.booleans()),
                         min_width=draw(width), max_width=draw(width),
                         width=draw(st.one_of(st.none(), st.integers(1, 12))) if limits and draw(st.booleans())
                         else None, style=draw(st.sampled_from(["", "green", "bold"])))
    for _ in range(draw(st.integers(0, 8))):
        cells = draw(st.lists(_cell(pieces), min_size=columns, max_size=columns))
        for index in range(draw(st.integers(0, 2))):  # the group's names shown once
            if index < columns - 1:
                cells[index] = draw(st.sampled_from(["", Text("")]))
        table.add_row(*cells, style=draw(st.sampled_from([None, "red", "on green"])))
    return table


def _plain_console(width: int) -> Console:
    """A console with no colour system, as a file or a pipe has (the one ``plain_tables`` serves)."""
    return Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)


def _by_rich(table: Table, width: int) -> str:
    console = _plain_console(width)
    console.print(table)
    return console.file.getvalue()


class _Laid(list[Segment]):
    """Segments already laid out, printed as they are."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self


def _by_plain_tables(table: Table, width: int) -> str | None:
    console = _plain_console(width)
    segments = plain_tables.segments(table, console, console.options)
    if segments is None:
        return None
    console.print(_Laid(segments))
    return console.file.getvalue()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), data=st.data())
def test_a_table_laid_out_here_is_what_rich_prints(table: Table, data: st.DataObject):
    """Any width, or the table's own width and a few cells more (the file console widens itself to a wide table's
    width, so the last column ends at the console's edge)."""
    console = _plain_console(100)
    try:
        natural = Measurement.get(console, console.options.update_width(100_000), table).maximum
        width = data.draw(st.one_of(st.integers(20, 160),
                                    st.integers(0, 3).map(lambda slack: max(20, natural + slack))))
        expected = _by_rich(table, width)
    except MarkupError:  # drawn text that closes a tag never opened: rich refuses it, whoever lays it out
        assume(False)
    assert plain_tables.natural_width(table, console, console.options) in (None, natural)
    ours = _by_plain_tables(table, width)
    if ours is not None:
        assert ours == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(odd=False, limits=False), width=st.integers(20, 200))
def test_a_plain_table_that_fits_is_laid_out_here(table: Table, width: int):
    """The fast path is taken whenever the cells are plain text and the table fits (else the test above is
    vacuous); a table wider than the console is rich's to shrink."""
    assume(table.rows or table.show_header)  # no cell at all: rich makes each column as wide as the console
    console = _plain_console(width)
    natural = Measurement.get(console, console.options.update_width(100_000), table).maximum
    ours = _by_plain_tables(table, width)
    assert (ours is not None) == (natural <= width)
    assert plain_tables.natural_width(table, console, console.options) == natural
    if ours is not None:
        assert ours == _by_rich(table, width)


def _why_waited_like() -> Table:
    table = Table(title="Why jobs waited (every waiting second charged to one cause)")
    for index, header in enumerate(("share", "instance type", "cause", "wait-hours")):
        table.add_column(header, overflow="fold", justify="right" if index >= 3 else "left")
    table.add_row(Text("queue-00/team-00-07"), Text("ml.g5.xlarge"), Text("behind the head of its line"),
                  Text("3,290,627.7"))
    table.add_row(Text(""), Text(""), Text("at its limit, cannot borrow more"), Text("2,088.1"))
    return table


@pytest.mark.parametrize("cell", [Text("two\nlines"), "tab\there", Table("nested"), "[bold]markup[/bold] ok"],
                         ids=["multi-line", "tab", "renderable", "markup"])
def test_what_is_not_one_plain_line_falls_back_to_rich(cell: object):
    table = _why_waited_like()
    table.add_row(Text("queue-00/team-00-08"), Text("ml.g5.xlarge"), cell, Text("1.0"))
    console = _plain_console(200)
    expected = _by_rich(table, 200)
    if isinstance(cell, str) and "[" in cell:  # markup is read as rich reads it, then laid out here
        assert _by_plain_tables(table, 200) == expected
        assert "markup ok" in expected
        return
    assert plain_tables.segments(table, console, console.options) is None
    out = io.StringIO()
    terminal.for_stream(out).print(table)  # the file console prints it through rich
    assert out.getvalue() == expected


@pytest.mark.parametrize("zero_width", ["\u200b", "\xad", "e\u0301"[1:]], ids=["zero-width space", "soft hyphen",
                                                                            "lone combining accent"])
def test_a_column_of_text_no_cell_wide_is_printed_as_rich_prints_it(zero_width: str):
    # rich prints nothing of a cell given no width; text of width 0 is not nothing
    table = Table("share", zero_width)
    table.add_row("a", zero_width)
    out = io.StringIO()
    terminal.for_stream(out).print(table)
    assert out.getvalue() == _by_rich(table, terminal.FILE_WIDTH)
    console = _plain_console(200)
    if cell_len(zero_width) == 0:  # (rich counts a soft hyphen one cell wide: laid out here, as rich prints it)
        assert plain_tables.segments(table, console, console.options) is None


def test_a_table_subclass_renders_itself():
    class Noted(Table):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            yield Segment("note: figures are medians\n")
            yield from super().__rich_console__(console, options)

    table = Noted("share", "wait")
    table.add_row("a", "1h")
    out = io.StringIO()
    terminal.for_stream(out).print(table)
    assert out.getvalue().startswith("note: figures are medians\n")
    assert out.getvalue() == _by_rich(table, terminal.FILE_WIDTH)


def test_a_colour_console_falls_back_to_rich_and_prints_its_escapes():
    table = _why_waited_like()
    console = Console(file=io.StringIO(), width=200, color_system="truecolor", force_terminal=True)
    assert plain_tables.segments(table, console, console.options) is None
    assert plain_tables.segments(table, _plain_console(200), _plain_console(200).options) is not None  # the control
    console.print(table)
    assert "\x1b[1m" in console.file.getvalue()  # the bold header


@pytest.mark.parametrize("option", [{"show_lines": True}, {"show_footer": True}, {"expand": True}, {"width": 150},
                                    {"min_width": 150}, {"padding": (0, 2)}, {"show_edge": False}, {"box": None},
                                    {"leading": 1}], ids=str)
def test_an_option_not_laid_out_here_falls_back_to_rich(option: dict[str, object]):
    table = _why_waited_like()
    for name, value in option.items():
        setattr(table, name, value)
    console = _plain_console(200)
    assert plain_tables.segments(table, console, console.options) is None


def test_a_table_wider_than_the_console_is_shrunk_by_rich():
    table = _why_waited_like()
    console = _plain_console(40)
    assert plain_tables.segments(table, console, console.options) is None
    assert plain_tables.natural_width(table, console, console.options) == \
        Measurement.get(console, console.options.update_width(100_000), table).maximum


def test_the_file_console_prints_a_wide_table_whole_and_as_rich_does():
    table = _why_waited_like()
    table.add_row(Text("q/" + "x" * 300), Text("ml.g5.xlarge"), Text("cause"), Text("1.0"))
    laid, plain = io.StringIO(), io.StringIO()
    terminal.for_stream(laid, file_width=120).print(table)
    rich_only = terminal.for_stream(plain, file_width=120)
    rich_only.plain_tables = False
    rich_only.print(table)
    assert laid.getvalue() == plain.getvalue()
    assert max(map(len, laid.getvalue().splitlines())) > 300  # printed whole, not folded at 120


def test_the_simulate_report_lays_its_tables_out_here_and_prints_what_rich_printed(monkeypatch: pytest.MonkeyPatch):
    from policy_engine.reports.kit.subjects import SimulateOutput
    from policy_engine.reports.simulate import text as simulate_text
    from policy_engine.simulation.results.wait_causes import attribute
    from tests.policy_engine.reports.walkthrough import walkthrough

    scenario, result = walkthrough()
    output = SimulateOutput(result, "walkthrough.yaml", waits=attribute(result, scenario.topology))
    laid_out: list[str] = []
    segments = plain_tables.segments

    def recording(table: Table, console: Console, options: ConsoleOptions) -> list[Segment] | None:
        out = segments(table, console, options)
        if out is not None:
            laid_out.append(str(table.title))
        return out

    monkeypatch.setattr(plain_tables, "segments", recording)
    fast = io.StringIO()
    simulate_text.write(output, fast)
    for_stream = terminal.for_stream

    def rich_only(stream: io.StringIO, *args: object, **options: object) -> Console:
        console = for_stream(stream, *args, **options)
        console.plain_tables = False
        return console

    monkeypatch.setattr(terminal, "for_stream", rich_only)
    by_rich = io.StringIO()
    simulate_text.write(output, by_rich)
    assert fast.getvalue() == by_rich.getvalue()
    assert [title.split(" ")[0] for title in laid_out] == ["Jobs", "Shares", "Instance", "Why"]
