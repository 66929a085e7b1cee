"""GitHub-flavoured Markdown building blocks for pull-request comments and ``$GITHUB_STEP_SUMMARY``.

The ``*_markdown`` reports are compact on purpose: a verdict line, then small tables built
here. Cells are escaped so a ``|`` or a newline in a message cannot break a table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from policy_engine.reports.kit import safe_text


def cell(value: object) -> str:
    """One table cell shown literally (HTML, Markdown and pipes escaped), newlines folded, empty shown as a dash."""
    text = "<br>".join(safe_text.markdown(line) for line in str(value).replace("\r", " ").split("\n"))
    return text if text.strip() else "–"


def code(text: str) -> str:
    """``text`` as an inline code span, fenced with more backticks than it contains in a row."""
    value = safe_text.visible(text)
    fence = "`" * (1 + max((len(m) for m in re.findall(r"`+", value)), default=0))
    return f"{fence} {value} {fence}" if "`" in value else f"`{value}`"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> list[str]:
    """A GFM table; ``align`` is one letter per column (``l``/``r``), default left."""
    marks = [("---:" if (align[i:i + 1] == "r") else "---") for i in range(len(header))]
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines
