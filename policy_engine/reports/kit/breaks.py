"""Where a cell may break across lines, one rule for every format: a terminal's fitted tables
(``reports.kit.fitting``), the HTML pages' tables and the pull-request comment.

Text (a header, a name, prose) breaks at spaces only, never inside a word. A figure breaks only between its
parts: after ``→`` and ``,``, before ``(``: ``4h 13m →`` / ``5h 28m`` / ``(+1h 14m)``, never ``4h`` / ``13m``.
A long dotted or slashed name in a header (``training/vision.capacity.ml.p4d.24xlarge``, a sweep's axis) may
also break after its ``/`` and ``.`` in HTML, where it would otherwise widen its column past the page.
"""

from __future__ import annotations

import re

#: Where a figure may break: after an arrow or a comma, before an opening parenthesis (``1h → 45m (−15m)``).
FIGURE_BREAKS = re.compile(r"(?<=→) |(?<=,) | (?=\()")
#: Where text may break: at any space.
TEXT_BREAKS = re.compile(r" +")
#: A header word longer than this may break after its ``/`` and ``.`` in HTML.
LONG_NAME = 20


def spans(line: str, figure: bool) -> list[tuple[int, int]]:
    """Where the unbreakable pieces of one line start and end."""
    out, start = [], 0
    for match in (FIGURE_BREAKS if figure else TEXT_BREAKS).finditer(line):
        if match.start() > start:
            out.append((start, match.start()))
        start = match.end()
    if start < len(line):
        out.append((start, len(line)))
    return out


def pieces(text: str, figure: bool) -> list[str]:
    """The unbreakable pieces of ``text``, line by line."""
    return [line[a:b] for line in text.split("\n") for a, b in spans(line, figure)]


def html_figure(text: object) -> str:
    """A figure's cell content for HTML: each piece escaped and kept on one line (``<span class="nb">``, see the
    pages' style), the pieces free to wrap between them."""
    from policy_engine.reports.kit.safe_text import html_text

    parts = pieces(str(text), figure=True)
    if len(parts) < 2:
        return html_text(text)
    return " ".join(f'<span class="nb">{html_text(part)}</span>' for part in parts)


def html_header(text: object) -> str:
    """A header for HTML: escaped, wrapping at spaces (the browser's own rule) and, in a word longer than
    ``LONG_NAME``, after each ``/`` and ``.`` (``<wbr>``)."""
    from policy_engine.reports.kit.safe_text import html_text

    return " ".join(re.sub(r"([/.])(?=.)", r"\1<wbr>", html_text(word)) if len(word) > LONG_NAME
                    else html_text(word) for word in str(text).split(" "))
