"""The command line as the CLI tests drive it: ``invoke`` runs ``batch-quota`` in this process, ``run_files``
writes the files of one run (a topology, the scenario that names it, a prices file)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner, Result

from policy_engine.cli.app import main


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def run_files(write_file: Callable[[str, str], Path], topology: str, scenario: str, prices: str) -> dict[str, Path]:
    """``topology.yaml`` (the scenario's ``topology:``), ``scenario.yaml`` and ``prices.yaml``, by ``write_file``."""
    write_file("topology.yaml", topology)
    return {"scenario": write_file("scenario.yaml", scenario), "prices": write_file("prices.yaml", prices)}
