"""What a handler sees of the endpoint: the account, the scheduler, the clock and a few services.

A protocol, so the handlers depend on this and not on ``Service`` (which imports every handler):
``Service`` satisfies it, and a test may hand a handler anything else that does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from policy_engine.adapters.endpoint.base.account import Account
from policy_engine.adapters.endpoint.base.jobs import ServiceJob
from policy_engine.adapters.endpoint.base.sagemaker import ServedPlan
from policy_engine.adapters.endpoint.base.scheduler import Scheduler


class Endpoint(Protocol):
    account: Account
    scheduler: Scheduler
    #: epoch milliseconds of simulated second 0
    origin_ms: int

    @property
    def now(self) -> float:
        """Simulated seconds."""
        ...

    @property
    def default_duration(self) -> float:
        """Run time of a job that names none (``serve --default-duration``)."""
        ...

    def instant_problem(self, seconds: float, what: str) -> str | None:
        """Why simulated second ``seconds`` (which ``what`` reaches) is past the latest date, or ``None``."""
        ...

    def ms(self, seconds: float) -> int:
        """Simulated seconds as the API's epoch milliseconds."""
        ...

    def new_id(self) -> str:
        """A job id (the recorded one while the ``--state`` log is replayed)."""
        ...

    def throttle_submit(self) -> None:
        """Raise the throttling error when ``--enforce-limits`` and the submit rate is exceeded."""
        ...

    def topology_changed(self) -> None:
        """Reschedule on the account's new topology."""
        ...

    def unfinished_jobs(self, queue: str) -> Iterator[ServiceJob]:
        ...

    def training_plans(self) -> list[ServedPlan]:
        """The account's training plans, in simulated seconds."""
        ...
