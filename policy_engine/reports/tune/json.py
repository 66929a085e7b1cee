"""``tune --format json``: ``objectives``, ``constraints``, ``recommended``, the decision (``keep_current``,
``keep_reason``, ``best``, ``gain``, ``min_gain``, workload samples and wins, the spread, the nearest miss),
``promise_changes``, ``sensitivity``, ``current``, ``front`` and ``runs`` (each run as ``sweep --format
json`` writes it), for scripts. The document is read by ``reports.tune.view.document``."""

from __future__ import annotations

import json
from typing import TextIO

from policy_engine.reports.tune.view import TuneOutput, document


def write(output: TuneOutput, stream: TextIO) -> None:
    json.dump(document(output), stream)
    stream.write("\n")
