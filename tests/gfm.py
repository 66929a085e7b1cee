"""Markdown read back through a real CommonMark renderer with GFM tables (markdown-it-py), as GitHub shows it."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

_PARSER = MarkdownIt("commonmark").enable("table")


def html(markdown: str) -> str:
    return _PARSER.render(markdown)


def tables(markdown: str) -> list[list[list[str]]]:
    """Every table as rows of cell texts (header row first), the text as a reader sees it."""
    found: list[list[list[str]]] = []
    row: list[str] | None = None
    for token in _PARSER.parse(markdown):
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            found[-1].append(row)
            row = None
        elif token.type == "inline" and row is not None:
            row.append(_text(token.children or []))
    return found


def _text(children: list[Token]) -> str:
    """The literal text: raw HTML would be a ``html_inline`` token, so it is refused, not shown."""
    parts = []
    for child in children:
        assert child.type != "html_inline", f"raw HTML reached the page: {child.content!r}"
        parts.append("\n" if child.type in ("softbreak", "hardbreak") else child.content)
    return "".join(parts)
