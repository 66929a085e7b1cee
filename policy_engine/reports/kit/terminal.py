"""The rich ``Console`` that the text reports of ``explain``, ``simulate``, ``walkthrough``, ``sweep`` and
``tune`` print with: styled on a terminal, plain everywhere else. (``check`` renders its text into a
string first, with its own ``Console``, and prints it with click.)

rich already drops colour for a non-terminal and with ``NO_COLOR``, but keeps bold and dim under
``NO_COLOR``; no colour system at all means no ANSI escape of any kind, which is what people who
set ``NO_COLOR`` (and the logs they paste) expect.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from rich.console import Console


class _Console(Console):
    """rich's ``Console``, except that a closed pipe is the command line's to report (one line, exit 2):
    rich would end the process with exit 1, which means "a rule found an error"."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


#: How wide a wide table may be when written to a file or a pipe: as wide as its cells, so no value is folded
#: mid-way (``4d 0h → 2d 18h (−1d`` / ``7h)``) for a reader or a ``grep``; a terminal keeps its own width.
FILE_WIDTH = 400


def console(**options: Any) -> Console:
    """A ``Console`` (``options`` as rich's) that emits no ANSI escape when ``NO_COLOR`` is set."""
    if "NO_COLOR" in os.environ:
        options["color_system"] = None
    return _Console(**options)
