"""``batch-quota serve --state``: the time a restart takes after 100,000 recorded calls (target < 5 s).

The calls are recorded through the endpoint's own entry point (``Service.call`` / ``control``,
what every HTTP request reaches: the same log, the same checkpoints), in this process, since
100,000 HTTP requests take minutes on a loaded 2-core machine; ``serve_bench.py --phases restart``
records over HTTP instead. The mix: 9 SubmitServiceJob (30-120 simulated seconds, 200 instances
over 5 shares) to 1 clock advance of 5 s, with a priority update and a termination now and then.
Then the real ``batch-quota serve`` process is started on the file and timed until it answers:

- after SIGKILL (no checkpoint at shutdown: the calls since the last checkpoint are replayed, the
  worst case, up to ``--checkpoint-every``),
- after a clean stop (a checkpoint at shutdown: nothing to replay),
- with ``--checkpoint-every 0`` on a log without a checkpoint (every call replayed: what a restart
  cost before checkpoints; ``--no-baseline`` skips it, it takes about as long as the recording).

Each restart is run ``--repeats`` times: best and median wall time, the server's CPU time (the
machine's load average inflates wall time; CPU time is about what an idle machine's wall time
would be), and the server's own line saying how it got its state back.

    python benchmarks/serve_state_bench.py                   # 100,000 calls
    python benchmarks/serve_state_bench.py --calls 10000     # a quick look
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent))

from serve_bench import SHARES, cpu_seconds, start_server, stop, submit_body, topology_yaml  # noqa: E402

TARGET_SECONDS = 5.0


def record(state: Path, topology: Path, calls: int, every: int) -> float:
    """``calls`` logged calls into ``state``, checkpointed every ``every``; the seconds it took."""
    from policy_engine.adapters.endpoint.base.errors import ApiError
    from policy_engine.adapters.endpoint.service import Options, Service
    from policy_engine.adapters.endpoint.store import Store
    from policy_engine.inputs.loading import load_topology

    service = Service(Options(speed=0, checkpoint_every=every), load_topology(str(topology)), Store(state))
    rng = random.Random(7)
    jobs: list[str] = []
    began = time.perf_counter()
    for index in range(calls):
        roll = rng.random()
        try:
            if index % 10 == 9:
                service.control("advance", {"seconds": 5})
            elif roll < 0.03 and jobs:
                service.call("UpdateServiceJob", {"jobId": jobs[-1 - rng.randrange(min(50, len(jobs)))],
                                                  "schedulingPriority": rng.randrange(10)})
            elif roll < 0.04 and jobs:
                service.call("TerminateServiceJob", {"jobId": jobs[-1 - rng.randrange(min(50, len(jobs)))],
                                                     "reason": "bench"})
            else:
                jobs.append(service.call("SubmitServiceJob", submit_body(rng, index, rng.uniform(30, 120)))["jobId"])
        except ApiError:
            pass  # a job that finished before its update: rejected, not logged
    elapsed = time.perf_counter() - began
    service.save_clock()
    assert service.store is not None
    service.store.close()  # no checkpoint at the end: as a crash would leave it
    return elapsed


def restarts(topology: Path, state: Path, repeats: int, how: str, extra: tuple[str, ...] = ()) -> None:
    walls, cpus, said = [], [], ""
    for _ in range(repeats):
        began = time.perf_counter()
        process, _, _ = start_server(topology, 0, state, extra)
        walls.append(time.perf_counter() - began)
        cpus.append(cpu_seconds(process.pid))
        said = process.said  # type: ignore[attr-defined]
        if how == "a clean stop":
            stop(process)
        else:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=20)
    median = statistics.median(walls)
    verdict = "met" if median < TARGET_SECONDS else "met at best" if min(walls) < TARGET_SECONDS else "MISSED"
    print(f"restart after {how}: ready in best {min(walls):.2f} s, median {median:.2f} s of {repeats} "
          f"(server CPU median {statistics.median(cpus):.2f} s); {said}; load average "
          f"{os.getloadavg()[0]:.2f}; target < {TARGET_SECONDS:g} s: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--checkpoint-every", type=int, default=None, help="default: serve's own (2,000)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-baseline", action="store_true", help="skip the restart that replays every call")
    args = parser.parse_args()
    from policy_engine.adapters.endpoint.service import CHECKPOINT_EVERY

    every = CHECKPOINT_EVERY if args.checkpoint_every is None else args.checkpoint_every
    print(f"cpus {os.cpu_count()}, load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        topology = Path(tmp) / "busy.yaml"
        topology.write_text(topology_yaml(SHARES, 40))
        state = Path(tmp) / "state.db"
        seconds = record(state, topology, args.calls, every)
        with sqlite3.connect(state) as db:
            logged = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
            at = (db.execute("SELECT call_seq FROM checkpoint").fetchone() or (0,))[0]
        size = sum(p.stat().st_size for p in Path(tmp).glob("state.db*"))
        print(f"recorded {logged:,} calls in {seconds:.1f} s (checkpoint every {every:,}; the last at call {at:,}; "
              f"file {size / 1e6:.0f} MB)")
        options = ("--checkpoint-every", str(every))
        restarts(topology, state, args.repeats, "SIGKILL", options)
        restarts(topology, state, 1, "a clean stop", options)  # the shutdown checkpoints: the next has nothing
        restarts(topology, state, args.repeats, "a clean stop", options)
        if not args.no_baseline:
            with sqlite3.connect(state) as db:
                for table in ("checkpoint", "checkpoint_jobs", "checkpoint_log"):
                    db.execute(f"DELETE FROM {table}")
            restarts(topology, state, 1, "SIGKILL, no checkpoint (every call replayed)", ("--checkpoint-every", "0"))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
