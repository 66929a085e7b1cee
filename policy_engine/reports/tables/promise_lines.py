"""A declared guarantee that changes, as one line (``diff`` and ``tune`` both list them)."""

from __future__ import annotations

from policy_engine.analysis.promise_changes import PromiseChange


def declared(value: int | bool | None) -> str:
    """A declared promise's value: ``-`` when not declared."""
    return "-" if value is None else "yes" if value is True else str(value)


def promise_line(change: PromiseChange) -> str:
    """``WEAKENED training/A min_capacity ml.g5.xlarge: 8 -> 6 (proof: held -> held)``, with who accepted it."""
    state = f"proof: {change.proven_before} -> {change.proven_after}"
    accepted = f"; accepted ({change.kind.rule}): {change.accepted}" if change.accepted else (
        f"; needs review ({change.kind.rule})" if change.kind.rule else "")
    return (f"{change.kind.value.upper().replace('_', ' '):<24} {change.label}: {declared(change.before)} -> "
            f"{declared(change.after)} ({state}{accepted})")
