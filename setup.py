"""Compiles the simulator's hot path with mypyc; everything else about the package is in pyproject.toml.

The compiled modules are built from the same type-checked source; the build records each source's
hash (``_compiled_sources``) so that ``policy_engine.simulation.compiled`` runs the source instead of a
build older than it. ``BATCH_QUOTA_PURE_PYTHON=1`` at install time builds no extension: a pure-Python
install, slower and otherwise the same.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
PACKAGE = Path("policy_engine") / "simulation"
#: Kept equal to ``policy_engine.simulation.compiled.COMPILED_MODULES`` (a test compares them).
COMPILED_MODULES = ("capacity", "engine", "events", "jobs", "lifecycle", "placement", "pool_queue", "preemption",
                    "queues", "steps")
RECORD = "_compiled_sources.py"


class BuildAndRecord(build_ext):
    """Build the extensions, then record the hashes of the sources they were built from."""

    def run(self) -> None:
        hashes = {name: hashlib.sha256((HERE / PACKAGE / f"{name}.py").read_bytes()).hexdigest()
                  for name in COMPILED_MODULES}
        super().run()
        text = ('"""Written by setup.py: the sha256 of each compiled module\'s source at build time."""\n\n'
                f"SOURCE_HASHES = {hashes!r}\n")
        targets = [HERE / PACKAGE / RECORD] + ([] if self.inplace else [Path(self.build_lib) / PACKAGE / RECORD])
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


def extensions() -> list:
    if os.environ.get("BATCH_QUOTA_PURE_PYTHON") == "1":
        (HERE / PACKAGE / RECORD).unlink(missing_ok=True)
        return []
    from mypyc.build import mypycify

    sources = [str(PACKAGE / f"{name}.py") for name in COMPILED_MODULES]
    # The rest of the project is read for its types, in a build environment without its libraries
    # (pydantic, ...): their types are unknown there, so only the compiled modules' own errors count
    # (``make lint`` checks everything with the libraries installed). One shared library inside the
    # package (not at the top level, which an editable install does not map).
    flags = ["--ignore-missing-imports", "--follow-imports=silent", "--no-warn-unused-ignores"]
    return mypycify([*flags, *sources], opt_level="3", group_name="policy_engine.simulation._native")


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildAndRecord})
