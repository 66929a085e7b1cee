"""Write an output file all at once or not at all: Ctrl-C, an API error or a crash leaves no partial file.

The text goes to a hidden temporary file beside the target, which replaces the target only
when the writer finished (``os.replace`` is atomic on one file system); on any exception,
including ``KeyboardInterrupt``, the temporary file is removed and an existing target is
left untouched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


class OutputError(Exception):
    """The output file cannot be created or replaced (no such directory, no permission): one line, exit 2."""

    def __init__(self, path: str | Path, error: OSError):
        super().__init__(f"{path}: cannot write the output file: {error.strerror or error}")
        self.line = str(self)


@contextlib.contextmanager
def atomic_write(path: str | Path, newline: str | None = None) -> Iterator[IO[str]]:
    """``with atomic_write(path) as handle:`` write to ``handle``; ``path`` appears only on success."""
    target = Path(path)
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial",
                                                 dir=target.parent or ".")
    except OSError as error:
        raise OutputError(path, error) from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as an ordinary open() would create it, not mkstemp's 0600
        with os.fdopen(descriptor, "w", encoding="utf-8", newline=newline) as handle:
            yield handle
        try:
            os.replace(temporary, target)
        except OSError as error:
            raise OutputError(path, error) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
