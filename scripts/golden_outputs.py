"""Golden outputs of the CLI: record them on one commit, compare another commit against them.

    python scripts/golden_outputs.py record DIR     # one file per run: exit code, stdout, stderr, files written
    python scripts/golden_outputs.py compare DIR    # the same runs again; a unified diff per changed run, exit 1

The runs are every command the fuzz harness (``tests/policy_engine/fuzz.py``) drives, on its seeds,
on a fixed set of mutated seeds and odd option values, and on every file of the hostile corpus
(``tests/data/hostile``); every scenario in ``scenarios/`` through ``simulate`` (formats, options,
``--events``); every topology in ``topologies/`` and the embedded example through ``check``,
``explain``, ``graph``, ``generate`` and ``diff``; ``drift`` against a stubbed account; ``walkthrough``,
an in-process ``sweep``, ``import --from-template``, ``iam-policy`` and every ``--help``. Nothing
reaches AWS. Temporary folders, the repository root, timings, UUIDs and the version are normalised,
so the outputs of two worktrees compare equal when behaviour is unchanged. The file and line a Python warning
names are normalised too, when comparing (on both sides, so an older recording compares): moving code moves
them, and where a warning is raised is not what a command does.

Run it from (or with ``PYTHONPATH`` at) the worktree under test: it imports that worktree's code.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import random
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("COLUMNS", "120")
os.environ["COLUMNS"] = "120"
os.environ.setdefault("TZ", "UTC")

ROOT = Path(os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or Path(__file__).parents[1]).resolve()
if not (ROOT / "policy_engine").is_dir():
    ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402

from policy_engine.cli.app import COMMANDS  # noqa: E402
from tests.policy_engine import fuzz  # noqa: E402

MUTATED = 120  #: mutated seeds per kind
fuzz.TIME_LIMIT = 600.0  # the harness's 10 s: a run slowed by a loaded machine must not read as a difference
FLAG_RUNS = 60


@dataclass
class Run:
    """One command line, the files it needs and the files whose content counts as output."""

    name: str
    args: list[str]
    stdin: bytes | None = None
    files: dict[str, bytes] = field(default_factory=dict)  # written into the temporary folder first
    outputs: list[str] = field(default_factory=list)  # files (relative to the folder) read back afterwards
    setup: Callable[[ExitStack], None] | None = None  # e.g. a stubbed AWS client


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", name)[:150]


def _normalise(text: str, folder: Path) -> str:
    for path in (str(folder), str(folder.resolve()), str(ROOT), str(ROOT.resolve())):
        text = text.replace(path, "<DIR>" if "golden-" in path else "<ROOT>")
    text = re.sub(r"/tmp/[A-Za-z0-9_.-]+", "<TMP>", text)
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<UUID>", text)
    text = re.sub(r"\b\d+(\.\d+)? ?(ms|µs|s) (elapsed|wall)", "<TIME>", text)
    text = re.sub(r"(in|took) \d+(\.\d+)? ?(ms|µs|s)\b", r"\1 <TIME>", text)
    text = re.sub(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?", "<TIMESTAMP>", text)
    return text


def _read_output(path: Path) -> str:
    if not path.exists():
        return "<absent>"
    if path.is_dir():
        return "\n".join(f"{p.relative_to(path)}: {_digest(p)}" for p in sorted(path.rglob("*")) if p.is_file())
    data = path.read_bytes()
    try:
        return data.decode()
    except UnicodeDecodeError:
        return f"<binary sha256 {hashlib.sha256(data).hexdigest()}>"


def _digest(path: Path) -> str:
    return f"{path.stat().st_size} bytes"


def execute(run: Run) -> str:
    """The run's exit code, stdout, stderr and output files as one normalised text."""
    with tempfile.TemporaryDirectory(prefix="golden-") as name, ExitStack() as stack:
        folder = Path(name)
        for relative, data in run.files.items():
            (folder / relative).write_bytes(data)
        if run.setup is not None:
            run.setup(stack)
        args = [arg.replace("{dir}", name) for arg in run.args]
        previous = os.getcwd()
        os.chdir(folder)
        try:
            _LAST.result = None
            outcome = fuzz.run_cli(args, stdin=run.stdin)  # the harness's run, recorded by _recording_invoke
            result = _LAST.result
        finally:
            os.chdir(previous)
        if result is None:  # the run overran the harness's time limit
            return _normalise(f"$ batch-quota {' '.join(run.args)}\nproblem: {outcome.problem}", folder)
        exception = ""
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            exception = f"{type(result.exception).__name__}: {result.exception}"
        parts = [f"$ batch-quota {' '.join(run.args)}", f"exit: {result.exit_code}",
                 f"problem: {outcome.problem}", f"exception: {exception}",
                 "--- stdout", result.stdout, "--- stderr", result.stderr]
        for relative in run.outputs:
            parts += [f"--- file {relative}", _read_output(folder / relative)]
        return _normalise("\n".join(parts), folder)


