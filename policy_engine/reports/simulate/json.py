"""``simulate --format json``: every job, every share and the summary, streamed job by job."""

from __future__ import annotations

from typing import TextIO

from policy_engine.reports.simulate.view import SimulateOutput, json_document


def write(output: SimulateOutput, stream: TextIO) -> None:
    """``observed_vs_simulated`` follows the summary when the workload carried observed jobs."""
    document = json_document(output)
    document.write(stream, document.extra, document.fields)
    stream.write("\n")
