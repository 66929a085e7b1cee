"""A random client run against ``batch-quota serve``: the account a history is taken of, then replayed.

Many teams (shares of every strategy), priorities, preemptions (reclaims and in-share), priority
updates, share updates, a share created and one deleted, environment capacity changes, terminations,
and jobs left waiting or running at the end. The clock advances between calls by whole milliseconds; with
``Instants`` some calls share an instant (no advance between them) and some advances land exactly on a running
job's end, so the replay must apply the calls of one instant one by one, in call order, as the endpoint did.

``python -m tests.policy_engine.adapters.endpoint.random_client [SEED ...]`` runs one run per seed (130 jobs, calls
sharing instants) and prints the agreement figures; it exits 1 if any job of any run disagrees.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.config import Config

INSTANCE = "ml.g5.xlarge"
ENVIRONMENT = 16
#: (name, strategy, limit, borrow limit, in-share preemption)
SHARES = (("vision", "LEND_AND_BORROW", 4, 100, True), ("speech", "LEND", 4, None, False),
          ("research", "LEND_AND_BORROW", 3, None, True), ("infra", "RESERVE", 2, None, False),
          ("ranking", "LEND_AND_BORROW", 3, 50, False))

TOPOLOGY = {
    "service_environments": [{"name": "gpu", "capacity": {INSTANCE: ENVIRONMENT}}],
    "job_queues": [{"name": "training", "service_environment": "gpu", "shares": [
        {"name": name, "capacity": {INSTANCE: limit}, "strategy": strategy,
         **({"borrow_limit": borrow} if borrow is not None else {}),
         **({"in_share_preemption": True} if preempt else {})}
        for name, strategy, limit, borrow, preempt in SHARES]}],
}


def clients(url: str) -> tuple[Any, Any]:
    settings: dict[str, Any] = {"endpoint_url": url, "region_name": "us-east-1", "aws_access_key_id": "testing",
                                "aws_secret_access_key": "testing",
                                "config": Config(retries={"max_attempts": 1, "mode": "standard"})}
    return boto3.client("batch", **settings), boto3.client("cloudtrail", **settings)


@dataclass
class Run:
    """What the client did: counts per kind of call."""

    calls: dict[str, int] = field(default_factory=dict)
    jobs: list[str] = field(default_factory=list)

    def count(self, kind: str) -> None:
        self.calls[kind] = self.calls.get(kind, 0) + 1


def _payload(rng: random.Random, count: int, runtime: int | None) -> str:
    request: dict[str, Any] = {"TrainingJobName": f"train-{rng.randrange(10**6)}",
                               "RoleArn": "arn:aws:iam::123456789012:role/SageMaker",
                               "AlgorithmSpecification": {"TrainingImage": "image", "TrainingInputMode": "File"},
                               "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
                               "ResourceConfig": {"InstanceType": INSTANCE, "InstanceCount": count,
                                                  "VolumeSizeInGB": 30}}
    if runtime is not None:
        request["StoppingCondition"] = {"MaxRuntimeSeconds": runtime}
    return json.dumps(request)


@dataclass(frozen=True)
class Instants:
    """How often calls share an instant: ``same`` the chance of no advance before the next call, ``onto_end`` the
    chance of advancing exactly onto a running job's end (its completion and the next call at one clock value)."""

    same: float = 0.0
    onto_end: float = 0.0


def _advance(endpoint: Any, batch: Any, rng: random.Random, recent: list[str], instants: Instants,
             durations: dict[str, float]) -> None:
    roll = rng.random()
    if roll < instants.same:
        return
    if roll < instants.same + instants.onto_end:
        now_ms = endpoint.control("GET", "clock")["epochMillis"]
        for job in rng.sample(recent, len(recent)):
            detail = batch.describe_service_job(jobId=job)
            if detail["status"] == "RUNNING" and detail.get("attempts"):
                started = detail["attempts"][-1]["startedAt"]
                end_ms = round(started.timestamp() * 1000 if hasattr(started, "timestamp") else started) \
                    + round(durations[job] * 1000)
                if end_ms > now_ms:
                    endpoint.advance((end_ms - now_ms) / 1000)
                    return
    # whole milliseconds, as the API's times are
    endpoint.advance(rng.randrange(1, 300_000) / 1000)