class _Last:
    result = None


_LAST = _Last()
_invoke = CliRunner.invoke


def _recording_invoke(self, *args, **kwargs):
    _LAST.result = _invoke(self, *args, **kwargs)
    return _LAST.result


CliRunner.invoke = _recording_invoke  # type: ignore[method-assign]


def _drift_setup(change: str) -> Callable[[ExitStack], None]:
    def setup(stack: ExitStack) -> None:
        from botocore.stub import Stubber

        from policy_engine.cli.commands import aws_options as cli_options
        from policy_engine.inputs.examples import example_topology
        from tests.policy_engine.adapters.aws.fake_account import FakeAccount, batch_client, topology_template

        client = batch_client()
        stubber = Stubber(client)
        original = cli_options.client_factory
        cli_options.client_factory = lambda options: client
        stack.callback(setattr, cli_options, "client_factory", original)
        stack.enter_context(stubber)
        if change == "missing-queue":
            stubber.add_response("describe_job_queues", {"jobQueues": []}, {"jobQueues": ["training"]})
            return
        account = FakeAccount.from_template(topology_template(example_topology()))
        if change == "changed":
            queue_arn = account.queues[0]["jobQueueArn"]
            qs1, qs2, qs3 = account.shares[queue_arn]
            qs1["capacityLimits"] = [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 2}]
            account.tags[qs2["quotaShareArn"]] = {**account.tags[qs2["quotaShareArn"]], "owner": "some`one|<b>"}
            extra = {**qs3, "quotaShareName": "adhoc", "quotaShareArn": queue_arn + "/quota-share/adhoc"}
            account.shares[queue_arn] = [qs1, qs2, extra]
            account.tags[extra["quotaShareArn"]] = {}
            account.queues[0]["priority"] = 7
        account.stub_import(stubber, queues=["training"])
    return setup


