"""The endpoint's state and its one entry point: ``Service.call(operation, params)``.

Every call first brings the simulator up to the clock, then runs the operation's
handler. A call that changes state is appended to the ``--state`` store with the
simulated time and the identifiers it generated, so a restart replays the same
inputs at the same instants and the deterministic engine arrives at the same state.
Every ``checkpoint_every`` logged calls (and at shutdown) the state itself is checkpointed
(``checkpoint``), so a restart loads it and replays only the calls after it.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from policy_engine.adapters.endpoint import checkpoint, operations
from policy_engine.adapters.endpoint.audit import Audit
from policy_engine.adapters.endpoint.base.account import Account, Arns
from policy_engine.adapters.endpoint.base.errors import client_error, throttled
from policy_engine.adapters.endpoint.base.jobs import ServiceJob
from policy_engine.adapters.endpoint.base.sagemaker import ServedCapacity, ServedPlan
from policy_engine.adapters.endpoint.base.scheduler import Clock, Scheduler
from policy_engine.adapters.endpoint.cloudtrail import Trail
from policy_engine.adapters.endpoint.events import EndpointEvents
from policy_engine.adapters.endpoint.handlers.registry import Output, Params
from policy_engine.adapters.endpoint.rehearsal.cloud import Rehearsal
from policy_engine.adapters.endpoint.store import Store
from policy_engine.events.service_events import EventFactory
from policy_engine.events.sinks import EventSink
from policy_engine.foundation import limits
from policy_engine.foundation.bounds import MAX_INSTANT, MAX_INSTANT_SECONDS
from policy_engine.foundation.model import Topology
from policy_engine.foundation.regions import region_problem
from policy_engine.simulation.gcpause import gc_paused

#: SubmitServiceJob's documented account rate (service_limits): requests per second.
SUBMIT_RATE = float(limits.SUBMIT_REQUESTS_PER_SECOND.at_most)
#: ``--state``: logged calls between two checkpoints (docs/endpoint.md); a restart replays at most this many.
CHECKPOINT_EVERY = 2000

log = logging.getLogger("batch_quota.serve")


@dataclass(frozen=True)
class Options:
    speed: float = 60.0
    default_duration: float = 3600.0
    enforce_limits: bool = False
    transition_seconds: float = 0.0
    preemption_seconds: float = 0.0
    region: str = "us-east-1"
    account_id: str = "123456789012"
    #: ``--state``: checkpoint the state every this many logged calls (0: never; a restart replays every call)
    checkpoint_every: int = CHECKPOINT_EVERY


def _given(members: Params) -> Params:
    """Request members without the ones a caller would have left out."""
    return {key: value for key, value in members.items() if value is not None}


class RateLimiter:
    """A token bucket in real time: ``rate`` per second, bursts up to ``rate``."""

    def __init__(self, rate: float, wall: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.tokens = rate
        self._wall = wall
        self._last = wall()

    def allow(self) -> bool:
        now = self._wall()
        self.tokens = min(self.rate, self.tokens + (now - self._last) * self.rate)
        self._last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Service:
    def __init__(self, options: Options | None = None, topology: Topology | None = None,
                 store: Store | None = None, sinks: list[EventSink] | None = None) -> None:
        self.options = options or Options()
        self.store = store
        #: ``serve --events``: None when no sink was asked for; attached after a restore (replayed calls send nothing)
        self.events: EndpointEvents | None = None
        self._replaying: deque[str] | None = None
        #: replaying the ``--state`` log: findings are not logged again
        self._restoring = False
        self.limiter = RateLimiter(SUBMIT_RATE)
        problem = region_problem(self.options.region)
        if problem is not None:
            raise ValueError(f"Options.region: {problem}")
        #: what ``reset`` restores (``serve TOPOLOGY``, ``--walkthrough`` or none; a resumed ``--state`` without a
        #: TOPOLOGY: the topology that state started from), never a topology POSTed since
        self.startup_topology = topology
        #: the topology the current state started from (the start-up one, or the last POSTed): what a replay
        #: of the ``--state`` log starts on
        self.initial_topology = topology
        self._generated: list[str] = []
        #: the histories' lengths and the last call at the last checkpoint; calls logged since
        self._marks = checkpoint.Marks()
        self._since_checkpoint = 0
        #: the store's sequence number of the last call logged (or replayed)
        self._last_call = 0
        #: how a ``--state`` restart got its state back, for the start-up line (None: nothing to restore)
        self.restored: str | None = None
        self._fresh(topology, start=0.0, origin_ms=int(time.time() * 1000))
        if store is not None:
            self._restore(store, topology)
        self._restoring = False
        if sinks:
            # event ids from a namespace of this run: unique across restarts, where the counter starts again
            factory = EventFactory(self.options.region, self.options.account_id, namespace=uuid.uuid4())
            self.events = EndpointEvents(self, sinks, factory)
            self.scheduler.watcher = self.events

    # --- set-up ----------------------------------------------------------------------------

    def _fresh(self, topology: Topology | None, start: float, origin_ms: int) -> None:
        options = self.options
        self.origin_ms = origin_ms
        self.account = Account(Arns(options.region, options.account_id), options.transition_seconds)
        self.trail = Trail(options.region, options.account_id, origin_ms)
        if topology is not None:
            self.account.load(topology, start)
            self._record_creation(start)
        self.scheduler = Scheduler(self.account.topology(), Clock(options.speed, start, latest=self.latest),
                                   self.account.arns.training_job,
                                   preemption_seconds=options.preemption_seconds,
                                   start=datetime.fromtimestamp(origin_ms / 1000, UTC))
        self.scheduler.engine.now = start
        self.audit = Audit()
        self.audit.refresh(self.scheduler.topology, quiet=self._restoring)
        #: the deploy rehearsal (stacks, buckets, parameters, rules): rebuilt here, so ``reset`` drops it too
        if getattr(self, "rehearsal", None) is not None:
            self._watch_rules(False)  # the old stacks' rules deliver nothing more
        self.rehearsal = Rehearsal(self, options.region, options.account_id, self._watch_rules)

    def _restore(self, store: Store, topology: Topology | None) -> None:
        """Replay the store's log (if any) on top of the initial topology; the clock resumes where it was."""
        stored = store.read_meta()
        if stored is None:
            store.write_meta(self.origin_ms, 0.0, topology)
            return
        origin_ms, clock, stored_topology = stored
        self.initial_topology = stored_topology
        if topology is None:
            self.startup_topology = stored_topology
        self._restoring = True
        self._fresh(stored_topology, 0.0, origin_ms)
        self.scheduler.clock.speed = 0  # frozen while replaying: every input lands on its recorded instant
        began = time.perf_counter()
        with gc_paused():  # a hundred thousand records: the collector's passes would cost twice the reading
            after = self._load_checkpoint(store, stored_topology, origin_ms)
            for seq, at, name, params, generated in store.entries(after):
                self._since_checkpoint += 1
                self._last_call = seq
                self._replay_to(at)
                self._replaying = deque(generated)
                try:
                    self._apply(name, params)
                finally:
                    self._replaying = None
            self._replay_to(clock)
        self.restored = (f"restored {'from the checkpoint at call ' + str(after) if after else 'without a checkpoint'}"
                         f", {self._since_checkpoint} call(s) replayed, in {time.perf_counter() - began:.2f} s")
        self.scheduler.clock.speed = self.options.speed
        self.scheduler.clock.set(self.scheduler.engine.now)

    def _load_checkpoint(self, store: Store, topology: Topology | None, origin_ms: int) -> int:
        """Restore the last checkpoint, if there is one that can be used; the last call it includes (0: none)."""
        found = store.read_checkpoint()
        if found is None:
            return 0
        call_seq, state = found
        try:
            checkpoint.restore(self, store, state)
        except (checkpoint.CheckpointError, KeyError, IndexError, TypeError, ValueError) as error:
            # a checkpoint this version cannot use, or a damaged one: the log alone is the state, slower
            log.warning("%s: the checkpoint is not used (%s: %s); replaying every logged call", store.path,
                        type(error).__name__, error)
            store.drop_checkpoint()
            self._fresh(topology, 0.0, origin_ms)
            self.scheduler.clock.speed = 0
            return 0
        counts = state["counts"]
        self._last_call = call_seq
        self._marks = checkpoint.Marks(call_seq, counts["trail"], counts["events"], counts["updates"],
                                       counts["terminations"])
        return call_seq

    def checkpoint(self) -> None:
        """Write a checkpoint of the state (``--state``) if calls were logged since the last one."""
        if self.store is None or not self._since_checkpoint:
            return
        if self.account.plans:
            # which plan instances the running jobs hold is not in a checkpoint (the engine is rebuilt by
            # ``Engine.adopt``): with training plans a restart replays every logged call, exact but slower
            return
        state, rows, chunks, marks = checkpoint.capture(self, self._marks, self._last_call)
        self.store.write_checkpoint(marks.call_seq, state, rows, chunks)
        self.scheduler.changed.clear()
        self._marks = marks
        self._since_checkpoint = 0

    def _mark_named(self, params: Params) -> None:
        """A job's tags changed: the scheduler cannot know, the call (logged or replayed) says so."""
        arn = params.get("resourceArn")
        if isinstance(arn, str) and ":service-job/" in arn:
            record = self.scheduler.jobs.by_id.get(arn.rsplit("/", 1)[-1])
            if record is not None:
                self.scheduler.changed.add(record.seq)

    def _logged(self, call_seq: int) -> None:
        """A call was appended to the store: checkpoint when it is time."""
        self._last_call = call_seq
        self._since_checkpoint += 1
        every = self.options.checkpoint_every
        if every and self._since_checkpoint >= every:
            self.checkpoint()

    def finish_transition(self, arn: str) -> None:
        """A deployed resource's CREATING / UPDATING / DELETING ends now: CloudFormation waits for the final
        status, and the rehearsal does not wait for the clock (any ``--speed``, ``--transition-seconds``)."""
        if self.account.complete(arn):
            self.topology_changed()

    def _watch_rules(self, active: bool) -> None:
        """Deployed EventBridge rules get the endpoint's events (the ones ``--events`` writes) while any exist."""
        sink = self.rehearsal.deliveries
        if active and self.events is None:
            factory = EventFactory(self.options.region, self.options.account_id, namespace=uuid.uuid4())
            self.events = EndpointEvents(self, [sink], factory)
            self.scheduler.watcher = self.events
        elif active and self.events is not None and sink not in self.events.sinks:
            self.events.sinks.append(sink)
        elif not active and self.events is not None and sink in self.events.sinks:
            self.events.sinks.remove(sink)

    def _record_creation(self, at: float) -> None:
        """The loaded topology in the trail as the Create calls that would have made it (docs/endpoint.md)."""
        resources, trail = self.account.resources, self.trail
        tags = self.account.tags
        for name, env in resources.environments.items():
            trail.record(at, "CreateServiceEnvironment", _given({
                "serviceEnvironmentName": name, "serviceEnvironmentType": env["serviceEnvironmentType"],
                "state": env.get("state"), "capacityLimits": env["capacityLimits"],
                "tags": tags.get(env["serviceEnvironmentArn"])}),
                {"serviceEnvironmentName": name, "serviceEnvironmentArn": env["serviceEnvironmentArn"]})
        for policy in resources.policies.values():
            trail.record(at, "CreateSchedulingPolicy", _given({
                "name": policy["name"], "quotaSharePolicy": policy.get("quotaSharePolicy"),
                "fairsharePolicy": policy.get("fairsharePolicy"), "tags": tags.get(policy["arn"])}),
                {"name": policy["name"], "arn": policy["arn"]})
        for name, queue in resources.queues.items():
            trail.record(at, "CreateJobQueue", _given({
                "jobQueueName": name, "state": queue.get("state"), "jobQueueType": queue.get("jobQueueType"),
                "schedulingPolicyArn": queue.get("schedulingPolicyArn"), "priority": queue.get("priority"),
                "serviceEnvironmentOrder": queue.get("serviceEnvironmentOrder"),
                "jobStateTimeLimitActions": queue.get("jobStateTimeLimitActions"),
                "tags": tags.get(queue["jobQueueArn"])}),
                {"jobQueueName": name, "jobQueueArn": queue["jobQueueArn"]})
        for (_, name), share in resources.shares.items():
            trail.record(at, "CreateQuotaShare", _given({
                "quotaShareName": name, "jobQueue": share["jobQueueArn"], "capacityLimits": share["capacityLimits"],
                "resourceSharingConfiguration": share["resourceSharingConfiguration"],
                "preemptionConfiguration": share["preemptionConfiguration"], "state": share.get("state"),
                "tags": tags.get(share["quotaShareArn"])}),
                {"quotaShareName": name, "quotaShareArn": share["quotaShareArn"]})

    def _replay_to(self, at: float) -> None:
        clock = self.scheduler.clock
        clock.set(max(at, self.scheduler.engine.now))
        self.catch_up()

    # --- what handlers use ----------------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.scheduler.engine.now

    @property
    def latest(self) -> float:
        """The last simulated second a date can show: ``bounds.MAX_INSTANT`` counted from the account's start."""
        return MAX_INSTANT_SECONDS - self.origin_ms / 1000

    def instant_problem(self, seconds: float, what: str) -> str | None:
        """Why simulated second ``seconds`` (``what`` reaches it) cannot be served, or ``None``."""
        if seconds <= self.latest:
            return None
        return f"{what} would reach {MAX_INSTANT.isoformat()} or later, the latest instant a date can show"

    @property
    def default_duration(self) -> float:
        return self.options.default_duration

    def ms(self, seconds: float) -> int:
        return self.origin_ms + round(seconds * 1000)

    def new_id(self) -> str:
        if self._replaying:
            return self._replaying.popleft()
        job_id = str(uuid.uuid4())
        self._generated.append(job_id)
        return job_id

    def throttle_submit(self) -> None:
        if self.options.enforce_limits and self._replaying is None and not self.limiter.allow():
            raise throttled(f"Rate exceeded: SubmitServiceJob accepts {SUBMIT_RATE:g} requests per second "
                            "per account (emulated by --enforce-limits)")

    def topology_changed(self) -> None:
        topology = self.account.topology()
        self.scheduler.change_topology(topology)
        self.audit.refresh(topology, quiet=self._restoring)

    def training_plans(self) -> list[ServedPlan]:
        """The account's training plans (the topology's ``training_plans``) in simulated seconds: an ISO 8601
        window counts from the account's start (simulated second 0), a number is already seconds from it."""
        origin = datetime.fromtimestamp(self.origin_ms / 1000, UTC)
        served = []
        for plan in self.account.plans:
            arn = plan.arn or self.account.arns.training_plan(plan.name)
            capacities = tuple(ServedCapacity(c.instances, c.start_seconds(origin), c.end_seconds(origin),
                                              c.availability_zone) for c in plan.reserved_capacities)
            fee = None if plan.upfront_fee is None else str(plan.upfront_fee)
            served.append(ServedPlan(plan.name, arn, plan.instance_type, capacities, fee, plan.currency))
        return served

    def plan_in_use(self, plan: ServedPlan) -> int:
        """Instances of the plan its jobs hold now: the engine's count of the windows' instances in use."""
        return self.scheduler.plan_in_use(plan.name)

    def unfinished_jobs(self, queue: str) -> Iterator[ServiceJob]:
        jobs = self.scheduler.jobs
        for status in ("SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING"):
            for seq in list(jobs.lists.get((queue, None, status), ())):
                yield jobs.records[seq]

    # --- the entry points -----------------------------------------------------------------------

    def catch_up(self) -> float:
        now = self.scheduler.catch_up()
        if self.account.settle(now):
            self.topology_changed()
        return now

    def call(self, name: str, params: Params) -> Output:
        """Run one API operation at the clock's time; raise ``ApiError`` for what AWS would reject."""
        handler = operations.HANDLERS.get(name)
        if handler is None:
            raise client_error(f"Operation {name} is not supported by batch-quota serve")
        self.catch_up()
        self._generated = []
        result = handler(self, params)
        if name in operations.MUTATING:
            self.trail.record(self.now, name, params, result, self.new_id())  # its event id is logged too
            if self.store is not None:
                self._mark_named(params)
                self._logged(self.store.append(self.now, name, params, self._generated))
        return result

    def _apply(self, name: str, params: Params) -> None:
        self._generated = []
        if name in operations.HANDLERS:
            result = operations.HANDLERS[name](self, params)
            self.trail.record(self.now, name, params, result, self.new_id())  # its event id is logged too
            self._mark_named(params)
        else:
            self._control(name, params)

    # --- control operations (``/_batch-quota/``) ------------------------------------------------

    def control(self, name: str, params: Params) -> Output:
        """``advance`` (logged like an API call), ``reset`` and ``topology`` (a fresh start: clock 0, no jobs)."""
        self.catch_up()
        if name == "advance":
            at = self.now
            problem = self.instant_problem(at + params["seconds"], f"clock/advance of {params['seconds']:g} s "
                                                                   f"(the clock is at {at:g} s)")
            if problem is not None:  # every date the endpoint shows stays a valid one
                raise client_error(problem)
            result = self._control(name, params)
            if self.store is not None:
                self._logged(self.store.append(at, name, {"seconds": params["seconds"]}, []))
            return result
        if name == "reset":
            self.reset()
        elif name == "topology":
            self._start_over(params["topology"])
        else:
            raise client_error(f"Unknown control operation {name}")
        return self.clock_state()

    def reset(self) -> None:
        """``POST /_batch-quota/reset``: the start-up state (docs/endpoint.md). The one definition: the start-up
        topology's resources, no jobs, an empty trail, clock 0, the ``--state`` log started anew. Everything
        the account holds is built by ``_fresh``, so state added later (deployed stacks) is dropped here too."""
        self._start_over(self.startup_topology)

    def _start_over(self, topology: Topology | None) -> None:
        self.initial_topology = topology
        self._fresh(topology, 0.0, int(time.time() * 1000))
        self.scheduler.watcher = self.events
        if self.store is not None:
            self.store.clear()
            self.store.write_meta(self.origin_ms, 0.0, topology)
            self._marks = checkpoint.Marks()
            self._since_checkpoint = 0

    def _control(self, name: str, params: Params) -> Output:
        if name == "advance":
            self.scheduler.advance(params["seconds"])
            if self.account.settle(self.now):
                self.topology_changed()
            return self.clock_state()
        raise client_error(f"Unknown control operation {name}")

    def clock_state(self) -> Output:
        now = self.now
        return {"seconds": now, "epochMillis": self.ms(now), "speed": self.options.speed}

    def save_clock(self) -> None:
        if self.store is not None:
            self.store.save_clock(self.scheduler.clock.now())

    def job_records(self) -> list[ServiceJob]:
        return self.scheduler.jobs.records
