"""The simulator's hot path, compiled by mypyc from this same type-checked source, and when not to use it.

``setup.py`` compiles ``COMPILED_MODULES`` (the event loop and everything it calls per job) and
records each source's hash in ``_compiled_sources``. Python prefers a compiled module to the ``.py``
beside it, so after an edit an editable install would silently run the old code: ``use_source_when_stale``
(run by the package's ``__init__``) loads every one of them from source instead, with a warning,
when any source changed since the build (or a module's compiled file is missing), and always when
``BATCH_QUOTA_PURE_PYTHON=1`` (a debugger, coverage or a profiler that needs Python frames). All or
none: compiled and interpreted classes do not mix (a compiled step reads a compiled job's fields
directly).

Only the standard library here: it runs whenever the simulator package is imported.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

#: The modules ``setup.py`` compiles: every module of ``policy_engine.simulation.core``, and only those.
COMPILED_MODULES = ("agenda", "capacity", "engine", "events", "jobs", "lifecycle", "placement", "preemption",
                    "queues", "steps", "wait_sweep")
#: Set (to anything but empty, 0, false or no) to run the simulator from source even where a compiled build exists.
PURE_PYTHON_VARIABLE = "BATCH_QUOTA_PURE_PYTHON"


class StaleBuildWarning(UserWarning):
    """The compiled simulator is older than its source (or incomplete): it runs from source."""


def asks_for_source(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` sets ``PURE_PYTHON_VARIABLE`` (as ``setup.py`` reads it at install time)."""
    return environ.get(PURE_PYTHON_VARIABLE, "").strip().lower() not in ("", "0", "false", "no")
_PACKAGE = __name__.rpartition(".")[0] + ".core"
#: The library every compiled module calls into (``setup.py``'s ``group_name``).
SHARED_LIBRARY = "_native__mypyc"
_HERE = Path(__file__).parent / "core"


def source_hash(path: Path) -> str:
    """What ``setup.py`` records for a compiled module: the sha256 of its source."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _compiled_file(directory: Path, name: str) -> Path | None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = directory / f"{name}{suffix}"
        if candidate.exists():
            return candidate
    return None


def _recorded_hashes() -> dict[str, str]:
    try:
        from policy_engine.simulation.core._compiled_sources import SOURCE_HASHES  # written by setup.py
    except ImportError:
        return {}
    return dict(SOURCE_HASHES)


def stale_modules(directory: Path, recorded: Mapping[str, str]) -> list[str]:
    """Hot modules of a compiled build in ``directory`` that must not run compiled: their source differs from
    the hash the build ``recorded``, or their own compiled file is missing (the shared library still holds
    their old code)."""
    stale = []
    for name in COMPILED_MODULES:
        source = directory / f"{name}.py"
        if _compiled_file(directory, name) is None or (source.exists() and recorded.get(name) != source_hash(source)):
            stale.append(name)
    return stale


def decide(directory: Path, recorded: Mapping[str, str], environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """How the hot modules of ``directory`` load: ``"compiled"``, ``"source"`` (asked for, or ``stale`` names
    the sources changed since the build) or ``"not built"``; and the stale modules."""
    built = [name for name in (*COMPILED_MODULES, SHARED_LIBRARY) if _compiled_file(directory, name) is not None]
    if not built:
        return "not built", []
    if asks_for_source(environ):
        return "source", []
    stale = stale_modules(directory, recorded)
    return ("source" if stale else "compiled"), stale


def loaded_compiled() -> bool:
    """Whether every hot module of this process was loaded from its compiled file (imports them)."""
    modules = [sys.modules.get(f"{_PACKAGE}.{name}") or importlib.import_module(f"{_PACKAGE}.{name}")
               for name in COMPILED_MODULES]
    return all(not str(getattr(module, "__file__", "")).endswith(".py") for module in modules)


class SourceFinder:
    """Finds the hot modules' ``.py`` files, ahead of the compiled files Python would otherwise prefer."""

    def __init__(self, names: Sequence[str]):
        self.names = {f"{_PACKAGE}.{name}": _HERE / f"{name}.py" for name in names}

    def find_spec(self, fullname: str, path: object = None, target: ModuleType | None = None) \
            -> importlib.machinery.ModuleSpec | None:
        source = self.names.get(fullname)
        return None if source is None else importlib.util.spec_from_file_location(fullname, source)


#: Whether this process runs the compiled build (decided once, by ``use_source_when_stale``).
runs_compiled = False


def use_source_when_stale() -> None:
    """Load the hot modules from source when asked to, or when a compiled build is older than its source."""
    global runs_compiled
    how, stale = decide(_HERE, _recorded_hashes(), os.environ)
    if stale:
        message = (f"{', '.join(f'{name}.py' for name in stale)} changed since the simulator was compiled (or its "
                   "build is incomplete): running it from source (slower); `make compile` rebuilds it")
        try:
            warnings.warn(message, StaleBuildWarning, stacklevel=2)
        except StaleBuildWarning:  # warnings turned into errors (-W error): still no traceback for a slower run
            print(f"warning: {message}", file=sys.stderr)
    if how == "source":
        sys.meta_path.insert(0, SourceFinder(COMPILED_MODULES))
    runs_compiled = how == "compiled"
