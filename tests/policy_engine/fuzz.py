"""The fuzz harness shared by ``test_fuzz_cli.py`` (a few hundred inputs) and ``benchmarks/fuzz_bench.py`` (10,000+).

An input is a topology, scenario or job file: a valid seed mutated at random (bytes flipped,
hostile tokens inserted, ranges cut or repeated), or a file of the hostile corpus in
``tests/data/hostile``. Each runs through the CLI entry point in-process; what counts as a
failure is a traceback, an exit code other than 0/1/2, invalid JSON output (``NaN`` included)
or more than ``TIME_LIMIT`` seconds.
"""

from __future__ import annotations

import json
import random
import signal
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs.examples import EXAMPLE_YAML
from tests.policy_engine.inputs.test_template import HAND_WRITTEN as TEMPLATE_YAML

ROOT = Path(__file__).parents[2]
CORPUS = ROOT / "tests" / "data" / "hostile"
TIME_LIMIT = 10.0

TOPOLOGY_YAML = EXAMPLE_YAML.read_bytes()
TOPOLOGY_JSON = json.dumps({
    "service_environments": [{"name": "env", "capacity": {"ml.g5.xlarge": 3}}],
    "job_queues": [{"name": "training", "service_environment": "env", "shares": [
        {"name": "QS1", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND_AND_BORROW", "borrow_limit": 200},
        {"name": "QS2", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND"}]}],
    "guarantees": [{"share": "QS1", "min_capacity": {"ml.g5.xlarge": 1}}],
}, indent=1).encode()
SCENARIO_YAML = b"""\
topology: topology.yaml
settings: {startup_delay: 0, preemption_delay: 0, backfill: false, min_runtime: 1}
jobs:
  - {name: a, share: QS1, priority: 3, instances: 1, submit_at: 0, duration: 3600}
  - {name: b, share: QS2, priority: 1, submit_at: 100, duration: 3600, preemption_retries: 2}
  - {name: c, share: QS1, submit_at: 5, duration: 60, checkpoint_interval: 10, attempts: 2, failures: 1}
actions:
  - at: 200
    update_priority: {job: a, priority: 4}
"""
JOBS_CSV = b"name,share,instance_type,instances,priority,submit_at,duration\n" + b"".join(
    f"j{i},QS{1 + i % 3},ml.g5.xlarge,1,{i % 4},{i * 7},{60 + i}\n".encode() for i in range(12))

#: Tokens that have broken parsers before: YAML anchors and tags, NaN, huge numbers, encodings, control bytes.
HOSTILE = [b"&a ", b"*a", b"<<: *a\n", b"!!python/object:os.system ", b"!!binary ", b"\x00", b"\xff", b"\xe9",
           b"\xef\xbb\xbf", b"\xfe\xff", b".nan", b".inf", b"-.inf", b"1e999", b"NaN", b"Infinity", b"9" * 5000,
           b"[" * 300, b"{" * 300, b"010", b"0x1F", b"NO", b"yes", b"1:30", b"~", b"---\n", b"...\n",
           b"%YAML 1.1\n", b"\t", b"'", b'"', b"- ", b": ", b"? ", b"|\n", b">-\n", b"#", b",", b";", b"\r",
           b"\x1b[31m", b"[bold]", b"$x$", b"<b>", b"\\N", b"-1", b"0", b"99999999999999999999", b"1e-308",
           b"QS1", b"training/QS1", b"topology.py", b"/dev/zero", b"jobs.csv", b"\"" * 3, b"\xf0\x9f\x92\xa5"]

#: Values that are well-formed YAML/JSON/CSV but wrong, huge or hostile where a name or number is expected.
VALUES = [b"0", b"-1", b"1.5", b"1e3", b"1.0e999", b".nan", b".inf", b"NaN", b"Infinity", b"9" * 400, b"010",
          b"0o17", b"1:30", b"NO", b"yes", b"null", b"~", b"true", b"[]", b"{}", b'""', b"'x'", b"QS1",
          b"training/QS2", b"ml.p5.48xlarge", b"RESERVE", b"LEND", b"DISABLED", b"-1e-308", b"4.9e-324",
          b"18446744073709551616", b"1e308", b"\"\x1b[31m[bold]<b>$x$\"", b"*a", b"&a x", b"!!binary aGk=",
          b"2024-01-01", b"9999", b"10000", b"86400", b"1000000", b'"\\ud800"', b'"a\\udfff"']

#: In-range values of the right kind: the file stays valid more often and reaches the rules and the simulator.
PLAUSIBLE = [b"0", b"1", b"2", b"3", b"5", b"10", b"100", b"200", b"3600", b"-1", b"true", b"false", b"LEND",
             b"RESERVE", b"LEND_AND_BORROW", b"ENABLED", b"DISABLED", b"QS1", b"QS2", b"QS3"]

JOBS_JSONL = b"".join(json.dumps({"name": f"j{i}", "share": f"QS{1 + i % 3}", "priority": i % 4, "submit_at": i * 7,
                                  "duration": 60 + i, "attempts": 1 + i % 2, "failures": i % 2}).encode() + b"\n"
                       for i in range(8))

PROFILE_YAML = b"""\
timezone: UTC
shares:
  QS1:
    jobs_per_day: 20
    daily_cycle: [1, 1, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1]
    sizes: {1: 0.8, 2: 0.2}
    run_time: {law: {distribution: lognormal, median: 600, sigma: 1.0}, maximum: 86400}
    priorities: {1: 0.9, 5: 0.1}
  training/QS2:
    jobs_per_day: 5
    bursts: {mean_jobs: 4, spread: 30}
    early_failures: {fraction: 0.1}
"""

PRICES_YAML = b"currency: USD\nper_instance_hour:\n  ml.g5.xlarge: 1.41\n"

KINDS = ("topology.yaml", "topology.json", "scenario.yaml", "jobs.csv", "jobs.jsonl", "template.yaml",
         "profile.yaml", "prices.yaml")
SEEDS = {"topology.yaml": TOPOLOGY_YAML, "topology.json": TOPOLOGY_JSON, "scenario.yaml": SCENARIO_YAML,
         "jobs.csv": JOBS_CSV, "jobs.jsonl": JOBS_JSONL, "template.yaml": TEMPLATE_YAML.encode(),
         "profile.yaml": PROFILE_YAML, "prices.yaml": PRICES_YAML}


def mutate(seed: bytes, rng: random.Random, steps: int | None = None) -> bytes:
    """``seed`` after 1-4 random edits; for half the inputs only values are replaced, so that the file parses."""
    data = bytearray(seed)
    values_only = rng.random() < 0.5  # half the inputs still parse: they reach the rules and the simulator
    for _ in range(steps if steps is not None else rng.choice((1, 1, 1, 2, 4))):
        at = rng.randint(0, len(data))
        action = 6 if values_only else rng.randrange(10)
        if action >= 6:  # replace one value (after ": " or a CSV comma) and keep the structure
            marks = [i for i in range(len(data) - 1) if data[i:i + 2] == b": " or data[i:i + 1] == b","]
            if marks:
                mark = rng.choice(marks)
                start = mark + (2 if data[mark:mark + 1] == b":" else 1)
                end = start
                while end < len(data) and data[end:end + 1] not in (b"\n", b",", b"}", b"]"):
                    end += 1
                data[start:end] = rng.choice(PLAUSIBLE if rng.random() < 0.5 else VALUES)
        elif action == 0 and data:  # flip a byte
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif action in (1, 2):  # insert a hostile token
            data[at:at] = rng.choice(HOSTILE)
        elif action == 3:  # cut a range
            del data[at:at + rng.randint(1, 40)]
        elif action == 4:  # repeat a range
            data[at:at] = data[at:at + rng.randint(1, 200)] * rng.randint(2, 50)
        else:  # swap two lines
            lines = bytes(data).split(b"\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b"\n".join(lines))
    return bytes(data)


@dataclass
class Outcome:
    args: tuple[str, ...]
    exit_code: int | None
    seconds: float
    problem: str | None  # None when the run behaved


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout


def run_cli(args: list[str], stdin: bytes | None = None, env: dict[str, str] | None = None) -> Outcome:
    """One in-process run; any traceback, other exit code, broken JSON or overrun becomes ``problem``."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
    start = time.perf_counter()
    try:
        result = CliRunner().invoke(main, args, input=stdin, catch_exceptions=True, env=env)
    except _Timeout:
        return Outcome(tuple(args), None, time.perf_counter() - start, f"over {TIME_LIMIT} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - start
    problem = None
    if isinstance(result.exception, _Timeout):
        problem = f"over {TIME_LIMIT} s"
    elif result.exception is not None and not isinstance(result.exception, SystemExit):
        problem = f"traceback: {type(result.exception).__name__}: {result.exception}"
    elif result.exit_code not in (0, 1, 2):
        problem = f"exit code {result.exit_code}"
    elif "Traceback (most recent call last)" in result.stderr:
        problem = "traceback printed"
    elif "--format" in args and "json" in args and (result.exit_code != 2 or args[0] == "check"):
        try:
            json.loads(result.stdout, parse_constant=_no_constants)
        except ValueError as error:
            problem = f"invalid JSON output: {error}"
    return Outcome(tuple(args), result.exit_code, seconds, problem)


def _no_constants(token: str):
    raise ValueError(f"{token} in JSON output")


def commands_for(kind: str, folder: Path, index: int) -> list[list[str]]:
    """The commands one input runs through; a topology rotates through the other commands by ``index``."""
    if kind == "template.yaml":  # a CloudFormation template: check reads it, import turns it into a topology
        path = str(folder / kind)
        return [["check", path, "--format", "json"], ["import", "--from-template", path]]
    if kind.startswith("topology"):
        path = str(folder / kind)
        other = [["explain", "QS1", path], ["graph", path], ["check", path],
                 ["generate", path, "-o", str(folder / "out.csv"), "--jobs", "20"]][index % 4]
        return [["check", path, "--format", "json"], other]
    if kind == "profile.yaml":  # a workload profile: generate draws from it
        return [["generate", str(folder / "topology.yaml"), "--workload-profile", str(folder / kind), "--days", "2",
                 "-o", str(folder / "out.csv")]]
    scenario = str(folder / "scenario.yaml")
    if kind == "prices.yaml":  # a prices file: simulate prices the run with it
        return [["simulate", scenario, "--prices", str(folder / kind), "--format", "json", "--quiet"]]
    runs = [["simulate", scenario, "--format", "json", "--quiet"]]
    if index % 4 == 0:  # designs side by side: the same input on two designs, in-process
        topology = str(folder / "topology.yaml")
        runs.append(["compare", scenario, "--topology", topology, "--topology", topology, "--workers", "1",
                     "--format", "json"])
    if kind in ("jobs.csv", "jobs.jsonl"):  # a job file: fit reads it as a history
        runs.append(["fit", str(folder / kind), "--format", "json"])
    return runs


def write_input(folder: Path, kind: str, data: bytes) -> None:
    """``data`` as the file of ``kind``, with valid companions (a scenario needs a topology and jobs)."""
    (folder / "topology.yaml").write_bytes(TOPOLOGY_YAML)
    jobs = "jobs.jsonl" if kind == "jobs.jsonl" else "jobs.csv"
    (folder / "scenario.yaml").write_bytes(f"topology: topology.yaml\njobs: {jobs}\n".encode())
    (folder / "jobs.csv").write_bytes(JOBS_CSV)
    (folder / kind).write_bytes(data)


def run_input(kind: str, data: bytes, index: int = 0) -> list[Outcome]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_input(folder, kind, data)
        return [run_cli(args) for args in commands_for(kind, folder, index)]


def corpus() -> Iterator[tuple[str, Path]]:
    """``(kind, file)`` for each hostile file, named ``KIND-what.SUFFIX`` (``topology-bomb.yaml``)."""
    for path in sorted(CORPUS.iterdir()):
        kind = f"{path.name.split('-')[0]}{path.suffix}"
        if kind in KINDS:
            yield kind, path


def run_corpus_file(kind: str, path: Path) -> list[Outcome]:
    """A corpus file run as the named file itself (not a copy) and, for topologies, also through ``check -``."""
    outcomes = run_input(kind, path.read_bytes())
    if kind.startswith("topology"):
        outcomes.append(run_cli(["check", "-", "--format", "json"], stdin=path.read_bytes()))
    return outcomes


#: Option values: non-finite, tiny, huge, malformed mixes and separators.
FLAG_VALUES = ["nan", "inf", "-inf", "1e999", "1e-308", "0", "-1", "1", "3.5", "9" * 5000, "", " ", "\x1b[2J",
               "1:nan", "1:inf", "1:-1", "a:b", "1:1,2:0", "0:1", "99999999999999999999:1", "1:1e308", ":", ",",
               "QS1=1:1", "training/QS1=5:1", "nope=1:1", "QS1=", "lowest-priority-newest", "x" * 300,
               "0s..30d", "..", "1h..", "2h..1h", "nan..inf", "2026-01-01..2026-02-01", "0..1e999", "9999-99-99..1d"]
GENERATE_FLAGS = ["--jobs", "--rate", "--sizes", "--duration-mean", "--duration-distribution", "--priorities",
                  "--share-priorities", "--seed"]
SIMULATE_FLAGS = ["--until", "--victim-policy", "--period"]
TOP_FLAGS = ["--queue", "--interval", "--region", "--events", "--max-attempts"]
#: ``top`` talks to Batch: sent to a closed loopback port (refused at once), never to AWS.
TOP_ENV = {"AWS_ENDPOINT_URL_BATCH": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "fuzz",
           "AWS_SECRET_ACCESS_KEY": "fuzz", "AWS_DEFAULT_REGION": "us-east-1", "AWS_CONFIG_FILE": "/dev/null",
           "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true"}


def flag_runs(rng: random.Random, folder: Path) -> list[list[str]]:
    """A ``generate``, a ``simulate`` and a ``top`` with odd option values."""
    generate = ["generate", "-o", str(folder / "out.csv"), "--jobs", "20"]
    for _ in range(rng.randint(1, 3)):
        generate += [rng.choice(GENERATE_FLAGS), rng.choice(FLAG_VALUES)]
    simulate = ["simulate", str(folder / "scenario.yaml"), "--format", "json", "--quiet",
                rng.choice(SIMULATE_FLAGS), rng.choice(FLAG_VALUES)]
    top = ["top", "--queue", "training", "--once", "--max-attempts", "1",
           rng.choice(TOP_FLAGS), rng.choice(FLAG_VALUES)]
    return [generate, simulate, top]


def run_flags(rng: random.Random) -> list[Outcome]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_input(folder, "jobs.csv", JOBS_CSV)
        return [run_cli(args, env=TOP_ENV if args[0] == "top" else None) for args in flag_runs(rng, folder)]
