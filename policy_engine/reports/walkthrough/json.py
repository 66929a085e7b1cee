"""``walkthrough --format json``: ``{"steps": [{"time", "title", "expected", "jobs"}]}``, each job as
``simulate --format json`` writes it plus its ``priority`` (which step 3 raises)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

import click

from policy_engine.reports.kit.subjects import WalkthroughStep
from policy_engine.simulation.results.numbers import as_number


def to_dict(steps: Sequence[WalkthroughStep]) -> dict[str, Any]:
    return {"steps": [{"time": as_number(step.time), "title": step.title, "expected": step.expected,
                       "jobs": [{**job.to_json(), "priority": job.priority} for job in step.result.jobs]}
                      for step in steps]}


def write(steps: Sequence[WalkthroughStep], stream: TextIO) -> None:
    click.echo(json.dumps(to_dict(steps), indent=2, allow_nan=False), file=stream)
