"""Values handed to the simulator through its Python API, as the exact types the engine reads.

The compiled engine (``compiled``) checks its annotations at run time: a ``numpy.int64`` priority
from a data frame, or a 0/1 flag, would stop it with a bare ``TypeError`` where the source carried
on. These convert what stands for the same value exactly (an integer-like to ``int``, a real
number to ``float``, 0/1 to ``bool``) and refuse the rest with the field's name; nothing is rounded.
"""

from __future__ import annotations

import operator
from numbers import Real
from typing import Any

from policy_engine.simulation.core.jobs import JobSpec

#: ``JobSpec`` fields read as integers and as seconds; ``None`` stays ``None`` where the field allows it.
_INTEGERS = ("instances", "priority", "preemption_retries", "attempts", "failures", "max_runtime")
_SECONDS = ("submit_at", "duration", "checkpoint_interval", "fail_after")


def exact_integer(name: str, value: Any) -> int:
    """``value`` as an ``int`` when it is one (``operator.index``: numpy integers too, never 2.0 or "2")."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {value!r}") from None


def exact_number(name: str, value: object) -> float:
    """``value`` as a ``float`` when it is a real number (an ``int`` or a numpy scalar too)."""
    if isinstance(value, float):
        return value
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, not {value!r}")
    return float(value)


def exact_flag(name: str, value: Any) -> bool:
    """``value`` as a ``bool`` when it is one, or 0 or 1 (a numpy bool too)."""
    if isinstance(value, bool):
        return value
    if value in (0, 1) and not isinstance(value, str):
        return bool(value)
    raise TypeError(f"{name} must be true or false, not {value!r}")


def exact_spec(spec: JobSpec) -> JobSpec:
    """``spec`` with every count an ``int`` and every time a ``float`` (``TypeError`` names the job and field)."""
    changes: dict[str, Any] = {}
    for name in (*_INTEGERS, *_SECONDS):
        value = getattr(spec, name)
        if value is None and JobSpec._field_defaults.get(name, 0) is None:
            continue
        exact = exact_integer if name in _INTEGERS else exact_number
        changes[name] = exact(f"job {spec.name!r}: {name}", value)
    return spec._replace(**changes)
