"""The problems of one scenario or job file, kept as ``Problem`` data and rendered to lines only when raised.

Every problem is collected before anything runs, so a user fixes every mistake in one go; past
``MAX_PROBLEMS`` they are only counted, so ten million bad rows do not fill the memory.
"""

from __future__ import annotations

import difflib
from typing import Any

from policy_engine.foundation.diagnostics import DataPath, LoadError, Problem

#: Report at most this many problems, then say how many more there were.
MAX_PROBLEMS = 200


def unknown_key(key: Any, allowed: tuple[str, ...]) -> str:
    """``unknown key 'x'``, with the closest allowed key when one is close."""
    close = difflib.get_close_matches(str(key), allowed, n=1)
    return f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


class Problems:
    """Located problems in the order found; lines already rendered elsewhere (a topology file) kept as text."""

    def __init__(self) -> None:
        self.found: list[Problem | str] = []
        self.dropped = 0

    def add(self, source: str, line: int | None, path: DataPath, message: str) -> None:
        self.add_problem(Problem(source, line, path, message))

    def add_problem(self, problem: Problem | str) -> None:
        if len(self.found) < MAX_PROBLEMS:
            self.found.append(problem)
        else:
            self.dropped += 1

    def add_rendered(self, problems: list[Problem | str]) -> None:
        """Problems another loader found (a topology's ``LoadError.located``), or a line it rendered (a file error)."""
        self.found.extend(problems)

    @property
    def total(self) -> int:
        return len(self.found) + self.dropped

    def __bool__(self) -> bool:
        return bool(self.found)

    def shown(self) -> list[Problem | str]:
        """The problems to report, then a line saying how many more there were."""
        shown = self.found[:MAX_PROBLEMS]
        if self.total > len(shown):
            shown.append(f"... and {self.total - len(shown)} more problem(s) not shown")
        return shown

    def raise_if_any(self) -> None:
        """``LoadError`` keeps the problems as data (``located``) and renders them as lines (``problems``)."""
        if self.total:
            raise LoadError(self.shown())