def drive(endpoint: Any, seed: int = 7, jobs: int = 130, instants: Instants = Instants()) -> Run:
    """Run the random client against ``endpoint`` (a ``RunningEndpoint`` at speed 0, loaded with ``TOPOLOGY``)."""
    rng = random.Random(seed)
    durations: dict[str, float] = {}
    batch, _ = clients(endpoint.url)
    run = Run()
    shares = {name: {"strategy": strategy, "limit": limit, "state": "ENABLED"}
              for name, strategy, limit, _, _ in SHARES}
    arn = {name: f"arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/{name}" for name in shares}
    created = deleted = False
    capacity = ENVIRONMENT
    while len(run.jobs) < jobs:
        roll = rng.random()
        candidates = rng.sample(run.jobs[-40:], min(6, len(run.jobs[-40:])))
        unfinished = [job for job in candidates
                      if batch.describe_service_job(jobId=job)["status"] not in ("SUCCEEDED", "FAILED")]
        enabled = [name for name, share in shares.items() if share["state"] == "ENABLED"]
        if roll < 0.62 and enabled:
            share = rng.choice(enabled)
            count = rng.choice((1, 1, 1, 2, 2, 3, 4))
            duration = rng.choice((60, 120, 300, 600, 900, 1800, 3600))
            tagged = rng.random() < 0.7
            extra: dict[str, Any] = {"tags": {"batch-quota:duration": str(duration)}} if tagged else {}
            if rng.random() < 0.2:
                extra["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": rng.choice((0, 1, 3))}
            job = batch.submit_service_job(
                jobName=f"{share}-{len(run.jobs)}", jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                quotaShareName=share, schedulingPriority=rng.randrange(10),
                serviceRequestPayload=_payload(rng, count, None if tagged else duration),
                **extra)["jobId"]
            run.jobs.append(job)
            durations[job] = duration
            run.count("SubmitServiceJob")
        elif roll < 0.74 and unfinished:
            batch.update_service_job(jobId=rng.choice(unfinished), schedulingPriority=rng.randrange(10))
            run.count("UpdateServiceJob")
        elif roll < 0.80 and unfinished:
            victim = rng.choice(unfinished)
            if rng.random() < 0.5:
                batch.terminate_service_job(jobId=victim, reason="no longer needed")
                run.count("TerminateServiceJob")
            else:
                batch.terminate_service_jobs(jobs=[victim], reason="cleanup")
                run.count("TerminateServiceJobs")
        elif roll < 0.87:
            name = rng.choice([n for n in ("vision", "research", "ranking", "speech") if n in shares])
            share = shares[name]
            limit = max(1, share["limit"] + rng.choice((-1, 1)))
            sharing: dict[str, Any] = {"strategy": share["strategy"]}
            if share["strategy"] == "LEND_AND_BORROW":
                sharing["borrowLimit"] = rng.choice((-1, 0, 50, 100))
            batch.update_quota_share(quotaShareArn=arn[name], capacityLimits=[{"maxCapacity": limit,
                                                                               "capacityUnit": INSTANCE}],
                                     resourceSharingConfiguration=sharing)
            share["limit"] = limit
            run.count("UpdateQuotaShare")
        elif roll < 0.90:
            capacity = max(12, min(20, capacity + rng.choice((-2, 2))))
            batch.update_service_environment(serviceEnvironment="gpu",
                                             capacityLimits=[{"maxCapacity": capacity, "capacityUnit": INSTANCE}])
            run.count("UpdateServiceEnvironment")
        elif roll < 0.93 and not created and len(run.jobs) > 20:
            batch.create_quota_share(quotaShareName="newteam", jobQueue="training",
                                     capacityLimits=[{"maxCapacity": 2, "capacityUnit": INSTANCE}],
                                     resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": 100},
                                     preemptionConfiguration={"inSharePreemption": "ENABLED"})
            shares["newteam"] = {"strategy": "LEND_AND_BORROW", "limit": 2, "state": "ENABLED"}
            arn["newteam"] = arn["vision"].replace("/vision", "/newteam")
            created = True
            run.count("CreateQuotaShare")
        elif roll < 0.95 and not deleted and len(run.jobs) > 60 and "infra" in shares:
            if shares["infra"]["state"] == "ENABLED":
                batch.update_quota_share(quotaShareArn=arn["infra"], state="DISABLED")
                shares["infra"]["state"] = "DISABLED"
                run.count("UpdateQuotaShare")
            else:
                waiting = [j for j in run.jobs if batch.describe_service_job(jobId=j)["quotaShareName"] == "infra"
                           and batch.describe_service_job(jobId=j)["status"] not in ("SUCCEEDED", "FAILED")]
                if not waiting:
                    batch.delete_quota_share(quotaShareArn=arn["infra"])
                    del shares["infra"]
                    deleted = True
                    run.count("DeleteQuotaShare")
        _advance(endpoint, batch, rng, run.jobs[-40:], instants, durations)
    endpoint.advance(1200)  # some jobs finish, others are still running or waiting at the end
    return run


