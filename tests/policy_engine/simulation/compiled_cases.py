"""What a simulation decided, as text: the compiled simulator and its source must produce the same.

Run as a script (``python -m tests.policy_engine.simulation.compiled_cases CASES``) it prints the
outcome of every pickled case, so that a process running the source can be compared with one
running the compiled build.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.results.records import build_result


def outcome(case: tuple, transitions: bool) -> str:
    """Every job's record and attempts, the shares' metrics and, with ``transitions``, every state change."""
    topology, jobs, updates, settings = case
    engine = Engine(topology, jobs, updates, settings)
    changes: list[tuple] = []
    if transitions:
        engine.on_transition = lambda *change: changes.append((change[0], change[1].spec.name, *change[2:]))
    engine.run()
    result = build_result(engine)
    records = [(*record[:12], [tuple(attempt) for attempt in record.attempts]) for record in result.jobs]
    text = json.dumps([result.to_json(), records, changes, result.utilisation], sort_keys=True)
    # numbers by value: the compiled build keeps a float field a float where the source may keep a whole int
    return json.dumps(json.loads(text, parse_int=float), sort_keys=True)


def outcomes(cases: list[tuple]) -> list[str]:
    return [outcome(case, transitions) for case in cases for transitions in (False, True)]


if __name__ == "__main__":
    print(json.dumps(outcomes(pickle.loads(Path(sys.argv[1]).read_bytes()))))