def runs() -> Iterator[Run]:
    from policy_engine.adapters.aws.topology_file import topology_text
    from policy_engine.inputs.examples import EXAMPLE_YAML, example_topology

    # --help of every command
    yield Run("help", ["--help"])
    for command in COMMANDS:
        yield Run(f"help-{command}", [command, "--help"])

    # the fuzz harness: its seeds, every command per kind (all four rotations for topologies)
    for kind, seed in fuzz.SEEDS.items():
        for index in range(4 if kind.startswith("topology") else 1):
            yield from _fuzz_runs(f"seed-{kind}-{index}", kind, seed, index)
    rng = random.Random(20)
    for kind in fuzz.KINDS:
        for number in range(MUTATED):
            yield from _fuzz_runs(f"mutated-{kind}-{number:03d}", kind, fuzz.mutate(fuzz.SEEDS[kind], rng), number)
    rng = random.Random(21)
    for number in range(FLAG_RUNS):
        for i, args in enumerate(fuzz.flag_runs(rng, Path("{dir}"))):
            yield Run(f"flags-{number:03d}-{i}", args, files=_companions("jobs.csv", fuzz.JOBS_CSV),
                      outputs=["out.csv"] if args[0] == "generate" else [])
    # the hostile corpus, as the harness runs it (and every topology through every command)
    for kind, path in fuzz.corpus():
        for index in range(4 if kind.startswith("topology") else 1):
            yield from _fuzz_runs(f"hostile-{path.name}-{index}", kind, path.read_bytes(), index)
        if kind.startswith("topology"):
            yield Run(f"hostile-{path.name}-stdin", ["check", "-", "--format", "json"], stdin=path.read_bytes())
            yield Run(f"hostile-{path.name}-diff", ["diff", str(EXAMPLE_YAML), "{dir}/" + kind, "--format", "json"],
                      files={kind: path.read_bytes()})
        if kind == "scenario.yaml":
            for form in ("text", "markdown"):
                yield Run(f"hostile-{path.name}-{form}", ["simulate", "{dir}/scenario.yaml", "--format", form,
                                                          "--quiet"], files=_companions(kind, path.read_bytes()))

    # scenarios
    for scenario in sorted((ROOT / "scenarios").glob("*.yaml")):
        base = ["simulate", str(scenario), "--quiet"]
        for form in ("text", "json", "markdown"):
            yield Run(f"scenario-{scenario.stem}-{form}", [*base, "--format", form])
        for extra in (["--until", "200"], ["--until", "1000"], ["--no-backfill"], ["--backfill"],
                      ["--victim-policy", "fewest-instances"], ["--victim-policy", "lowest-priority-newest"]):
            yield Run(f"scenario-{scenario.stem}-{'_'.join(extra)}", [*base, *extra])
            yield Run(f"scenario-{scenario.stem}-{'_'.join(extra)}-json", [*base, *extra, "--format", "json"])
        yield Run(f"scenario-{scenario.stem}-events", [*base, "--events", "{dir}/events.jsonl", "--format", "json"],
                  outputs=["events.jsonl"])
        yield Run(f"scenario-{scenario.stem}-report", [*base, "--report", "{dir}/report"], outputs=["report"])
        yield Run(f"scenario-{scenario.stem}-sweep", ["sweep", str(scenario), "--vary", "settings.backfill=true,false",
                                                      "--workers", "1", "--quiet"])
        yield Run(f"scenario-{scenario.stem}-sweep-json", ["sweep", str(scenario), "--vary",
                                                           "settings.backfill=true,false", "--workers", "1",
                                                           "--quiet", "--format", "json"])
        yield Run(f"scenario-{scenario.stem}-sweep-csv", ["sweep", str(scenario), "--vary",
                                                          "workload.scale=0.8,1.2", "--workers", "1",
                                                          "--quiet", "--format", "csv"])
        for example in [EXAMPLE_YAML, *sorted((ROOT / "topologies").glob("*.yaml"))]:
            for form in ("text", "json", "markdown"):
                yield Run(f"diff-scenario-{scenario.stem}-{example.parent.name}-{form}",
                          ["diff", str(example), "{dir}/head.yaml", "--scenario", str(scenario), "--format", form],
                          files={"head.yaml": fuzz.TOPOLOGY_YAML.replace(b"borrow_limit: 200", b"borrow_limit: 0")
                                 .replace(b"strategy: LEND\n", b"strategy: RESERVE\n")})

    # topologies: the files in topologies/, the embedded example (no argument) and the harness's JSON seed
    topologies: list[tuple[str, list[str], dict[str, bytes]]] = [("embedded", [], {})]
    topologies += [(path.stem, [str(path)], {}) for path in sorted((ROOT / "topologies").glob("*"))]
    topologies += [("seed-json", ["{dir}/topology.json"], {"topology.json": fuzz.TOPOLOGY_JSON})]
    for label, target, files in topologies:
        for form in ("text", "json", "sarif", "markdown"):
            yield Run(f"topology-{label}-check-{form}", ["check", *target, "--format", form], files=files)
        yield Run(f"topology-{label}-check-strict", ["check", *target, "--strict"], files=files)
        yield Run(f"topology-{label}-graph", ["graph", *target], files=files)
        yield Run(f"topology-{label}-graph-dot", ["graph", *target, "-o", "{dir}/g.dot"], files=files,
                  outputs=["g.dot"])
        yield Run(f"topology-{label}-graph-queue", ["graph", *target, "--queue", "training"], files=files)
        for share in ("QS1", "QS2", "QS3", "training/QS1", "nope"):
            yield Run(f"topology-{label}-explain-{share}", ["explain", share, *target], files=files)
        for suffix in ("csv", "jsonl"):
            yield Run(f"topology-{label}-generate-{suffix}",
                      ["generate", *target, "-o", f"{{dir}}/jobs.{suffix}", "--jobs", "50", "--scenario",
                       "{dir}/scenario.yaml"], files=files, outputs=[f"jobs.{suffix}", "scenario.yaml"])
        yield Run(f"topology-{label}-generate-options",
                  ["generate", *target, "-o", "{dir}/jobs.csv", "--jobs", "40", "--rate", "20", "--sizes",
                   "1:3,2:1", "--duration-distribution", "lognormal", "--burst-mean", "4", "--priorities", "1:1,5:2",
                   "--seed", "7"], files=files, outputs=["jobs.csv"])

    # diff: the example against edited copies
    example_text = topology_text(example_topology(), Path("topology.yaml")).encode()
    edits = {
        "same": example_text,
        "seed-json": fuzz.TOPOLOGY_JSON,
        "borrow": example_text.replace(b"borrow_limit: 200", b"borrow_limit: 0"),
        "capacity": example_text.replace(b"ml.g5.xlarge: 1", b"ml.g5.xlarge: 2", 1),
        "strategy": example_text.replace(b"LEND_AND_BORROW", b"LEND", 1),
    }
    for label, head in edits.items():
        for form in ("text", "json", "markdown"):
            yield Run(f"diff-{label}-{form}", ["diff", "{dir}/base.yaml", "{dir}/head.json" if label == "seed-json"
                                                else "{dir}/head.yaml", "--format", form],
                      files={"base.yaml": example_text, "head.json" if label == "seed-json" else "head.yaml": head})
        for fail_on in ("guarantee", "finding", "hazard", "never"):
            yield Run(f"diff-{label}-fail-on-{fail_on}", ["diff", "{dir}/base.yaml", "{dir}/head.json"
                                                          if label == "seed-json" else "{dir}/head.yaml",
                                                          "--fail-on", fail_on],
                      files={"base.yaml": example_text, "head.json" if label == "seed-json" else "head.yaml": head})
    yield Run("diff-rename", ["diff", "{dir}/base.yaml", "{dir}/head.yaml", "--rename", "training/QS3=training/QS9"],
              files={"base.yaml": example_text, "head.yaml": example_text.replace(b"QS3", b"QS9")})

    # drift against a stubbed account
    for change in ("matching", "changed", "missing-queue"):
        for form in ("text", "json", "markdown"):
            yield Run(f"drift-{change}-{form}", ["drift", "{dir}/topology.yaml", "--format", form],
                      files={"topology.yaml": example_text}, setup=_drift_setup(change))

    # the rest that runs offline
    yield Run("walkthrough", ["walkthrough"])
    from tests.policy_engine.inputs.test_template import HAND_WRITTEN
    yield Run("import-template", ["import", "--from-template", "{dir}/template.yaml"],
              files={"template.yaml": HAND_WRITTEN.encode()})
    yield Run("import-template-file", ["import", "--from-template", "{dir}/template.yaml", "-o", "{dir}/t.yaml"],
              files={"template.yaml": HAND_WRITTEN.encode()}, outputs=["t.yaml"])
    for command in ("import", "drift", "snapshot", "history"):
        yield Run(f"iam-policy-{command}", ["iam-policy", "--command", command, "--account", "123456789012"])
    yield Run("iam-policy", ["iam-policy"])


