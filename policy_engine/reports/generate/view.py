"""``generate``'s view: what was written (the jobs file and its job count, the scenario beside it) and the notes
said on stderr, read once from ``GenerateOutput`` for every format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from policy_engine.reports.kit.subjects import GenerateOutput

__all__ = ["GenerateOutput", "GenerateView", "build"]


@dataclass(frozen=True)
class GenerateView:
    jobs: int
    output: str
    scenario: str | None
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: ``jobs``, ``output``, ``scenario`` (or null) and ``notes``."""
        return {"jobs": self.jobs, "output": self.output, "scenario": self.scenario, "notes": list(self.notes)}


def build(output: GenerateOutput) -> GenerateView:
    return GenerateView(output.jobs, output.output, output.scenario, tuple(output.notes))
