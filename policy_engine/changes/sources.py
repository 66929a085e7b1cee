"""Where the two sides of a diff come from: a file, ``REF:PATH`` read from git, or ``/dev/null``.

An argument is read from git only when it is not an existing file and its ``REF`` resolves to a
commit, so a CI job diffs a pull request against its base without a second checkout. A path the
commit lacks is an error (never "deleted"): a new or deleted topology is diffed against
``/dev/null`` explicitly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from policy_engine.loading import LoadError, load_topology
from policy_engine.model import Topology

NULL = "/dev/null"


@dataclass(frozen=True)
class Side:
    """One side of a diff: the topology and how to name it (``absent`` for ``/dev/null``)."""

    topology: Topology
    label: str
    absent: bool = False


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def _resolves(ref: str) -> bool:
    if not ref or ref.startswith("-") or shutil.which("git") is None:
        return False
    return _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode == 0


def _from_git(argument: str, ref: str, path: str) -> Topology:
    shown = _git("show", f"{ref}:{path}")
    if shown.returncode != 0:
        raise LoadError([f"{argument}: commit {ref} has no file {path} (a new or deleted topology is diffed "
                         f"against {NULL})"])
    with tempfile.TemporaryDirectory(prefix="batch-quota-diff-") as folder:
        file = Path(folder) / Path(path).name
        file.write_bytes(shown.stdout)
        try:
            return load_topology(file)
        except LoadError as error:  # name the problems after REF:PATH, not the temporary copy
            raise LoadError([problem.replace(str(file), argument) for problem in error.problems]) from None


def load_side(argument: str) -> Side:
    """Load one side of a diff; ``LoadError`` (one line per problem) when it cannot be read."""
    if argument == NULL or (os.name == "nt" and argument.upper() == "NUL"):
        return Side(Topology(), NULL, absent=True)
    if Path(argument).is_file():
        return Side(load_topology(argument), argument)
    ref, colon, path = argument.partition(":")
    if colon and path and _resolves(ref):
        return Side(_from_git(argument, ref, path), argument)
    if Path(argument).exists():
        raise LoadError([f"{argument}: not a file"])
    hint = f" and {ref!r} is not a git commit" if colon and path else ""
    raise LoadError([f"{argument}: no such file{hint} (write a file, REF:PATH, or {NULL} for a new or deleted "
                     f"topology)"])
