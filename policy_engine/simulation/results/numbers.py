"""How the simulator writes JSON numbers, so every output agrees (text for people: ``foundation.units``)."""

from __future__ import annotations

from typing import Any


def as_number(value: float | int | None) -> float | int | None:
    """One JSON number on the per-job hot path: an integral float is written as an int (600, not 600.0)."""
    return int(value) if value.__class__ is float and value.is_integer() else value


def plain(value: Any) -> Any:
    """``as_number`` through dicts, lists and tuples: JSON numbers one way whatever path computed them."""
    if value.__class__ is float:
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value
