"""``walkthrough --format json``: ``{"steps": [{"time", "title", "expected", "jobs"}]}``, each job as
``simulate --format json`` writes it plus its ``priority`` (which step 3 raises)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

import click

from policy_engine.reports.walkthrough.view import WalkthroughStep, build


def to_dict(steps: Sequence[WalkthroughStep]) -> dict[str, Any]:
    return build(steps, rows=False).document


def write(steps: Sequence[WalkthroughStep], stream: TextIO) -> None:
    click.echo(json.dumps(to_dict(steps), indent=2, allow_nan=False), file=stream)
