"""Compiles the simulator's hot path with mypyc; everything else about the package is in pyproject.toml.

The compiled modules are built from the same type-checked source. Next to the extensions it has just
built, the build records each source's hash (``_compiled_sources``), so that
``policy_engine.simulation.compiled`` runs the source instead of a build older than it. With
``BATCH_QUOTA_PURE_PYTHON`` set at install time no extension is built (a pure-Python install, slower
and otherwise the same).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
PACKAGE = Path("policy_engine") / "simulation" / "core"
#: Kept equal to ``policy_engine.simulation.compiled.COMPILED_MODULES`` (a test compares them).
COMPILED_MODULES = ("agenda", "capacity", "engine", "events", "jobs", "lifecycle", "placement", "preemption",
                    "queues", "steps", "wait_sweep")
RECORD = "_compiled_sources.py"


def pure_python() -> bool:
    """``BATCH_QUOTA_PURE_PYTHON`` set to anything but empty, 0, false or no (as ``compiled.py`` reads it)."""
    return os.environ.get("BATCH_QUOTA_PURE_PYTHON", "").strip().lower() not in ("", "0", "false", "no")


class BuildAndRecord(build_ext):
    """Build the extensions, then record, beside them, the hashes of the sources they were built from."""

    def run(self) -> None:
        if not self.extensions:
            return
        hashes = {name: hashlib.sha256((HERE / PACKAGE / f"{name}.py").read_bytes()).hexdigest()
                  for name in COMPILED_MODULES}
        super().run()
        # where this run put the extensions: the tree (an editable install, ``--inplace``) or a build directory
        built = Path(self.get_ext_fullpath(f"policy_engine.simulation.core.{COMPILED_MODULES[0]}")).parent
        (built / RECORD).write_text('"""Written by setup.py: the sha256 of each compiled module\'s source at build '
                                    f'time."""\n\nSOURCE_HASHES = {hashes!r}\n', encoding="utf-8")


def extensions() -> list:
    if pure_python():
        return []  # an earlier build in the tree is left as it is: its record still tells whether it is current
    from mypyc.build import mypycify

    sources = [str(PACKAGE / f"{name}.py") for name in COMPILED_MODULES]
    # The rest of the project is read for its types, in a build environment without its libraries
    # (pydantic, ...): their types are unknown there, so only the compiled modules' own errors count
    # (``make lint`` checks everything with the libraries installed). One shared library inside the
    # package (not at the top level, which an editable install does not map).
    flags = ["--ignore-missing-imports", "--follow-imports=silent", "--no-warn-unused-ignores"]
    return mypycify([*flags, *sources], opt_level="3", group_name="policy_engine.simulation.core._native")


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildAndRecord})
