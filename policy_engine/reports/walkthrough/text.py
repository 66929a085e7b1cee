"""``walkthrough --format text``: one jobs table per step, captioned with what AWS's example expects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from policy_engine.reports.kit import terminal
from policy_engine.reports.tables.jobs_table import jobs_table
from policy_engine.reports.walkthrough.view import WalkthroughStep, build


def write(steps: Sequence[WalkthroughStep], stream: TextIO) -> None:
    console = terminal.for_stream(stream, file_width=160)
    for step in build(steps, document=False).steps:
        console.print(jobs_table(step.jobs, step.title, caption=f"expected: {step.expected}", waits=False))
