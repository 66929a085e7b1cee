"""A queue with many finished jobs, stubbed lazily: each response is made and queued when its request arrives.

The Stubber still checks every request against its expected parameters and every
response against the botocore model; only the queue never holds more than one answer,
so a 50,000-job history costs the test no memory of its own.
"""

from __future__ import annotations

from typing import Any

from botocore.stub import Stubber

from tests.policy_engine.aws.fake_account import service_job

PAGE = 100


class LazyHistory:
    """``jobs`` finished jobs of queue ``training``, half SUCCEEDED then half FAILED, one every ``spacing_ms``."""

    def __init__(self, client: Any, stubber: Stubber, jobs: int, start_ms: int, spacing_ms: int = 60_000,
                 queue: str = "training"):
        self.stubber = stubber
        self.queue = queue
        #: The listing the command must ask for next: SUCCEEDED then FAILED, each from its first page.
        self.listing = ["SUCCEEDED", "FAILED"]
        self.token: str | None = None
        self.jobs = jobs
        self.start_ms = start_ms
        self.spacing_ms = spacing_ms
        self.succeeded = jobs - jobs // 2
        client.meta.events.register_first("provide-client-params.batch.*", self._queue_answer)

    def job(self, index: int) -> tuple[dict, dict]:
        status = "SUCCEEDED" if index < self.succeeded else "FAILED"
        created = self.start_ms + index * self.spacing_ms
        share = ("QS1", "QS2", "QS3")[index % 3]
        return service_job(f"job{index:06d}", share, status, priority=index % 5, created_ms=created,
                           started_ms=created + 30_000 + (index % 7) * 1000, stopped_ms=created + 630_000,
                           preempted=index % 2, job_id=f"00000000-0000-0000-0000-{index:012d}")

    def _queue_answer(self, params: dict, model: Any, **_: Any) -> None:
        if model.name == "ListServiceJobs":
            # the expected request is what a correct command sends (queue, status, token), never the request itself
            status = self.listing[0] if self.listing else "(no more listings expected)"
            expected = {"jobQueue": self.queue, "jobStatus": status}
            if self.token:
                expected["nextToken"] = self.token
            first, last = (0, self.succeeded) if status == "SUCCEEDED" else (self.succeeded, self.jobs)
            offset = int(self.token or "0")
            indices = range(first + offset, min(last, first + offset + PAGE))
            response: dict[str, Any] = {"jobSummaryList": [self.job(i)[0] for i in indices]}
            if first + offset + PAGE < last:
                response["nextToken"] = self.token = str(offset + PAGE)
            else:
                self.token = None
                if self.listing:
                    self.listing.pop(0)
            self.stubber.add_response("list_service_jobs", response, expected)
        elif model.name == "DescribeServiceJob":
            index = int(params["jobId"].rsplit("-", 1)[1])
            self.stubber.add_response("describe_service_job", self.job(index)[1], {"jobId": params["jobId"]})
