"""Where the two sides of a diff come from: a file, ``REF:PATH`` read from git, or ``/dev/null``.

An argument is read from git only when it is not an existing file and its ``REF`` resolves to a
commit, so a CI job diffs a pull request against its base without a second checkout. A path the
commit lacks is an error (never "deleted"): a new or deleted topology is diffed against
``/dev/null`` explicitly.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from policy_engine.changes.hazards import Policy, policy_types
from policy_engine.foundation.model import Topology
from policy_engine.inputs.loading import LoadError, load_topology

NULL = "/dev/null"


@dataclass(frozen=True)
class Side:
    """One side of a diff: the topology and how to name it (``absent`` for ``/dev/null``)."""

    topology: Topology
    label: str
    absent: bool = False
    #: A CloudFormation template's fair-share scheduling policies (name -> queues using them): not part of the
    #: topology, but a policy that changes type is replaced (``hazards.policy_type_changes``).
    fair_share_policies: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def policies(self) -> dict[str, Policy]:
        return policy_types(self.topology, self.fair_share_policies)


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def _resolves(ref: str) -> bool:
    if not ref or ref.startswith("-") or shutil.which("git") is None:
        return False
    return _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode == 0


def _blob(argument: str, ref: str, path: str) -> bytes:
    """The file's bytes at ``ref``, following symbolic links inside the commit (as a checkout would).
    ``path`` is relative to the repository's root, as in ``git show REF:PATH``."""
    top = _git("rev-parse", "--show-toplevel").stdout.decode("utf-8", "replace").strip() or None
    for _ in range(10):
        listed = _git("ls-tree", "-z", ref, "--", path, cwd=Path(top) if top else None)
        entry = listed.stdout.split(b"\0", 1)[0].decode("utf-8", "replace") if listed.returncode == 0 else ""
        if not entry:
            raise LoadError([f"{argument}: commit {ref} has no file {path} (a new or deleted topology is diffed "
                             f"against {NULL})"])
        mode, kind = entry.split(" ", 2)[:2]
        if kind != "blob":
            raise LoadError([f"{argument}: {path} is not a file in commit {ref}"])
        shown = _git("show", f"{ref}:{path}")
        if mode != "120000":
            return shown.stdout
        path = posixpath.normpath(posixpath.join(posixpath.dirname(path), shown.stdout.decode("utf-8")))
    raise LoadError([f"{argument}: too many levels of symbolic links in commit {ref}"])


def _fair_share(path: Path, label: str) -> dict[str, tuple[str, ...]]:
    """A template's fair-share policies (read again: the topology loader keeps only quota-share queues)."""
    from policy_engine.inputs.template import fair_share_policies, is_template, read_template_file

    if path.suffix.lower() == ".py":
        return {}
    try:
        if "FairsharePolicy" not in path.read_text("utf-8", errors="replace"):
            return {}
        data = read_template_file(path)
    except (OSError, LoadError):
        return {}  # not a template (the topology loaded, so it is a topology file)
    return fair_share_policies(data, label) if is_template(data) else {}


def _loaded(path: Path, label: str, allow_python: bool = True) -> Side:
    return Side(load_topology(path, allow_python), label, fair_share_policies=_fair_share(path, label))


def _from_git(argument: str, ref: str, path: str, allow_python: bool) -> Side:
    """``REF:PATH``: a ``.py`` from another revision (a pull request's) is code nobody here has run: it loads only
    with ``allow_python`` (``diff --allow-python``), the one rule of ``commands.shared.python_topologies``."""
    content = _blob(argument, ref, path)
    with tempfile.TemporaryDirectory(prefix="batch-quota-diff-") as folder:
        file = Path(folder) / Path(path).name
        file.write_bytes(content)
        try:
            return _loaded(file, argument, allow_python)
        except LoadError as error:  # name the problems after REF:PATH, not the temporary copy
            raise LoadError([problem.replace(str(file), argument) for problem in error.problems]) from None


def load_side(argument: str, allow_python: bool = False) -> Side:
    """Load one side of a diff; ``LoadError`` (one line per problem) when it cannot be read."""
    if argument == NULL or (os.name == "nt" and argument.upper() == "NUL"):
        return Side(Topology(), NULL, absent=True)
    if Path(argument).is_file():
        return _loaded(Path(argument), argument)
    ref, colon, path = argument.partition(":")
    if colon and path and _resolves(ref):
        return _from_git(argument, ref, path, allow_python)
    if Path(argument).exists():
        raise LoadError([f"{argument}: not a file"])
    hint = f" and {ref!r} is not a git commit" if colon and path else ""
    raise LoadError([f"{argument}: no such file{hint} (write a file, REF:PATH, or {NULL} for a new or deleted "
                     f"topology)"])
