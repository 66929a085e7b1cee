"""``GetJobQueueSnapshot``: the front of the queue and of each share, and who uses the capacity now."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from policy_engine.adapters.endpoint.base.jobs import ACTIVE, JobIndex, ServiceJob
from policy_engine.adapters.endpoint.handlers.registry import Output, Params, operation
from policy_engine.foundation import limits

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.handlers.context import Endpoint


def _active(jobs: JobIndex, queue: str, share: str) -> Iterator[int]:
    for status in ACTIVE:
        yield from jobs.lists.get((queue, share, status), ())


def _capacity(usage: dict[str, int]) -> list[dict[str, Any]]:
    return [{"capacityUnit": unit, "quantity": float(count)} for unit, count in usage.items()]


@operation("GetJobQueueSnapshot")
def get_job_queue_snapshot(service: Endpoint, params: Params) -> Output:
    queue = service.account.queue(params["jobQueue"])
    name = queue["jobQueueName"]
    jobs = service.scheduler.jobs
    records = jobs.records
    now_ms = service.ms(service.now)

    size = limits.SNAPSHOT_FRONT_OF_QUEUE.at_most  # the front of queue AWS shows, in scheduling order

    def front(first: list[ServiceJob]) -> list[dict[str, Any]]:
        return [{"jobArn": r.arn, "earliestTimeAtPosition": service.ms(r.created)} for r in first]

    shares = {record["quotaShareName"]: front(jobs.front(name, record["quotaShareName"], size))
              for record in service.account.queue_shares(name)
              if jobs.lists.get((name, record["quotaShareName"], "RUNNABLE"))}
    total: dict[str, int] = {}
    top = []
    for record in service.account.queue_shares(name):
        usage: dict[str, int] = {}
        for seq in _active(jobs, name, record["quotaShareName"]):
            job = records[seq]
            usage[job.instance_type] = usage.get(job.instance_type, 0) + job.instances
        for unit, count in usage.items():
            total[unit] = total.get(unit, 0) + count
        if usage:
            top.append((sum(usage.values()), record["quotaShareName"], usage))
    top.sort(key=lambda item: (-item[0], item[1]))
    return {
        "frontOfQueue": {"jobs": front(jobs.front(name, None, size)), "lastUpdatedAt": now_ms},
        "frontOfQuotaShares": {"quotaShares": shares, "lastUpdatedAt": now_ms},
        "queueUtilization": {
            "totalCapacityUsage": _capacity(total),
            "quotaShareUtilization": {"topCapacityUtilization": [
                {"quotaShareName": share, "capacityUsage": _capacity(usage)} for _, share, usage in top]},
            "lastUpdatedAt": now_ms,
        },
    }
