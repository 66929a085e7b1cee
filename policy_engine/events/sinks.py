"""Where emitted events go: a JSON Lines file, or an HTTP endpoint POSTed from a background thread.

The scheduler never waits for delivery: ``HttpSink.send`` only queues the event (a bounded
queue); a thread POSTs each one with a few retries. An event that cannot be delivered is
never silently lost: it is counted (``stats``) and logged, one line naming the URL and why.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from typing import IO, Any, Protocol

from policy_engine.foundation.output_files import open_output

log = logging.getLogger("batch_quota.events")

#: Events waiting for the HTTP thread; beyond this the newest is dropped (counted, logged).
QUEUE_SIZE = 10_000
#: Tries per event (the first included) and the pause before the second (doubling after).
ATTEMPTS = 3
BACKOFF_SECONDS = 0.2
TIMEOUT_SECONDS = 5.0


@dataclass
class DeliveryStats:
    """Per sink: events handed over, delivered, given up after the retries, dropped because the queue was full."""

    sent: int = 0
    delivered: int = 0
    failed: int = 0
    dropped: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class EventSink(Protocol):
    """Receives every event in emission order; ``send`` never blocks the scheduler for long."""

    target: str
    stats: DeliveryStats

    def send(self, event: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class FileSink:
    """One JSON object per line, flushed per line so a reader (``batch-quota top --events``) sees it at once."""

    def __init__(self, path: str, append: bool = False) -> None:
        self.target = path
        self.stats = DeliveryStats()
        self._handle: IO[str] = open_output(path, append)  # a device or FIFO in place, never replaced or waited on

    def send(self, event: dict[str, Any]) -> None:
        self.stats.sent += 1
        try:
            self._handle.write(json.dumps(event, separators=(",", ":"), allow_nan=False) + "\n")
        except OSError as error:
            self.stats.failed += 1
            log.warning("events file %s: cannot write event %s: %s", self.target, event.get("id"),
                        error.strerror or error)
            return
        self.stats.delivered += 1

    def close(self) -> None:
        self._handle.close()


class HttpSink:
    """POSTs each event as a JSON body to ``url`` from a background thread, retrying failures a bounded number of
    times (connection errors, 429 and 5xx answers); never blocks the caller."""

    def __init__(self, url: str, attempts: int = ATTEMPTS, backoff: float = BACKOFF_SECONDS,
                 timeout: float = TIMEOUT_SECONDS, queue_size: int = QUEUE_SIZE) -> None:
        self.target = url
        self.stats = DeliveryStats()
        self._attempts = attempts
        self._backoff = backoff
        self._timeout = timeout
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(queue_size)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="batch-quota-events", daemon=True)
        self._thread.start()

    def send(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.stats.sent += 1
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            with self._lock:
                self.stats.dropped += 1
            log.warning("events URL %s: %d events waiting, event %s dropped", self.target, self._queue.qsize(),
                        event.get("id"))

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            reason = self._post(event)
            with self._lock:
                if reason is None:
                    self.stats.delivered += 1
                else:
                    self.stats.failed += 1
            if reason is not None:
                log.warning("events URL %s: event %s not delivered after %d attempt(s): %s", self.target,
                            event.get("id"), self._attempts, reason)

    def _post(self, event: dict[str, Any]) -> str | None:
        """``None`` once delivered, else the last failure."""
        body = json.dumps(event, separators=(",", ":"), allow_nan=False).encode()
        reason = "not tried"
        for attempt in range(self._attempts):
            if attempt:
                time.sleep(self._backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.target, data=body, method="POST",
                                             headers={"content-type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=self._timeout) as response:
                    response.read()
                return None
            except urllib.error.HTTPError as error:
                reason = f"HTTP {error.code}"
                if error.code != 429 and error.code < 500:
                    return reason  # the receiver refused this event: another try gets the same answer
            except (urllib.error.URLError, OSError) as error:
                reason = str(getattr(error, "reason", error))
        return reason

    def close(self, wait: float = 5.0) -> None:
        """Deliver what is queued (for at most ``wait`` seconds), then stop the thread."""
        try:
            self._queue.put(None, timeout=wait)
        except queue.Full:
            return
        self._thread.join(timeout=wait)
