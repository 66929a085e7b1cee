"""``drift``'s view: the verdict (no drift, incomplete, or how many differences) and one row per difference
(its kind, object, field and both values as reports write them), read once from ``DriftOutput``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from policy_engine.adapters.aws.drift import shown
from policy_engine.reports.kit.subjects import DriftOutput

__all__ = ["DifferenceRow", "DriftOutput", "DriftVerdict", "DriftView", "build"]


class DriftVerdict(StrEnum):
    NONE = "no drift"
    INCOMPLETE = "incomplete"  # nothing drifted among what was read, and some calls could not be read
    DRIFT = "drift"


@dataclass(frozen=True)
class DifferenceRow:
    """One drifted field: ``expected`` and ``actual`` as reports write them (``-`` for absent), ``line`` the
    sentence of the text format."""

    kind: str
    object: str
    field: str
    expected: str
    actual: str
    line: str


@dataclass(frozen=True)
class DriftView:
    verdict: DriftVerdict
    source: str
    region: str
    unreadable: int
    rows: tuple[DifferenceRow, ...]
    #: the JSON document (``Difference.to_dict`` per difference), its values as read
    document: dict[str, Any]


def _value(value: Any) -> str:
    return "-" if value is None else shown(value)


def build(output: DriftOutput) -> DriftView:
    differences = output.differences
    verdict = (DriftVerdict.DRIFT if differences else DriftVerdict.INCOMPLETE if output.unreadable
               else DriftVerdict.NONE)
    rows = tuple(DifferenceRow(d.kind.value, d.object, d.field, _value(d.expected), _value(d.actual), d.line())
                 for d in differences)
    document = {"source": output.source, "region": output.region, "drift": bool(differences),
                "differences": [d.to_dict() for d in differences], "unreadable": list(output.unreadable)}
    return DriftView(verdict, output.source, output.region, len(output.unreadable), rows, document)
