"""``fit --format json``: per share, what was fitted and the profile written (seconds as numbers)."""

from __future__ import annotations

import json
from typing import TextIO

from policy_engine.reports.fit.view import FitOutput, document


def write(output: FitOutput, stream: TextIO) -> None:
    json.dump(document(output), stream, indent=2, allow_nan=False)
    stream.write("\n")
