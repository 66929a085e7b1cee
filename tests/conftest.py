"""Shared fixtures: the embedded example and a helper to write topology files."""

from __future__ import annotations

from pathlib import Path

import pytest

from policy_engine.examples import example_topology
from policy_engine.model import Topology


@pytest.fixture
def example() -> Topology:
    return example_topology()


@pytest.fixture
def write_file(tmp_path: Path):
    """Write ``text`` to ``tmp_path/name`` and return the path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write
