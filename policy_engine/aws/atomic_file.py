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


@contextlib.contextmanager
def atomic_write(path: str | Path, newline: str | None = None) -> Iterator[IO[str]]:
    """``with atomic_write(path) as handle:`` write to ``handle``; ``path`` appears only on success."""
    target = Path(path)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent or ".")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as an ordinary open() would create it, not mkstemp's 0600
        with os.fdopen(descriptor, "w", encoding="utf-8", newline=newline) as handle:
            yield handle
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
