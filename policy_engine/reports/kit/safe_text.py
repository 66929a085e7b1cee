"""User text (share, queue, job and file names, messages quoting them) shown literally in every output.

A name is data, never markup: terminal control characters (an ``ESC[`` sequence can rewrite
what a CI log shows), rich markup (``[bold]``, ``[link=...]``), HTML in Markdown, matplotlib
mathtext (``$...$``) and Graphviz's escapes (``\\N``, ``<...>`` labels) each get escaped for
the one output that would interpret them.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

#: Invisible characters that change what a reader sees: C0/C1 controls (``\n`` and ``\t`` included,
#: so one problem stays one line) and the bidirectional overrides used to disguise text. Lone surrogates
#: (a file name that is not UTF-8, as Python decodes it) are escaped too: UTF-8 output cannot encode them.
_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
#: the same set as one character class: a table of 1,000 shares checks every cell (a scan per character
#: in Python took most of a large diff's markdown render)
_HAS_BIDI = re.compile("[" + "".join(chr(code) for code in sorted(_BIDI)) + "]")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``text`` with control and bidi-override characters written as ``\\x1b``-style escapes."""
    value = str(text)
    if value.isprintable() and _HAS_BIDI.search(value) is None:
        return value
    return "".join(_escape(char) if unicodedata.category(char) in ("Cc", "Cs") or ord(char) in _BIDI else char
                   for char in value)


def rich_text(text: object, style: str = "") -> Text:
    """A rich ``Text`` that shows ``text`` literally (no markup, no control characters)."""
    from rich.text import Text  # here: the Markdown and JSON reports never load rich

    return Text(visible(text), style=style)


#: ``_`` inside a word (``LEND_AND_BORROW``) is literal in GitHub Markdown; elsewhere it may start emphasis.
_EMPHASIS_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


#: A ``[`` that would open a link or image (``[text](url)``, ``[text][ref]``); ``jobs[QS1]`` stays as written.
_LINK_TEXT = re.compile(r"\[(?=[^\[\]]*\][(\[])")


#: every character ``markdown`` escapes (HTML's ``&<>``, Markdown punctuation, ``[`` and ``_``)
_MARKDOWN_SPECIAL = re.compile(r"[&<>\\`*|~\[_]")


def markdown(text: object) -> str:
    """Inline Markdown that renders as the literal text: HTML and Markdown punctuation escaped."""
    value = visible(text)
    if _MARKDOWN_SPECIAL.search(value) is None:  # most names and figures: nothing to escape
        return value
    value = html.escape(value, quote=False)
    for char in "\\`*|~":
        value = value.replace(char, "\\" + char)
    value = _LINK_TEXT.sub(r"\\[", value)
    return _EMPHASIS_UNDERSCORE.sub(r"\\_", value)


def mathtext(text: object) -> str:
    """A matplotlib label shown literally: ``$`` would start mathtext."""
    return visible(text).replace("$", r"\$")


def html_text(text: object) -> str:
    """Text shown literally in an HTML page: escaped, control characters written as ``\\x1b``."""
    import html

    return html.escape(visible(text))
