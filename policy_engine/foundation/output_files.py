"""Writing outputs without clobbering what the user did not name: one place for every command.

A file output (``-o FILE``) is written all at once or not at all (a hidden temporary file renamed
over it); a target that exists and is not a regular file (a device, a FIFO, a socket) is never
replaced: it is written in place, and a FIFO nobody reads is refused at once instead of waiting.
A folder output (``--report DIR``, ``--out DIR``) follows no symlink: neither the folder itself
nor a name in it, so a link planted there cannot redirect a write over another file.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO, TextIO

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class OutputError(OSError):
    """An output cannot be written (no such directory, no permission, a symlink, no reader): one line, exit 2.

    An ``OSError`` whose ``strerror`` is the reason, so a caller's ``except OSError`` words it as any other.
    """

    def __init__(self, path: str | Path, error: OSError | str):
        why = error if isinstance(error, str) else (error.strerror or str(error))
        code = errno.EINVAL if isinstance(error, str) else (error.errno or errno.EIO)
        super().__init__(code, why, str(path))
        self.line = f"{path}: cannot write the output file: {why}"

    def __str__(self) -> str:
        return self.line


def _existing_kind(path: Path) -> int | None:
    """The file type bits of what ``path`` names (following links), or ``None`` when nothing is there."""
    try:
        return stat.S_IFMT(os.stat(path).st_mode)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise OutputError(path, error) from None


def _in_place_descriptor(path: str | Path, append: bool) -> int:
    """A blocking descriptor of an existing non-regular target; a FIFO nobody reads is refused at once (``ENXIO``
    of a non-blocking open) instead of waiting for a reader forever."""
    flags = os.O_WRONLY | os.O_NONBLOCK | (os.O_APPEND if append else 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise OutputError(path, "a FIFO or socket with no reader; start the reader first") from None
        raise OutputError(path, error) from None
    os.set_blocking(descriptor, True)
    return descriptor


def open_in_place(path: str | Path, append: bool = False, newline: str | None = None, buffering: int = 1) -> TextIO:
    """Open an existing non-regular target (a device, a FIFO) for writing text, never replacing it."""
    return open(_in_place_descriptor(path, append), "w", encoding="utf-8", buffering=buffering, newline=newline)


def open_binary_output(path: str | Path) -> BinaryIO:
    """``open_output`` for bytes (a job CSV written by pyarrow, a PNG): a regular file created or truncated, a
    device or FIFO written in place (a FIFO needs its reader already); a folder or a socket is refused."""
    kind = _existing_kind(Path(path))
    if kind is not None and kind != stat.S_IFREG:
        if kind in (stat.S_IFDIR, stat.S_IFSOCK):
            raise OutputError(path, "is a folder" if kind == stat.S_IFDIR else "is a socket")
        return open(_in_place_descriptor(path, False), "wb")
    try:
        return open(path, "wb")
    except OSError as error:
        raise OutputError(path, error) from None


def open_output(path: str | Path, append: bool = False, newline: str | None = None, buffering: int = 1) -> TextIO:
    """A streamed output (``--events FILE``): a regular file created or truncated, or a device or FIFO written in
    place (a FIFO needs its reader already); a folder or a socket is refused. Line-buffered unless ``buffering``
    says otherwise (-1: a whole file written at once, such as ``generate -o``)."""
    kind = _existing_kind(Path(path))
    if kind is not None and kind != stat.S_IFREG:
        if kind in (stat.S_IFDIR, stat.S_IFSOCK):
            raise OutputError(path, "is a folder" if kind == stat.S_IFDIR else "is a socket")
        return open_in_place(path, append, newline, buffering)
    try:
        return open(path, "a" if append else "w", encoding="utf-8", buffering=buffering, newline=newline)
    except OSError as error:
        raise OutputError(path, error) from None


@contextlib.contextmanager
def atomic_write(path: str | Path, newline: str | None = None) -> Iterator[IO[str]]:
    """``with atomic_write(path) as handle:`` write to ``handle``; ``path`` appears only on success.

    The text goes to a hidden temporary file beside the target, which replaces it only when the
    writer finished (``os.replace`` is atomic on one file system); on any exception the temporary
    file is removed and an existing target is left untouched. A target that is not a regular file
    (``/dev/full``, a FIFO) is never replaced: the finished text is written into it, and a failure
    ("No space left on device") is an ``OutputError``.
    """
    target = Path(path)
    kind = _existing_kind(target)
    if kind is not None and kind != stat.S_IFREG:
        if kind == stat.S_IFDIR:
            raise OutputError(path, "is a folder")
        buffer = io.StringIO(newline=newline)
        yield buffer
        handle = open_in_place(target)
        try:
            with handle:
                handle.write(buffer.getvalue())
        except OSError as error:
            raise OutputError(path, error) from None
        return
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


class OutputFolder:
    """A folder a command writes files into (``--report DIR``, ``--out DIR``), created if missing.

    Follows no symlink: ``DIR`` itself must not be one, and every file is opened relative to the
    folder's descriptor with ``O_NOFOLLOW``, so a planted ``DIR/index.html -> ../elsewhere`` is
    refused (``OutputError``) instead of overwriting the file it points to.
    """

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory)
        if self.path.is_symlink():
            raise OutputError(self.path, "is a symbolic link; give the real folder")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
        except OSError as error:
            raise OutputError(self.path, error) from None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> OutputFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def open(self, name: str) -> Iterator[IO[bytes]]:
        """``name`` in the folder, created or truncated, for writing bytes; a symlink or a non-regular file there
        (a FIFO, a device) is refused, never followed or waited on."""
        if "/" in name or name in (".", ".."):
            raise OutputError(self.path / name, f"{name}: not a plain file name")
        try:
            existing = os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        except OSError as error:
            raise OutputError(self.path / name, error) from None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            why = "is a symbolic link; not followed" if stat.S_ISLNK(existing.st_mode) else "is not a regular file"
            raise OutputError(self.path / name, f"{name} {why}")
        try:
            descriptor = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | os.O_NONBLOCK, 0o644,
                                 dir_fd=self._fd)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise OutputError(self.path / name, f"{name} is a symbolic link; not followed") from None
            raise OutputError(self.path / name, f"{name}: {error.strerror or error}") from None
        try:
            with os.fdopen(descriptor, "wb") as handle:
                yield handle
        except OutputError:
            raise
        except OSError as error:
            raise OutputError(self.path / name, f"{name}: {error.strerror or error}") from None

    def replace(self, source: str, name: str) -> Path:
        """Rename ``source`` over ``name`` in the folder (a symlink named ``name`` is replaced, never followed)."""
        try:
            os.replace(source, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except OSError as error:
            raise OutputError(self.path / name, f"{name}: {error.strerror or error}") from None
        return self.path / name

    def write_bytes(self, name: str, data: bytes) -> Path:
        with self.open(name) as handle:
            handle.write(data)
        return self.path / name

    def write_text(self, name: str, text: str) -> Path:
        return self.write_bytes(name, text.encode("utf-8"))


def write_files(directory: str | Path, files: dict[str, bytes]) -> list[Path]:
    """Write each file into ``directory`` (created), following no symlink; return the paths written."""
    with OutputFolder(directory) as folder:
        return [folder.write_bytes(name, data) for name, data in files.items()]