def compare(jobs_csv: str, simulated: dict[str, Any]) -> tuple[int, int, list[str]]:
    """``(exported, agreeing, disagreements)``: each job's observed status, end and preemptions against the
    replay's."""
    import csv

    with open(jobs_csv, encoding="utf-8") as handle:
        rows = {row["name"]: row for row in csv.DictReader(handle)}
    records = {job["name"]: job for job in simulated["jobs"]}
    agreeing, differences = 0, []
    for name, row in rows.items():
        record = records.get(name)
        observed_end = float(row["observed_end"]) if row["observed_end"] else None
        got = (record["status"], record["finished_at"], record["preemptions"]) if record else None
        want = (row["observed_status"], observed_end, int(row["observed_preemptions"] or 0))
        if got is not None and got[0] == want[0] and got[2] == want[2] and (
                (got[1] is None and want[1] is None)
                or (got[1] is not None and want[1] is not None and abs(got[1] - want[1]) < 0.001)):
            agreeing += 1
        else:
            differences.append(f"{name}: observed {want}, replayed {got}")
    return len(rows), agreeing, differences


def main(seeds: list[int], jobs: int = 130, instants: Instants = Instants(0.3, 0.2)) -> int:
    """Run, export and replay one random client run per seed; print each run's agreement and the total. Exit status
    1 when any job of any run disagrees."""
    import os
    import resource
    import tempfile
    import time

    from click.testing import CliRunner

    from policy_engine.adapters.endpoint.server import start_in_thread
    from policy_engine.adapters.endpoint.service import Options, Service
    from policy_engine.cli.app import main as cli
    from policy_engine.inputs.loading import topology_from_data

    started, total, disagreeing = time.perf_counter(), 0, 0
    with start_in_thread(Service(Options(speed=0), topology_from_data(TOPOLOGY, "random client"))) as endpoint:
        os.environ.update({"AWS_ENDPOINT_URL_BATCH": endpoint.url, "AWS_ENDPOINT_URL_CLOUDTRAIL": endpoint.url,
                           "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                           "AWS_DEFAULT_REGION": "us-east-1"})
        for seed in seeds:
            endpoint.load_topology(TOPOLOGY)
            run = drive(endpoint, seed, jobs, instants=instants)
            folder = tempfile.mkdtemp()
            jobs_csv, scenario = os.path.join(folder, "jobs.csv"), os.path.join(folder, "replay.yaml")
            history = CliRunner().invoke(cli, ["history", "--queue", "training", "--since", "1d", "-o", jobs_csv,
                                               "--scenario", scenario])
            if history.exit_code != 0:
                print(history.output, file=sys.stderr)
            simulated = CliRunner().invoke(cli, ["simulate", scenario, "--format", "json"])
            exported, agreeing, differences = compare(jobs_csv, json.loads(simulated.stdout))
            total += exported
            disagreeing += exported - agreeing
            print(f"seed {seed}: submitted {len(run.jobs)}, exported {exported}, agreeing {agreeing}; calls "
                  f"{sum(run.calls.values())}")
            for line in differences[:20]:
                print("  " + line)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter() - started
    print(f"{len(seeds)} run(s), {total} job(s), {disagreeing} disagreeing; wall {wall:.1f} s, "
          f"CPU {usage.ru_utime + usage.ru_stime:.1f} s, load average {os.getloadavg()[0]:.1f}")
    return 1 if disagreeing else 0


if __name__ == "__main__":
    arguments = [int(value) for value in sys.argv[1:]] or [7]
    raise SystemExit(main(arguments))
