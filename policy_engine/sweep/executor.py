"""Where runs execute: in this process (``--workers 1``), or on Dask distributed (the same code path
for an embedded ``LocalCluster`` and an existing cluster at ``--scheduler`` / ``DASK_SCHEDULER_ADDRESS``).

The shared input (the scenario's workload) is scattered to every worker once and each task names
it, so it is never copied per task. Tasks (batches of runs, see ``batching``) are submitted through
a bounded window (memory stays flat for a million-run grid) and results come back as they finish;
Dask retries a task whose worker died, and each task yields its runs' results exactly once.

The embedded cluster runs with ``LOCAL_CLUSTER_CONFIG``: on a laptop its scheduler, nannies and
workers share the cores with the simulations, and Dask's defaults for a long-lived shared cluster
(a 10 ms statistical profiler, 20 ms event-loop health ticks, 100 ms memory polls, work stealing,
a dashboard) cost a run on a worker about a fifth more CPU than the same run in-process.
"""

from __future__ import annotations

import itertools
import logging
import os
import signal
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sized
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from policy_engine.sweep.batching import BatchSizer, run_batch

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, e.g. inside a container), else the machine's."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: Dask settings of the embedded cluster (an existing cluster keeps its own): what a batch of CPU-bound
#: simulations of seconds each does not need. Failure detection and retries do not depend on them.
LOCAL_CLUSTER_CONFIG: dict[str, Any] = {
    "distributed.worker.profile.enabled": False,  # samples every thread's stack each 10 ms, on the event loop
    "distributed.admin.tick.interval": "1s",  # event-loop health checks (default 20 ms)
    "distributed.admin.system-monitor.interval": "5s",  # CPU/memory/network samples for the dashboard (500 ms)
    "distributed.worker.memory.monitor-interval": "1s",  # worker and nanny memory polls (100 ms)
    "distributed.scheduler.work-stealing": False,  # tasks are queued at the scheduler; nothing to rebalance
}


class ExecutorError(RuntimeError):
    """The executor cannot start or reach its cluster (a usage problem: exit 2)."""


_EXAMPLE = "expected tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786"


def check_address(address: str, origin: str) -> None:
    """Refuse an address Dask could only fail on after a timeout or with a bare Python error."""
    from distributed.comm import registry  # the package registers its transports on import

    backends = registry.backends
    scheme, separator, location = address.partition("://")
    if not separator:
        scheme, location = "tcp", address
    if scheme not in backends:
        raise ExecutorError(f"{origin} {address!r}: unknown scheme {scheme!r} (one of {', '.join(sorted(backends))}; "
                            f"{_EXAMPLE})")
    if scheme == "inproc":
        return
    host, colon, port = location.rpartition(":")
    if not colon or not host.strip("[]"):
        raise ExecutorError(f"{origin} {address!r}: no host and port ({_EXAMPLE})")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ExecutorError(f"{origin} {address!r}: port {port!r} is not a number from 1 to 65535 ({_EXAMPLE})")


