"""Scenario files for sweep tests: generated workloads against small topologies, written to a directory."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from policy_engine.inputs.examples import large_topology
from policy_engine.simulation.inputs.generate import GenerateOptions, ShareMix, generate_jobs, write_jobs

#: Two shares on 6 x ml.g5.xlarge; team A's workload needs exactly 3 instances at once, team B's 3 too.
KNOWN_OPTIMUM = """
topology:
  service_environments:
    - {name: env, capacity: {ml.g5.xlarge: 6}}
  job_queues:
    - name: q
      service_environment: env
      shares:
        - {name: A, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}
        - {name: B, capacity: {ml.g5.xlarge: 5}, strategy: RESERVE}
jobs:
  - {name: a1, share: A, submit_at: 0, duration: 3600}
  - {name: a2, share: A, submit_at: 0, duration: 3600}
  - {name: a3, share: A, submit_at: 0, duration: 3600}
  - {name: b1, share: B, submit_at: 0, duration: 3600}
  - {name: b2, share: B, submit_at: 0, duration: 3600}
  - {name: b3, share: B, submit_at: 0, duration: 3600}
"""


def generated(directory: Path, jobs: int, queues: int = 1, shares: int = 4, types: int = 1, seed: int = 7,
              load: float = 0.9) -> Path:
    """A scenario of ``jobs`` generated jobs on ``large_topology`` (2 instances per share and type)."""
    topology = large_topology(queues=queues, shares_per_queue=shares, instance_types=types)
    capacity = queues * shares * types * 2
    profile = GenerateOptions(jobs=jobs, arrival_rate=load * capacity / 1.3, sizes={1: 0.7, 2: 0.3},
                              duration_mean=3600.0, priorities={1: 0.6, 5: 0.3, 9: 0.1}, seed=seed,
                              share_mix=ShareMix.UNIFORM)
    directory.mkdir(parents=True, exist_ok=True)
    write_jobs(directory / "jobs.csv", generate_jobs(topology, profile))
    (directory / "topology.yaml").write_text(yaml.safe_dump(topology.model_dump(mode="json", exclude_none=True)),
                                             encoding="utf-8")
    path = directory / "scenario.yaml"
    path.write_text("topology: topology.yaml\njobs: jobs.csv\nsettings: {startup_delay: 30}\n", encoding="utf-8")
    return path


def first_share(directory: Path) -> str:
    data = yaml.safe_load((directory / "topology.yaml").read_text(encoding="utf-8"))
    queue = data["job_queues"][0]
    return f"{queue['name']}/{queue['shares'][0]['name']}"


class CountingInput:
    """A task input that appends a line to ``log`` each time it is unpickled (once per worker when scattered)."""

    def __init__(self, shared, log: str):
        self.shared, self.log = shared, log

    def __getstate__(self) -> dict:
        return {"shared": self.shared, "log": self.log}

    def __setstate__(self, state: dict) -> None:
        self.shared, self.log = state["shared"], state["log"]
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(f"unpickled in {os.getpid()}\n")


def counting_task(counting: CountingInput, candidate):
    from policy_engine.sweep.runner import run_task

    return run_task(counting.shared, candidate)


def offset_task(offset: int, item: int) -> int:
    """A run that takes no time: what per-task overhead would dominate."""
    return offset + item
