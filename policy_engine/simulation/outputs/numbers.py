"""How the simulator writes numbers: one rule for text reports and one for JSON, so every output agrees."""

from __future__ import annotations

import math
from typing import Any


def format_seconds(value: float) -> str:
    """A time as people write it: 1234567 and 0.25, never 1.23457e+06, 1234567.0 or a 6-digit rounding.

    Shown to the millisecond (below one, to the nanosecond), which also hides float noise
    (7117.938999951 -> 7117.939); JSON keeps the full value (``as_number``).
    """
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value.is_integer():
        return str(int(value))
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    if text in ("0", "-0"):  # below a millisecond: keep what there is rather than print 0
        text = f"{value:.9f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


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
