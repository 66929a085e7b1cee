"""``explain``'s sentences for people: the topic dimmed in a right-aligned column, then the sentence
(findings in bold yellow). Styled on a terminal only (see ``reports.kit.terminal``)."""

from __future__ import annotations

from typing import TextIO

from rich.table import Table
from rich.text import Text

from policy_engine.reports.explain.view import sentences
from policy_engine.reports.kit import terminal
from policy_engine.reports.kit.safe_text import visible
from policy_engine.reports.kit.subjects import ExplainOutput

_TOPIC_STYLE = {"findings": "bold yellow", "what": "bold"}


def write(output: ExplainOutput, stream: TextIO) -> None:
    if stream.isatty():  # the sentences wrapped at the terminal's width, beside their topics (``reports.kit.fitting``)
        grid = Table.grid(padding=(0, 2))
        grid.add_column(justify="right", style="dim")
        grid.add_column()
        for topic, sentence in sentences(output):
            grid.add_row(topic, Text(visible(sentence), style=_TOPIC_STYLE.get(topic, "")))
        terminal.console(file=stream, highlight=False, fit=True).print(grid)
        return
    out = terminal.console(file=stream, highlight=False, soft_wrap=True)
    for topic, sentence in sentences(output):
        line = Text(f"{topic:>11}  ", style="dim")
        line.append(visible(sentence), style=_TOPIC_STYLE.get(topic, ""))
        out.print(line)
