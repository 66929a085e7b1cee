"""The fuzz campaign at scale: 10,000+ odd or hostile inputs through the ``batch-quota`` CLI in-process.

Inputs: the hostile corpus (``tests/data/hostile``) and seeded random mutations of a topology (YAML and
JSON), a scenario, a CSV and a JSON Lines job file and a CloudFormation template (``tests/policy_engine/fuzz.py``:
bytes flipped, hostile tokens inserted, values replaced, ranges cut or repeated). A topology runs through
``check --format json`` plus one of explain/graph/check/generate, a scenario or job file through
``simulate --format json``, a template through ``check`` and ``import --from-template``; then
``generate``/``simulate`` with odd option values (NaN, infinity, 1e-308, malformed mixes), one set per ten files;
``sweep``/``tune``/``compare`` with values past their bounds (``--vary`` ranges, grid sizes, samples, workers),
``iam-policy``, ``history --since`` and ``serve --events-url``, one set per hundred files; an events file through
``top --events``; and every output flag against a FIFO, a device copy and planted symlinks (targets unchanged).

Then ``--requests`` hostile requests over HTTP to a real ``batch-quota serve``
(``tests/policy_engine/endpoint_fuzz.py``:
every AWS Batch operation and the JSON 1.1 reads with bodies built from their botocore shapes and hostile
leaves, the control API, requests the guard must refuse, oversized heads): no 5xx, every answer JSON, every
guarded request 403 with the state unchanged, no traceback in the server's log.

Prints: inputs and runs, exit codes, failures by kind (tracebacks, exit codes other than 0/1/2,
invalid JSON, runs over 10 s; all must be 0), run times (median, p99, max) and how fast a
"billion laughs" file is refused; for the endpoint, requests, statuses, failures and latency. Exit 1 if any
failure.
Run: ``python benchmarks/fuzz_bench.py [--inputs 10000] [--requests 20000] [--seed 0]`` (outside CI: a few
minutes).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from policy_engine.inputs.loading import LoadError, load_topology
from tests.policy_engine import endpoint_fuzz, fuzz


def _bomb_seconds(repeats: int = 5) -> float:
    path = fuzz.CORPUS / "topology-billion-laughs.yaml"
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        with contextlib.suppress(LoadError):
            load_topology(path)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="mutated inputs (the corpus comes on top)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--requests", type=int, default=20_000, help="hostile requests to a real serve (0: none)")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    codes: collections.Counter = collections.Counter()
    failures: collections.Counter = collections.Counter()
    examples: dict[str, tuple[str, bytes]] = {}
    times: list[float] = []
    largest = 0
    inputs = 0
    started = time.perf_counter()

    def record(kind: str, data: bytes, outcomes: list[fuzz.Outcome]) -> None:
        nonlocal largest, inputs
        inputs += 1
        largest = max(largest, len(data))
        for outcome in outcomes:
            codes[outcome.exit_code] += 1
            times.append(outcome.seconds)
            if outcome.problem:
                key = outcome.problem.split(":")[0]
                failures[key] += 1
                examples.setdefault(key, (f"{kind} {' '.join(outcome.args[:1])}: {outcome.problem}", data[:500]))

    for kind, path in fuzz.corpus():
        record(kind, path.read_bytes(), fuzz.run_corpus_file(kind, path))
    corpus_inputs = inputs
    for index in range(options.inputs):
        kind = fuzz.KINDS[index % len(fuzz.KINDS)]
        data = fuzz.mutate(fuzz.SEEDS[kind], rng)
        record(kind, data, fuzz.run_input(kind, data, index))
        if (index + 1) % 1000 == 0:
            print(f"  {index + 1:,} mutated inputs, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    flag_sets = options.inputs // 10
    for _ in range(flag_sets):
        record("options", b"", fuzz.run_flags(rng))
    surface_sets = max(1, options.inputs // 100)  # sweeps and tunes: slower, fewer
    for _ in range(surface_sets):
        record("newer surfaces", b"", fuzz.run_surfaces(rng))
    record("output targets", b"", fuzz.run_outputs())
    wall = time.perf_counter() - started
    ordered = sorted(times)
    print(f"inputs: {inputs:,} ({corpus_inputs} corpus files + {options.inputs:,} mutated files + {flag_sets:,} sets "
          f"of odd option values + {surface_sets:,} of sweep/tune/compare/iam-policy/history/serve values + one set of "
          f"hostile output targets, seed {options.seed}); "
          f"runs: {len(times):,}; largest input {largest:,} bytes; wall {wall:.1f} s")
    print("exit codes: " + ", ".join(f"{code}: {count:,}" for code, count in sorted(codes.items(), key=str)))
    print(f"run time: median {statistics.median(ordered) * 1000:.1f} ms, "
          f"p99 {ordered[int(len(ordered) * 0.99)] * 1000:.1f} ms, max {ordered[-1]:.2f} s "
          f"(limit {fuzz.TIME_LIMIT:.0f} s)")
    print(f"failures: {sum(failures.values())} "
          f"(tracebacks {failures['traceback'] + failures['traceback printed']}, "
          f"other exit codes {failures['exit code']}, invalid JSON {failures['invalid JSON output']}, "
          f"over {fuzz.TIME_LIMIT:.0f} s {failures[f'over {fuzz.TIME_LIMIT} s']})")
    for text, data in examples.values():
        print(f"  e.g. {text}\n       input: {data!r}")
    print(f"billion-laughs topology ({(fuzz.CORPUS / 'topology-billion-laughs.yaml').stat().st_size} bytes) "
          f"refused in {_bomb_seconds() * 1000:.0f} ms (median of 5)")
    endpoint_failures = _endpoint_campaign(options.requests, options.seed) if options.requests else 0
    return 1 if failures or endpoint_failures else 0


def _endpoint_campaign(count: int, seed: int) -> int:
    """``count`` hostile requests over HTTP to a real ``serve``; prints its figures, returns the failures."""
    rng = random.Random(seed)
    statuses: collections.Counter = collections.Counter()
    problems: list[str] = []
    times: list[float] = []
    started, cpu = time.perf_counter(), time.process_time()
    with endpoint_fuzz.Server() as server:
        for index, request in enumerate([*endpoint_fuzz.requests(rng, count), *endpoint_fuzz.oversized_heads()]):
            answer = (endpoint_fuzz.send_head(server, request) if request.kind.startswith("head:")
                      else endpoint_fuzz.send(server, request))
            statuses[answer.status] += 1
            times.append(answer.seconds)
            if answer.problem:
                problems.append(f"{request.kind} {request.path[:80]}: {answer.problem} (body {request.body[:200]!r})")
            if (index + 1) % 5000 == 0:
                print(f"  {index + 1:,} requests, {time.perf_counter() - started:.0f} s", file=sys.stderr)
        problems += [f"server log: {line}" for line in endpoint_fuzz.server_problems(server.log())]
    ordered = sorted(times)
    load = os.getloadavg()[0]
    print(f"endpoint: {len(times):,} hostile requests over HTTP to batch-quota serve (seed {seed}), wall "
          f"{time.perf_counter() - started:.1f} s, client CPU {time.process_time() - cpu:.1f} s, load average "
          f"{load:.1f}; statuses " + ", ".join(f"{code}: {n:,}" for code, n in sorted(statuses.items())))
    print(f"endpoint latency: median {statistics.median(ordered) * 1000:.1f} ms, "
          f"p99 {ordered[int(len(ordered) * 0.99)] * 1000:.1f} ms, max {ordered[-1]:.2f} s")
    print(f"endpoint failures: {len(problems)} (5xx, answers not JSON, guarded requests let through or changing "
          "the state, no answer, tracebacks in the server's log)")
    for line in problems[:20]:
        print(f"  e.g. {line}")
    return len(problems)


if __name__ == "__main__":
    raise SystemExit(main())
