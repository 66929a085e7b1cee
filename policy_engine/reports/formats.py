"""A command's output formats as a table: name -> renderer, loaded only when chosen.

Each row names a format, says in a few words what it is for (the ``--format`` help is built
from these), and holds a loader that imports the renderer module on first use. The table
knows the names without importing any renderer, so ``--help`` and an unchosen format cost
nothing, and a renderer's heavy imports (rich, the simulator's number formatting, SARIF's
rule catalogue) are paid only by the format that needs them.

A renderer writes one finished document to a text stream: ``(subject, stream) -> None``,
where the subject is the command's result bundled as a dataclass (see ``reports.registry``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import click

#: The renderer's type, e.g. ``Callable[[CheckOutput, TextIO], None]``.
Renderer = TypeVar("Renderer")


@dataclass(frozen=True)
class OutputFormat(Generic[Renderer]):
    """One ``--format`` choice: its name, what it is for, and how to import its renderer."""

    name: str
    purpose: str
    load: Callable[[], Renderer]


class FormatTable(Generic[Renderer]):
    """The formats of one command; the first one is the default."""

    def __init__(self, command: str, formats: Sequence[OutputFormat[Renderer]]) -> None:
        names = [f.name for f in formats]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"{command}: output format names must be unique and at least one: {names}")
        self.command = command
        self._formats = {f.name: f for f in formats}

    @property
    def names(self) -> list[str]:
        return list(self._formats)

    @property
    def default(self) -> str:
        return self.names[0]

    def __getitem__(self, name: str) -> OutputFormat[Renderer]:
        return self._formats[name]

    def renderer(self, name: str) -> Renderer:
        """The renderer of format ``name`` (imports its module)."""
        return self._formats[name].load()

    def help(self) -> str:
        """``name: purpose`` for every format, in table order."""
        return "; ".join(f"{f.name}: {f.purpose}" for f in self._formats.values()) + "."

    def option(self, dest: str = "output_format") -> Callable[[click.decorators.FC], click.decorators.FC]:
        """The ``--format`` option of the command: choices, default and help from the table."""
        return click.option("--format", dest, type=click.Choice(self.names), default=self.default,
                            show_default=True, help=self.help())
