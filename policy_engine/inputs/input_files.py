"""Reading a user's file safely: regular files only, a size cap per kind of file, strict UTF-8.

Every command reads its inputs through here, so a FIFO or ``/dev/zero`` is refused instead
of hanging, a huge file is refused before it is read, and text that is not UTF-8 is one line
naming the byte and the line, never a traceback. Outputs are checked here too: a command
never writes over one of its own inputs.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

MiB = 1024 * 1024


@dataclass(frozen=True)
class FileKind:
    """A kind of input file and the largest size accepted for it."""

    name: str
    max_bytes: int

    def describe_cap(self) -> str:
        return f"a {self.name} file may be at most {_size(self.max_bytes)}"


#: Topologies are small even for hundreds of queues (a 5,000-share topology is under 2 MiB).
TOPOLOGY = FileKind("topology", 16 * MiB)
#: A scenario may hold its jobs inline; large workloads belong in a CSV or JSON Lines job file.
SCENARIO = FileKind("scenario", 64 * MiB)
#: Job files: 10,000,000 rows of a typical CSV take about 0.7 GiB.
JOBS = FileKind("job", 4096 * MiB)
#: A Python topology module.
MODULE = FileKind("Python topology module", 16 * MiB)
#: A workload profile (``generate --workload-profile``, ``fit -o``): one entry per share, small.
PROFILE = FileKind("workload profile", 16 * MiB)
#: A CloudFormation template (``import --template``); CloudFormation itself takes at most 1 MB.
TEMPLATE = FileKind("CloudFormation template", 16 * MiB)

#: A prices file (``--prices``): one rate per instance type, tiny.
PRICES = FileKind("prices", 1 * MiB)

#: An events file followed as it grows (``top --events``): read a chunk at a time, so only its lines are bounded.
EVENTS = FileKind("events", 1024 * 1024 * MiB)

KINDS = (TOPOLOGY, SCENARIO, JOBS, MODULE, TEMPLATE, PROFILE, PRICES, EVENTS)


class InputFileError(ValueError):
    """The file cannot be read as the kind of input asked for; the message is one line naming it."""


def _size(count: int) -> str:
    if count >= 1024 * MiB:
        return f"{count / (1024 * MiB):g} GiB"
    if count >= MiB:
        return f"{count / MiB:g} MiB"
    return f"{count:,} bytes"


_KIND_OF_MODE = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                 (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                 (stat.S_ISSOCK, "a socket"))


def check_path_text(path: str | os.PathLike[str]) -> None:
    """Refuse a path that no file can have (a NUL byte), before the OS is asked."""
    if "\0" in os.fspath(path):
        raise InputFileError(f"{os.fspath(path)!r}: a file name cannot contain a NUL byte")


def open_input(path: str | os.PathLike[str], kind: FileKind) -> BinaryIO:
    """Open ``path`` for binary reading if it is a regular file within ``kind``'s size cap.

    ``O_NONBLOCK`` makes opening a FIFO return at once (it is then refused), instead of
    waiting forever for a writer.
    """
    check_path_text(path)
    name = os.fspath(path)
    try:
        descriptor = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise InputFileError(f"{name}: cannot read file: {error.strerror or error}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            what = next((label for test, label in _KIND_OF_MODE if test(status.st_mode)), "not a regular file")
            raise InputFileError(f"{name}: is {what}, not a regular {kind.name} file")
        if status.st_size > kind.max_bytes:
            raise InputFileError(f"{name}: too large ({_size(status.st_size)}); {kind.describe_cap()}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_bytes(path: str | os.PathLike[str], kind: FileKind) -> bytes:
    """The whole file, refused past the cap even if it grew after it was opened."""
    with open_input(path, kind) as handle:
        data = handle.read(kind.max_bytes + 1)
    if len(data) > kind.max_bytes:
        raise InputFileError(f"{os.fspath(path)}: too large; {kind.describe_cap()}")
    return data


def decode_utf8(data: bytes, name: str) -> str:
    """Strict UTF-8 without a byte-order mark.

    A BOM is refused rather than dropped: JSON forbids it, tools disagree on it (``json.loads`` fails,
    some YAML readers keep it in the first key), and a file that reads differently elsewhere is one
    a reviewer cannot trust.
    """
    if data.startswith(codecs.BOM_UTF8):
        raise InputFileError(f"{not_utf8(name, data[0], 1)}: a UTF-8 byte-order mark; save the file as UTF-8 "
                             "without BOM")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputFileError(not_utf8(name, data[error.start], data.count(b"\n", 0, error.start) + 1)) from None


def not_utf8(name: str, byte: int, line: int) -> str:
    return f"{name}: not UTF-8 text (byte 0x{byte:02X} at line {line})"


def read_text(path: str | os.PathLike[str], kind: FileKind) -> str:
    """A regular file within the cap, decoded as strict UTF-8."""
    return decode_utf8(read_bytes(path, kind), os.fspath(path))


def locate_bad_utf8(path: str | os.PathLike[str], kind: FileKind) -> str:
    """The not-UTF-8 line for a streamed file whose decoding failed: re-read in binary to find the byte and line."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, name = 1, os.fspath(path)
    with open_input(path, kind) as handle:
        while chunk := handle.read(1 << 20):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:  # ``error.object`` is the held-back bytes (never a newline) + chunk
                return not_utf8(name, error.object[error.start], line + error.object.count(b"\n", 0, error.start))
            line += chunk.count(b"\n")
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as error:  # the file ends inside a character
            return not_utf8(name, error.object[error.start], line)
    return f"{name}: not UTF-8 text"


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """``a`` and ``b`` name the same file (through symlinks, ``..`` or hard links)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_overwriting_inputs(outputs: dict[str, str | os.PathLike[str] | None],
                              inputs: list[str | os.PathLike[str] | None]) -> list[str]:
    """One problem per output (``{"--events": path}``) that is also one of the command's inputs."""
    problems = []
    for option, output in outputs.items():
        if output is None:
            continue
        for given in inputs:
            if given is not None and same_file(output, given):
                problems.append(f"{option} {os.fspath(output)}: is also an input of this command "
                                f"({os.fspath(given)}); write to another file")
                break
    return problems


def as_path(path: str | os.PathLike[str]) -> Path:
    check_path_text(path)
    return Path(path)
