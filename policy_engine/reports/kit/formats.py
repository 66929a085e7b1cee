"""A command's output formats as a table: name -> renderer, loaded only when chosen.

Each row is data: it names a format, says in a few words what it is for (the ``--format`` help is
built from these), names the renderer by its dotted module path (imported on first use) and, for a command
that writes a file (``graph -o picture.svg``), the file name suffixes that choose it. The table
knows the names without importing any renderer, so ``--help`` and an unchosen format cost
nothing, and a renderer's heavy imports (rich, the simulator's number formatting, SARIF's
rule catalogue) are paid only by the format that needs them.

A renderer writes one finished document: ``(subject, stream) -> None`` to standard output, where
the subject is the command's result bundled as a dataclass, or ``(subject, path) -> None`` to a
file (see ``reports.registry``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

import click

#: The renderer's type, e.g. ``Callable[[CheckOutput, TextIO], None]``.
Renderer = TypeVar("Renderer")


#: The function a renderer module writes its document with, unless the row names another.
WRITE = "write"
#: The function a renderer module writes its document for input that did not load with, where it has one.
WRITE_LOAD_FAILURE = "write_load_failure"


@dataclass(frozen=True)
class OutputFormat:
    """One ``--format`` choice: its name, what it is for, the dotted path of its renderer module (and the
    function in it, ``write`` unless named), and the file name suffixes (lower case, with the dot) that
    choose it when the command writes a file."""

    name: str
    purpose: str
    module: str
    suffixes: tuple[str, ...] = ()
    function: str = WRITE

    def load(self) -> Any:
        """The renderer function (imports its module)."""
        return getattr(importlib.import_module(self.module), self.function)

    def load_failure(self) -> Any:
        """The module's ``write_load_failure``, or ``None`` when it has none."""
        return getattr(importlib.import_module(self.module), WRITE_LOAD_FAILURE, None)


class FormatTable(Generic[Renderer]):
    """The formats of one command; ``default`` (the first one unless named) is used when none is chosen.

    ``document``, for a command CI reads (``check``, ``diff``), wraps each module's ``write`` and its
    ``write_load_failure`` (``None`` where the module has none) into the command's renderer type."""

    def __init__(self, command: str, formats: Sequence[OutputFormat], default: str | None = None,
                 document: Callable[[Any, Any], Renderer] | None = None) -> None:
        names = [f.name for f in formats]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"{command}: output format names must be unique and at least one: {names}")
        suffixes = [suffix for f in formats for suffix in f.suffixes]
        if len(set(suffixes)) != len(suffixes):
            raise ValueError(f"{command}: a file name suffix chooses one format only: {suffixes}")
        if default is not None and default not in names:
            raise ValueError(f"{command}: default format {default!r} is not one of {names}")
        self.command = command
        self._formats = {f.name: f for f in formats}
        self._default = default or names[0]
        self._document = document

    @property
    def names(self) -> list[str]:
        return list(self._formats)

    @property
    def default(self) -> str:
        return self._default

    def __getitem__(self, name: str) -> OutputFormat:
        return self._formats[name]

    def renderer(self, name: str) -> Renderer:
        """The renderer of format ``name`` (imports its module)."""
        row = self._formats[name]
        if self._document is not None:
            return self._document(row.load(), row.load_failure())
        return cast(Renderer, row.load())

    def for_path(self, path: Path) -> OutputFormat | None:
        """The format whose suffix ends ``path`` (case-insensitive); ``None`` when no format claims it."""
        suffix = path.suffix.lower()
        return next((f for f in self._formats.values() if suffix in f.suffixes), None)

    def suffix_list(self) -> str:
        """Each format's first suffix, for messages and help: ``.svg, .png or .dot``."""
        first = [f.suffixes[0] for f in self._formats.values() if f.suffixes]
        return ", ".join(first[:-1]) + " or " + first[-1] if len(first) > 1 else "".join(first)

    def help(self) -> str:
        """``name: purpose`` for every format, in table order."""
        return "; ".join(f"{f.name}: {f.purpose}" for f in self._formats.values()) + "."

    def option(self, dest: str = "output_format") -> Callable[[click.decorators.FC], click.decorators.FC]:
        """The ``--format`` option of the command: choices, default and help from the table."""
        return click.option("--format", dest, type=click.Choice(self.names), default=self.default,
                            show_default=True, help=self.help())