@contextmanager
def _interrupts_left_to_this_process() -> Iterator[None]:
    """Start worker processes with SIGINT ignored (it is inherited across exec).

    Ctrl-C in a terminal reaches every process of the group; this one alone winds a sweep down
    (keeps the finished runs, stops the cluster) instead of every worker printing a traceback.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class InProcess(AbstractContextManager["InProcess"]):
    """``--workers 1``: run every task here, in submission order (for debugging, and the reference)."""

    workers = 1
    description = "in-process (1 worker)"

    def share(self, shared: Any) -> Any:
        return shared

    def release(self, handle: Any) -> None:
        return None

    def map(self, function: Callable[..., Any], shared: Any, items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            yield function(shared, item)

    def __exit__(self, *exc: object) -> None:
        return None


class DaskExecutor(AbstractContextManager["DaskExecutor"]):
    """Runs tasks on a Dask cluster: its own ``LocalCluster`` or one at ``address``."""

    #: Tasks in flight per worker thread: enough to keep workers busy while results are written.
    WINDOW_PER_WORKER = 4
    #: Each task is retried this many times when it raises (a lost worker is rescheduled by Dask itself).
    RETRIES = 2

    def __init__(self, address: str | None = None, workers: int | None = None):
        import dask
        from dask.distributed import Client, LocalCluster

        self._cluster: LocalCluster | None = None
        try:
            if address:
                self.client = Client(address, timeout="10s")
            else:
                count = workers or usable_cores()
                # the configuration is read when the scheduler and nannies start
                with dask.config.set(LOCAL_CLUSTER_CONFIG), _interrupts_left_to_this_process():
                    # no dashboard; the scheduler's small HTTP server (health checks) on a free loopback port
                    self._cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                                 dashboard_address=None, host="127.0.0.1",
                                                 scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                                 silence_logs=logging.CRITICAL)
                    self.client = Client(self._cluster)
        except (OSError, TimeoutError, ValueError) as error:
            if self._cluster is not None:
                self._cluster.close()
            where = f"Dask scheduler {address}" if address else "a local Dask cluster"
            raise ExecutorError(f"cannot reach {where}: {error}") from None
        threads = self.client.nthreads()
        self.workers = max(1, sum(threads.values()))
        self.description = (f"Dask scheduler {address} ({len(threads)} worker(s), {self.workers} thread(s))"
                            if address else f"local Dask cluster ({len(threads)} worker process(es))")

    def share(self, shared: Any) -> Any:
        """Scatter ``shared`` to every worker once; pass the handle to ``map`` as often as needed."""
        return self.client.scatter(shared, broadcast=True, hash=False)

    def release(self, handle: Any) -> None:
        handle.release()

    def map(self, function: Callable[..., Any], shared: Any, items: Iterable[Any]) -> Iterator[Any]:
        """``function(shared, item)`` for every item, results in completion order.

        ``shared`` is scattered here unless it is a handle from ``share`` already. Items go out in
        batches sized by ``BatchSizer``; a batch whose worker died is run again as a whole by Dask.
        """
        from dask.distributed import Future, as_completed

        owned = not isinstance(shared, Future)
        handle = self.share(shared) if owned else shared
        prefix = f"batch-quota-{uuid.uuid4().hex[:12]}"
        total = len(items) if isinstance(items, Sized) else None
        pending = iter(items)
        sent = 0
        sizer = BatchSizer(self.workers)
        finished = as_completed()
        window = self.workers * self.WINDOW_PER_WORKER

        def submit_next() -> bool:
            nonlocal sent
            batch = list(itertools.islice(pending, sizer.size(None if total is None else total - sent)))
            if not batch:
                return False
            finished.add(self.client.submit(run_batch, function, handle, batch, key=f"{prefix}-{sent}", pure=False,
                                            retries=self.RETRIES))
            sent += len(batch)
            return True

        for _ in range(window):
            if not submit_next():
                break
        try:
            for future in finished:
                results, seconds = future.result()
                future.release()
                sizer.observe(len(results), seconds)
                submit_next()
                yield from results
        finally:
            for future in list(finished.futures):
                future.cancel()
            if owned:
                handle.release()

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


Executor = InProcess | DaskExecutor


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity, as a container limits it), at least 1."""
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, len(affinity(0)) if affinity is not None else (os.cpu_count() or 1))


def workers_problem(workers: int) -> str | None:
    """Why ``--workers`` is refused: a local cluster is one process per worker, so at most the CPUs here."""
    if workers > (cpus := cpu_count()):
        return (f"--workers {workers}: more than this machine's {cpus} CPU(s), each worker being a process here; use "
                f"at most {cpus}, or a cluster's workers with --scheduler ADDRESS")
    return None


def open_executor(scheduler: str | None, workers: int | None) -> Executor:
    """``--workers 1``: in-process; otherwise Dask (``--scheduler``, else ``DASK_SCHEDULER_ADDRESS``, else local)."""
    if workers is not None and workers < 1:
        raise ExecutorError(f"--workers must be at least 1, got {workers}")
    if workers is not None and (problem := workers_problem(workers)) is not None:
        raise ExecutorError(problem)
    if scheduler and workers is not None:
        raise ExecutorError("--workers sizes the embedded local cluster; an existing cluster at --scheduler "
                            f"({scheduler}) has its own workers: give one or the other")
    if scheduler is not None and not scheduler.strip():
        raise ExecutorError(f"--scheduler: the address is empty ({_EXAMPLE})")
    # an explicit --workers wins over the environment's scheduler address
    address = scheduler or (None if workers is not None else os.environ.get(SCHEDULER_ENV) or None)
    if address:
        check_address(address, "--scheduler" if scheduler else f"${SCHEDULER_ENV}")
    if address is None and workers == 1:
        return InProcess()
    return DaskExecutor(address, workers)
