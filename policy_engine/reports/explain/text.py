"""``explain``'s sentences for people: the topic dimmed in a right-aligned column, then the sentence
(findings in bold yellow), wrapped at spaces; an option it suggests (``--vary '...'``) is never broken.
Styled on a terminal only (see ``reports.kit.terminal``)."""

from __future__ import annotations

import re
from typing import TextIO

from rich.text import Text

from policy_engine.reports.explain.view import sentences
from policy_engine.reports.kit import terminal
from policy_engine.reports.kit.fitting import Listed
from policy_engine.reports.kit.safe_text import visible
from policy_engine.reports.kit.subjects import ExplainOutput

_TOPIC_STYLE = {"findings": "bold yellow", "what": "bold"}


#: An option and its quoted value that ``explain`` suggests (``--vary 'capacity.ml.p5.48xlarge=...'``): one piece,
#: never broken across lines, so it can be copied whole.
_COMMAND = re.compile(r"--[\w-]+ '[^']*'")
#: The topic column's width; below ``_BESIDE`` columns the topic takes a line of its own instead.
_TOPIC = 11
_BESIDE = 50


def _pieces(sentence: str) -> list[str]:
    """The sentence's words, each suggested option with its value kept as one piece."""
    out: list[str] = []
    at = 0
    for match in _COMMAND.finditer(sentence):
        out += sentence[at:match.start()].split()
        if out and match.start() > 0 and not sentence[match.start() - 1].isspace():
            out[-1] += match.group()  # ``(--vary '...'``: the piece keeps its bracket
        else:
            out.append(match.group())
        at = match.end()
    tail = sentence[at:]
    if out and tail and not tail[0].isspace():
        first, *rest = tail.split(" ", 1)
        out[-1] += first
        tail = rest[0] if rest else ""
    return out + tail.split()


def _lines(sentence: str, room: int) -> list[str]:
    """``sentence`` wrapped at spaces to ``room`` cells; a piece longer than ``room`` (a suggested command) alone on
    its line, whole (the terminal wraps it; nothing here cuts it)."""
    lines: list[str] = []
    for piece in _pieces(sentence):
        if lines and len(lines[-1]) + 1 + len(piece) <= room:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return lines or [""]


def write(output: ExplainOutput, stream: TextIO) -> None:
    if stream.isatty():  # wrapped at the terminal's width beside their topics, commands never broken
        console = terminal.console(file=stream, highlight=False, fit=True)
        said = sentences(output)
        topic_width = max([_TOPIC, *(len(topic) for topic, _ in said)])
        beside = console.width - topic_width >= _BESIDE - _TOPIC
        for topic, sentence in said:
            style = _TOPIC_STYLE.get(topic, "")
            if beside:
                for index, piece in enumerate(_lines(visible(sentence), console.width - topic_width - 2)):
                    text = Listed(f"{topic if index == 0 else '':>{topic_width}}  ", style="dim")
                    text.append(piece, style=style)
                    console.print(text)
            else:
                console.print(Listed(topic, style="dim"))
                for piece in _lines(visible(sentence), console.width - 2):
                    console.print(Listed("  " + piece, style=style))
        return
    out = terminal.console(file=stream, highlight=False, soft_wrap=True)
    for topic, sentence in sentences(output):
        line = Text(f"{topic:>11}  ", style="dim")
        line.append(visible(sentence), style=_TOPIC_STYLE.get(topic, ""))
        out.print(line)
