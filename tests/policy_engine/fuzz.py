"""The fuzz harness shared by ``test_fuzz_cli.py`` (a few hundred inputs) and ``benchmarks/fuzz_bench.py`` (10,000+).

An input is a topology, scenario or job file: a valid seed mutated at random (bytes flipped,
hostile tokens inserted, ranges cut or repeated), or a file of the hostile corpus in
``tests/data/hostile``. Each runs through the CLI entry point in-process; what counts as a
failure is a traceback, an exit code other than 0/1/2, invalid JSON output (``NaN`` included)
or more than ``TIME_LIMIT`` seconds.
"""

from __future__ import annotations

import json
import os
import random
import signal
import stat
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

#: EventBridge service-job events as ``serve --events`` writes them (``top --events`` follows such a file).
EVENTS_JSONL = b"".join(json.dumps(event).encode() + b"\n" for event in (
    {"detail-type": "Batch Service Job State Change", "time": "2026-01-01T00:00:00Z",
     "detail": {"jobArn": "arn:aws:batch:us-east-1:1:service-job/j", "quotaShareName": "QS1",
                "jobQueue": "arn:aws:batch:us-east-1:1:job-queue/training",
                "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 1}]}},
    {"detail-type": "Batch Service Job Preemption Started", "time": "2026-01-01T00:10:00Z",
     "detail": {"preemptedJobArn": "arn:aws:batch:us-east-1:1:service-job/j", "status": "RUNNING"}}))

KINDS = ("topology.yaml", "topology.json", "scenario.yaml", "jobs.csv", "jobs.jsonl", "template.yaml",
         "profile.yaml", "prices.yaml", "events.jsonl")
SEEDS = {"topology.yaml": TOPOLOGY_YAML, "topology.json": TOPOLOGY_JSON, "scenario.yaml": SCENARIO_YAML,
         "jobs.csv": JOBS_CSV, "jobs.jsonl": JOBS_JSONL, "template.yaml": TEMPLATE_YAML.encode(),
         "profile.yaml": PROFILE_YAML, "prices.yaml": PRICES_YAML, "events.jsonl": EVENTS_JSONL}


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
    if kind == "events.jsonl":  # an events file: top follows it (before its first call, to a closed port)
        return [["top", "--queue", "training", "--once", "--max-attempts", "1", "--events", str(folder / kind)]]
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
        return [run_cli(args, env=TOP_ENV if args[0] == "top" else None) for args in commands_for(kind, folder, index)]


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
               "0s..30d", "..", "1h..", "2h..1h", "nan..inf", "2026-01-01..2026-02-01", "0..1e999", "9999-99-99..1d",
               "2026-12-07T00:00:00Z", "2026-12-07T00:00:00", "9999-12-31T23:59:59Z"]
GENERATE_FLAGS = ["--jobs", "--rate", "--sizes", "--duration-mean", "--duration-distribution", "--priorities",
                  "--share-priorities", "--seed", "--start"]
SIMULATE_FLAGS = ["--until", "--victim-policy", "--period"]
TOP_FLAGS = ["--queue", "--interval", "--region", "--events", "--max-attempts"]
#: ``top`` talks to Batch: sent to a closed loopback port (refused at once), never to AWS.
TOP_ENV = {"AWS_ENDPOINT_URL_BATCH": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "fuzz",
           "AWS_SECRET_ACCESS_KEY": "fuzz", "AWS_DEFAULT_REGION": "us-east-1", "AWS_CONFIG_FILE": "/dev/null",
           "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true"}


#: ``--vary`` values past every bound: huge integers, huge and tiny steps, many ranges, NaN, scales at the limits.
VARY_VALUES = ["QS1.borrow_limit=0.." + "9" * 400, "settings.startup_delay=0.1..1e308:1e-300",
               "settings.startup_delay=0..1:5e-324", "workload.scale=5e-324", "workload.duration_scale=1e308",
               "QS1.borrow_limit=" + ",".join(f"{i * 10000}..{i * 10000 + 9999}" for i in range(30)),
               "QS1.borrow_limit=0..9999", "settings.min_runtime=nan", "QS1.capacity.ml.g5.xlarge=99999999999",
               "transfer(QS1,QS2).ml.g5.xlarge=-99999999999", "QS1.borrow_limit=0,0", "workload.scale=1e6",
               "QS1.borrow_limit=-1,0,100"]
#: ``sweep``/``tune``/``compare`` options with odd values (counts past their bounds, NaN, huge durations).
RUN_FLAGS = ["--sample", "--workers", "--workload-samples", "--batch-size", "--budget", "--min-gain", "--until",
             "--constraint", "--seed"]
RUN_VALUES = ["0", "-1", "1", "2", "1000000", "1000000000", "nan", "inf", "1e308", "0.5", "1e308d", "5e-324",
              "max(wait_p95) <= 1e308d", "max(wait_p95) <= nan", "cost <= 1e308", ""]
#: ``iam-policy``, ``history --since`` and ``serve --events-url`` values that must be refused before any work
#: (no value here is a valid URL: ``serve`` would then listen).
ACCOUNT_VALUES = ["12", "abcdefghijkl", "*:*", "", "1234567890123", "123456789012/../*", "\x1b[2J", "12345678901a"]
REGION_VALUES = ["", "us-east-1/../*", "../../x", "\x1b[31m", "us_east_1", "US-EAST-1", "*:*", "x" * 300]
SINCE_VALUES = ["1e308d", "1e300d", "1e15s", "nan", "inf", "-1d", "0", "100000d", "9" * 400, "1e-308s"]
URL_VALUES = ["http://[::1", "http://[", "ftp://x", "http://", "://x", "http://h:x", "http://h:99999", "\x1b[2J",
              "x" * 300, "javascript:alert(1)"]


def run_surface_flags(rng: random.Random, folder: Path) -> list[list[str]]:
    """The newer surfaces with odd values: a sweep, a tune, a compare, iam-policy, history and serve."""
    scenario = str(folder / "scenario.yaml")
    topology = str(folder / "topology.yaml")
    sweep = ["sweep", scenario, "--vary", rng.choice(VARY_VALUES), "--workers", "1", "--quiet", "--format", "json"]
    tune = ["tune", scenario, "--vary", rng.choice(VARY_VALUES), "--workers", "1", "--quiet", "--budget", "2"]
    compare = ["compare", scenario, "--topology", topology, "--topology", topology, "--workers", "1",
               "--format", "json"]
    for run in (sweep, tune, compare):
        run += [rng.choice(RUN_FLAGS), rng.choice(RUN_VALUES)]
    return [sweep, tune, compare,
            ["iam-policy", "--account", rng.choice(ACCOUNT_VALUES), "--region", rng.choice(REGION_VALUES)],
            ["history", "--queue", "training", "--since", rng.choice(SINCE_VALUES), "--max-attempts", "1"],
            ["serve", "--events-url", rng.choice(URL_VALUES), "--port", "0"]]


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


def run_surfaces(rng: random.Random) -> list[Outcome]:
    """``run_surface_flags`` in a folder of its own (sweeps and tunes take longer: fewer of them in the suite)."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_input(folder, "jobs.csv", JOBS_CSV)
        return [run_cli(args, env=TOP_ENV if args[0] == "history" else None)
                for args in run_surface_flags(rng, folder)]


def _kind(path: Path) -> str:
    """What ``path`` is now (never following it): a regular file, a link, a FIFO, a device, ... or missing."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return "missing"
    return next((kind for test, kind in ((stat.S_ISLNK, "link"), (stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "device"),
                                         (stat.S_ISDIR, "folder"), (stat.S_ISREG, "file")) if test(mode)), "other")


def output_targets(folder: Path) -> tuple[list[tuple[list[str], str]], dict[Path, str]]:
    """Hostile output targets made inside ``folder`` (never the machine's /dev): a FIFO nobody reads, a copy of
    /dev/full's device numbers (as root), a symlinked folder and links planted in an existing folder pointing at a
    victim outside. Returns the runs (each with the flag it aims at) and what each target must still be after."""
    victim_dir = folder / "outside"
    victim_dir.mkdir()
    (victim_dir / "victim").write_text("keep me")
    os.mkfifo(folder / "fifo")
    expected = {folder / "fifo": "fifo", victim_dir / "victim": "file"}
    targets = [folder / "fifo"]
    if os.geteuid() == 0 and os.path.exists("/dev/full"):
        os.mknod(folder / "full.yaml", stat.S_IFCHR | 0o666, os.stat("/dev/full").st_rdev)
        expected[folder / "full.yaml"] = "device"
        targets.append(folder / "full.yaml")
    (folder / "linked").symlink_to(victim_dir, target_is_directory=True)
    expected[folder / "linked"] = "link"
    planted = folder / "planted"
    planted.mkdir()
    for name in ("index.html", "_sweep.json"):
        (planted / name).symlink_to(victim_dir / "victim")
        expected[planted / name] = "link"
    scenario, jobs = str(folder / "scenario.yaml"), str(folder / "jobs.csv")
    vary = ["--vary", "QS1.borrow_limit=0,100", "--workers", "1", "--quiet"]
    runs: list[tuple[list[str], str]] = []
    for target in targets:
        runs += [(["simulate", scenario, "--quiet", "--events", str(target)], "--events"),
                 (["fit", jobs, "-o", str(target)], "-o")]
    for where in (folder / "linked", planted):
        runs += [(["sweep", scenario, *vary, "--report", str(where)], "--report"),
                 (["sweep", scenario, *vary, "--out", str(where)], "--out"),
                 (["tune", scenario, *vary, "--budget", "2", "--report", str(where)], "--report"),
                 (["simulate", scenario, "--quiet", "--report", str(where)], "--report"),
                 (["compare", scenario, "--topology", str(folder / "topology.yaml"), "--topology",
                   str(folder / "topology.yaml"), "--workers", "1", "--report", str(where)], "--report")]
    return runs, expected


def run_outputs() -> list[Outcome]:
    """Every output flag against hostile targets: each run behaves (exit 2 for a FIFO with no reader, a symlink),
    and afterwards every target is what it was and the victim outside is untouched."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_input(folder, "jobs.csv", JOBS_CSV)
        runs, expected = output_targets(folder)
        outcomes = []
        for args, _flag in runs:
            outcome = run_cli(args)
            changed = [f"{path.name} is now a {_kind(path)}" for path, kind in expected.items() if _kind(path) != kind]
            if (folder / "outside" / "victim").read_text() != "keep me":
                changed.append("the victim outside was overwritten")
            if outcome.problem is None and (changed or outcome.exit_code != 2):
                outcome.problem = "; ".join(changed) or f"exit {outcome.exit_code}, not refused"
            outcomes.append(outcome)
        return outcomes
