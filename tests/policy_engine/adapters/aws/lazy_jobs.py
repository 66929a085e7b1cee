"""A queue with many finished jobs, stubbed lazily: each response is made and queued when its request arrives.

The Stubber still checks every request against its expected parameters and every
response against the botocore model; only the queue never holds more than one answer,
so a 50,000-job history costs the test no memory of its own.
"""

from __future__ import annotations

from typing import Any

from botocore.stub import Stubber

from tests.policy_engine.adapters.aws.fake_account import service_job

PAGE = 100


class LazyHistory:
    """``jobs`` finished jobs of queue ``training``, half SUCCEEDED then half FAILED, one every ``spacing_ms``.

    Answers ``ListServiceJobs`` as AWS does with the ``AFTER_CREATED_AT`` filter: only jobs created
    after the filter's value, newest first, 100 a page. ``since_ms`` is the window the command must
    ask for (``None``: a window computed from the clock, checked for its shape only).
    """

    def __init__(self, client: Any, stubber: Stubber, jobs: int, start_ms: int, spacing_ms: int = 60_000,
                 queue: str = "training", since_ms: int | None = None):
        self.stubber = stubber
        self.jobs = jobs
        self.start_ms = start_ms
        self.spacing_ms = spacing_ms
        self.queue = queue
        self.since_ms = since_ms
        self.succeeded = jobs - jobs // 2
        self.token: str | None = None
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
            given = (params.get("filters") or [{}])[0].get("values", ["?"])[0]
            after = str(self.since_ms - 1) if self.since_ms is not None else given
            # the expected request is what a correct command sends, never the request itself
            expected: dict[str, Any] = {"jobQueue": self.queue,
                                        "filters": [{"name": "AFTER_CREATED_AT", "values": [after]}]}
            if self.token:
                expected["nextToken"] = self.token
            first = max(0, (int(after) - self.start_ms) // self.spacing_ms + 1)  # the oldest job after `after`
            offset = int(self.token or "0")
            newest = self.jobs - 1 - offset
            indices = range(newest, max(first, newest - PAGE + 1) - 1, -1)
            response: dict[str, Any] = {"jobSummaryList": [self.job(i)[0] for i in indices]}
            self.token = str(offset + PAGE) if newest - PAGE >= first else None
            if self.token:
                response["nextToken"] = self.token
            self.stubber.add_response("list_service_jobs", response, expected)
        elif model.name == "DescribeServiceJob":
            index = int(params["jobId"].rsplit("-", 1)[1])
            self.stubber.add_response("describe_service_job", self.job(index)[1], {"jobId": params["jobId"]})
