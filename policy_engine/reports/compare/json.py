"""``compare --format json``: every run's figures and each difference as a number (seconds, counts, fractions)."""

from __future__ import annotations

import json
from typing import TextIO

from policy_engine.reports.compare.view import CompareOutput, document


def write(output: CompareOutput, stream: TextIO) -> None:
    stream.write(json.dumps(document(output), allow_nan=False))
    stream.write("\n")