def _companions(kind: str, data: bytes) -> dict[str, bytes]:
    files = {"topology.yaml": fuzz.TOPOLOGY_YAML, "jobs.csv": fuzz.JOBS_CSV,
             "scenario.yaml": f"topology: topology.yaml\njobs: {'jobs.jsonl' if kind == 'jobs.jsonl' else 'jobs.csv'}\n"
             .encode()}
    files[kind] = data
    return files


def _fuzz_runs(name: str, kind: str, data: bytes, index: int) -> Iterator[Run]:
    """The harness's commands for one input (``commands_for``), with ``{dir}`` for its temporary folder."""
    for i, args in enumerate(fuzz.commands_for(kind, Path("{dir}"), index)):
        outputs = ["out.csv"] if args[0] == "generate" else []
        yield Run(f"{name}-{i}-{args[0]}", args, files=_companions(kind, data), outputs=outputs)


def record(folder: Path, only: str | None = None) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    seen = set()
    for run in runs():
        if only and only not in run.name:
            continue
        name = _safe(run.name)
        assert name not in seen, name
        seen.add(name)
        (folder / f"{name}.txt").write_bytes(execute(run).encode("utf-8", "surrogateescape"))
    print(f"recorded {len(seen)} runs in {folder}")
    return 0


def _warning_sources(text: str) -> str:
    """``<ROOT>/policy_engine/a/b.py:471: RuntimeWarning: ...`` as ``<SOURCE>: RuntimeWarning: ...``."""
    return re.sub(r"<ROOT>/[\w/]+\.py:\d+: (\w+Warning)\b", r"<SOURCE>: \1", text)


def compare(folder: Path, only: str | None = None) -> int:
    different, missing, count = [], [], 0
    recorded = {path.stem for path in folder.glob("*.txt")}
    for run in runs():
        if only and only not in run.name:
            continue
        name = _safe(run.name)
        count += 1
        recorded.discard(name)
        path = folder / f"{name}.txt"
        now = execute(run)
        if not path.exists():
            missing.append(name)
            continue
        before = _warning_sources(path.read_bytes().decode("utf-8", "surrogateescape"))
        now = _warning_sources(now)
        if before != now:
            different.append(name)
            sys.stdout.writelines(difflib.unified_diff(before.splitlines(True), now.splitlines(True),
                                                       f"base/{name}", f"now/{name}", n=2))
    gone = sorted(recorded) if not only else []
    print(f"{count} runs: {len(different)} different, {len(missing)} not recorded, {len(gone)} recorded but not run")
    for name in missing:
        print(f"not recorded: {name}")
    for name in gone:
        print(f"recorded but not run: {name}")
    return 1 if different or missing or gone else 0


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["record", "compare"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--only", help="only the runs whose name contains this")
    options = parser.parse_args(argv)
    if options.action == "record":
        if options.folder.exists() and not options.only:
            shutil.rmtree(options.folder)
        return record(options.folder, options.only)
    return compare(options.folder, options.only)


if __name__ == "__main__":
    sys.exit(main_())
