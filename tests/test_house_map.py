"""CONTRIBUTING.md's map of the house is generated from the docstrings (``scripts/house_map.py``) and kept current."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _house_map():
    spec = importlib.util.spec_from_file_location("house_map", ROOT / "scripts" / "house_map.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["house_map"] = module
    spec.loader.exec_module(module)
    return module


def test_the_map_in_contributing_is_the_one_the_docstrings_make():
    house_map = _house_map()
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert house_map.rewritten(text) == text, "CONTRIBUTING.md's map is stale: run python scripts/house_map.py"


def test_every_module_and_folder_is_on_the_map_with_a_docstring():
    house_map = _house_map()
    text = house_map.house_map()
    for package in ("policy_engine", "quota_constructs"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name.startswith("_") and path.name != "__init__.py":
                continue  # written by the build (_compiled_sources.py)
            assert house_map.summary(path), f"{path.relative_to(ROOT)} has no docstring to put on the map"
            where = path.parent.relative_to(ROOT) if path.name == "__init__.py" else path.relative_to(ROOT)
            line = f"`{where}/`" if path.name == "__init__.py" else f"- `{path.name}`: {house_map.summary(path)}"
            assert line in text, f"{where} is not on the map"


def test_a_stale_map_is_rewritten_between_its_markers_only():
    house_map = _house_map()
    stale = f"before\n{house_map.START}\nold map\n{house_map.END}\nafter\n"
    assert house_map.rewritten(stale) == f"before\n{house_map.house_map()}\nafter\n"
