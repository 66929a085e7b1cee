"""``compare --format json``: every run's figures and each difference as a number (seconds, counts, fractions)."""

from __future__ import annotations

import json
from typing import TextIO

from policy_engine.comparison.subjects import CompareOutput
from policy_engine.simulation.results.numbers import plain


def write(output: CompareOutput, stream: TextIO) -> None:
    stream.write(json.dumps(plain(output.to_json()), allow_nan=False))
    stream.write("\n")
