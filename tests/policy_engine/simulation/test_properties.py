"""Properties of the simulator on random topologies and workloads, checked after every instant.

Each example is small (a few shares, a dozen jobs) so the module runs in seconds; the
agreement properties tie the simulator to the policy engine's static answers.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.foundation.limits import TIME_LIMIT_REASONS
from policy_engine.foundation.model import (
    JobQueue,
    JobStateTimeLimitAction,
    QuotaShare,
    ReservedCapacity,
    ServiceEnvironment,
    Topology,
    TrainingPlan,
)
from policy_engine.simulation.causes import Cause, Reason
from policy_engine.simulation.core.engine import Engine, PriorityUpdate, SimulationSettings
from policy_engine.simulation.core.jobs import ACTIVE, JobSpec, Status
from policy_engine.simulation.core.preemption import POLICIES, reclaim_victims
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.settings import WINDOW_END_CHOICES, PlanDispatch, PlanEnd

TYPES = ("ml.g5.xlarge", "ml.p4d.24xlarge")
PROPERTY_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def topologies(draw) -> Topology:
    types = TYPES[: draw(st.integers(1, 2))]
    shares = []
    for index in range(draw(st.integers(2, 4))):
        strategy = draw(st.sampled_from(["RESERVE", "LEND", "LEND_AND_BORROW"]))
        capacity = {t: draw(st.integers(1, 3)) for t in types if t == types[0] or draw(st.booleans())}
        shares.append(QuotaShare(
            name=f"S{index}", capacity=capacity, strategy=strategy,
            borrow_limit=draw(st.sampled_from([None, -1, 0, 50, 100, 200])) if strategy == "LEND_AND_BORROW" else None,
            in_share_preemption=draw(st.booleans()),
        ))
    environment = {t: sum(s.capacity.get(t, 0) for s in shares) + draw(st.integers(0, 2)) for t in types}
    actions = tuple(JobStateTimeLimitAction(max_time_seconds=600, reason=reason)
                    for reason in draw(st.lists(st.sampled_from(TIME_LIMIT_REASONS), max_size=3, unique=True)))
    return Topology(
        service_environments=(ServiceEnvironment(name="env", capacity=environment),),
        job_queues=(JobQueue(name="q", service_environment="env", shares=tuple(shares),
                             job_state_time_limit_actions=actions),),
    )


@st.composite
def scenarios(draw):
    topology = draw(topologies())
    shares = topology.job_queues[0].shares
    jobs = []
    for index in range(draw(st.integers(1, 12))):
        share = draw(st.sampled_from(shares))
        jobs.append(JobSpec(
            f"j{index}", f"q/{share.name}", draw(st.sampled_from(sorted(share.capacity))), draw(st.integers(1, 4)),
            draw(st.integers(0, 3)), draw(st.integers(0, 40)), draw(st.integers(1, 60)),
            draw(st.sampled_from([None, 0, 1, 3])), draw(st.sampled_from([None, 10.0])),
        ))
    updates = []
    for _ in range(draw(st.integers(0, 3))):
        target = draw(st.sampled_from(jobs))
        at = target.submit_at + draw(st.integers(0, 30))
        updates.append(PriorityUpdate(at, target.name, draw(st.integers(0, 4))))
    return topology, jobs, updates, SimulationSettings(
        victim_policy=draw(st.sampled_from(list(POLICIES))),
        startup_delay=draw(st.sampled_from([0.0, 5.0])),
        preemption_delay=draw(st.sampled_from([0.0, 3.0])),
        backfill=draw(st.booleans()),
        min_runtime=draw(st.sampled_from([0.0, 0.0, 1.0, 0.25, 30.0])),
    )


def check_instant(engine: Engine, burst: dict) -> None:
    """Invariants that must hold after every instant."""
    environments: dict = {}
    for pool in engine.pools:
        environments[id(pool.env)] = pool.env
        non_reserve_used = sum(s.used for s in pool.shares if s.model.strategy != "RESERVE")
        non_reserve_limits = sum(s.limit for s in pool.shares if s.model.strategy != "RESERVE")
        # a RESERVE share's capacity (and capacity of no share) is never used by another share
        assert non_reserve_used <= non_reserve_limits
        assert pool.borrowed <= pool.lender_idle
        for share in pool.shares:
            assert share.used == sum(job.spec.instances for job in share.active)
            # the running count of priorities in-share preemption asks is the active jobs' priorities
            assert share.active_priorities == dict(Counter(job.priority for job in share.active))
            # the head the line keeps is its first waiting job in line order
            assert share.line.first is next(share.line.in_order(), None)
            # never above floor(limit x (1 + borrow_limit / 100))
            if share.ceiling is not None:
                assert share.used <= share.ceiling
            # RESERVE and LEND shares never borrow
            if share.model.strategy in ("RESERVE", "LEND"):
                assert share.used <= share.limit
            # agreement with the policy engine: never above the computed burst
            assert share.used <= burst[(share.share_id, share.instance_type)]
            _lender_is_not_left_waiting(engine, pool, share)
    for env in environments.values():
        assert 0 <= env.used <= env.capacity


def _lender_is_not_left_waiting(engine: Engine, pool, share) -> None:
    """A lender whose head fits within its own limit does not wait while its capacity is lent out,
    unless the rule's victim set holds a job placed less than ``min_runtime`` ago (it is retried then)."""
    head = share.line.first
    if head is None or head.misconfigured or not share.lends:
        return
    n = head.spec.instances
    if share.used + n > share.limit or pool.free_lendable >= n or pool.borrowed == 0:
        return
    victims = reclaim_victims(pool, share, head, engine.policy) or []
    assert any(engine.protected_until(job) is not None for job in victims), \
        f"{head.spec.name} of {share.share_id} waits while its capacity is lent out"


def preempted_only_while_borrowing(now, job, before, after, reason) -> None:
    """A job of a share without in-share preemption loses its place only while its share is borrowing."""
    if before in {s.value for s in ACTIVE} and reason.lower().startswith("preempted"):
        share = job.share
        if not share.in_share:
            assert share.used + job.spec.instances > share.limit, (job, reason)


def never_a_victim_while_protected(engine: Engine, now, job, reason) -> None:
    """The loop guard: a job placed at T is preempted no earlier than T + min_runtime, and never by the pass that
    placed it, so every pass and every instant ends."""
    if reason.startswith("preempted"):
        assert now >= job.attempt_start + engine.settings.min_runtime, (job, reason)
        assert job.start_order <= engine.pass_start, (job, reason)


def simulate(topology, jobs, updates, sim_settings, events=None):
    engine = Engine(topology, jobs, updates, sim_settings)
    graph = BorrowGraph(topology)
    burst = {key: graph.max_burst(*key) for key in engine.shares}
    engine.observers.append(lambda e: check_instant(e, burst))

    def on_transition(now, job, before, after, reason):
        preempted_only_while_borrowing(now, job, before, after, reason)
        never_a_victim_while_protected(engine, now, job, reason)
        if events is not None:
            events.append((now, job.spec.name, before, after, reason))

    engine.on_transition = on_transition
    engine.run()
    return engine


@PROPERTY_SETTINGS
@given(scenarios())
def test_invariants_hold_after_every_instant_and_every_job_ends_or_says_why(scenario):
    engine = simulate(*scenario)
    assert all(job.status is not Status.SUBMITTED for job in engine.jobs)  # every job was submitted
    for job in engine.jobs:
        if job.status in (Status.SUCCEEDED, Status.FAILED):
            continue
        assert job.status is Status.RUNNABLE, job
        reason = engine.waiting_reason(job)
        head = job.share.line.first
        if job.misconfigured:
            assert reason.startswith("MISCONFIGURATION:")
        else:  # only a misconfigured head can hold a job back forever
            assert head is not job and head.misconfigured
            assert reason.startswith(f"BLOCKED: behind head job {head.spec.name}")


@settings(max_examples=40, deadline=None)
@given(scenarios())
def test_same_input_same_output(scenario):
    first_events, second_events = [], []
    first = build_result(simulate(*scenario, events=first_events))
    second = build_result(simulate(*scenario, events=second_events))
    assert json.dumps(first.to_json()) == json.dumps(second.to_json())
    assert first_events == second_events
    plain = Engine(*scenario)  # no observer, no events: the engine's fast path must not change the outcome
    plain.run()
    assert json.dumps(build_result(plain).to_json()) == json.dumps(first.to_json())


@st.composite
def contended(draw):
    """Every share preempts in-share, and 20 to 40 jobs of mixed sizes and priorities arrive close together."""
    topology = draw(topologies())
    queue = topology.job_queues[0]
    shares = tuple(share.model_copy(update={"in_share_preemption": True}) for share in queue.shares)
    topology = topology.model_copy(update={"job_queues": (queue.model_copy(update={"shares": shares}),)})
    jobs = []
    for index in range(draw(st.integers(20, 40))):
        share = draw(st.sampled_from(shares))
        jobs.append(JobSpec(f"j{index}", f"q/{share.name}", draw(st.sampled_from(sorted(share.capacity))),
                            draw(st.integers(1, 3)), draw(st.integers(0, 3)), draw(st.integers(0, 20)),
                            draw(st.integers(10, 100))))
    return topology, jobs, [], SimulationSettings(victim_policy=draw(st.sampled_from(list(POLICIES))),
                                                  backfill=draw(st.booleans()))


@pytest.mark.interpreted  # the compiled steps call the bound directly: the patch would not be seen
def test_the_room_bound_never_rules_out_a_victim_set_the_search_would_find():
    """``could_make_room`` skips the victim search only where the search finds nothing (the bound is sound)."""
    from unittest import mock

    from policy_engine.simulation.core import preemption

    bound = preemption.could_make_room
    ruled_out: list[str] = []

    def checked(pool, share, instances, lower, above):
        fits = bound(pool, share, instances, lower, above)
        if not fits:
            ruled_out.append(share.share_id)
            head = share.line.first
            assert head is not None
            policy = POLICIES[engine_settings[0].victim_policy]
            with mock.patch.object(preemption, "could_make_room", return_value=True):
                search = (preemption.in_share_victims(pool, share, head, policy) if lower
                          else preemption.reclaim_victims(pool, share, head, policy))
            assert search is None, (share.share_id, instances)
        return fits

    engine_settings: list[SimulationSettings] = []

    @given(contended())
    @PROPERTY_SETTINGS
    def run(scenario):
        topology, jobs, updates, chosen = scenario
        engine_settings[:] = [chosen]
        Engine(topology, jobs, updates, chosen).run()

    with mock.patch.object(preemption, "could_make_room", checked):
        run()
    assert len(ruled_out) > 20  # not vacuous: the examples did put the bound to the test


@st.composite
def plan_scenarios(draw, far: bool = False):
    """The scenarios above with a training plan of the first type (one or two windows) that some jobs name.
    ``far``: its first window days away, every job of its type naming it, pending ends requeued."""
    topology, jobs, updates, chosen = draw(scenarios())
    plan_type = TYPES[0]
    # a window soon, or days away: jobs dispatched before it pend 2 days (limits.PLAN_PENDING_SECONDS) and end
    windows, start = [], draw(st.sampled_from([180_000, 400_000] if far else [0, 5, 30, 180_000, 400_000]))
    for _ in range(draw(st.integers(1, 2))):
        length = draw(st.sampled_from([1800, 1830, 1900, 2400]))  # the last 1800 s of each are never startable
        windows.append(ReservedCapacity(instances=draw(st.integers(1, 4)), start=start, end=start + length))
        start += length + draw(st.integers(0, 60))
    plan = TrainingPlan(name="plan", instance_type=plan_type, reserved_capacities=tuple(windows))
    topology = topology.model_copy(update={"training_plans": (plan,)})
    jobs = [job._replace(training_plan="plan", max_runtime=None if far else draw(st.sampled_from([None, 50, 5000])))
            if job.instance_type == plan_type and (far or draw(st.booleans())) else job for job in jobs]
    chosen = replace(chosen, plan_dispatch=draw(st.sampled_from(list(PlanDispatch))),
                     plan_window_end=draw(st.sampled_from(WINDOW_END_CHOICES)),
                     plan_pending_end=PlanEnd.REQUEUE if far else draw(st.sampled_from(list(PlanEnd))))
    return topology, jobs, updates, chosen


def check_plans(engine: Engine) -> None:
    """No plan job runs outside an Active window, and a window's instances in use never exceed its instances."""
    gate = engine.plans
    assert gate is not None
    for state in gate.plans.values():
        for window in state.windows:
            assert 0 <= window.in_use <= window.instances
            assert window.in_use == sum(job.spec.instances for job in window.running)
            if window.running:
                assert window.start <= engine.now < window.cutoff  # Active, before SageMaker terminates it
    for job in engine.jobs:
        if job.spec.training_plan is not None and job.status in ACTIVE:
            # "The training plan must be in the Scheduled or Active status to be used by a training job" (SageMaker):
            # a job never holds quota for a plan with no window whose cutoff is still ahead
            assert gate.plans[job.spec.training_plan].has_window_left(engine.now), job
        if job.spec.training_plan is None:
            assert job not in gate.on_window  # jobs without a plan never use plan instances
        elif job.status in (Status.STARTING, Status.RUNNING):
            window = gate.on_window[job]
            assert window.accepts(engine.now) and job in window.running


def capacity_retry_costs_nothing(counts: dict, job, reason: Reason, seen: list[int]) -> None:
    """AWS Batch: service jobs "automatically retry certain types of failures, such as insufficient capacity errors,
    without consuming your configured retry attempts": a requeue after 2 days pending spends neither an attempt
    nor a preemption, and is counted as a capacity retry."""
    before = counts.get(job, (0, 0, 0))
    now = (job.attempts_failed, job.preemptions, job.capacity_retries)
    if reason.cause is Cause.PLAN_CAPACITY_RETRY:
        assert now == (before[0], before[1], before[2] + 1), (job, before, now)
        seen.append(1)
    else:
        assert now[2] == before[2], job
    counts[job] = now


def plan_run(scenario, seen: list[int]) -> None:
    """Run a plan scenario checking every instant and transition, then how each unfinished job waits."""
    engine = Engine(*scenario)
    graph = BorrowGraph(scenario[0])
    burst = {key: graph.max_burst(*key) for key in engine.shares}
    engine.observers.append(lambda e: (check_instant(e, burst), check_plans(e)))
    engine.on_transition = lambda now, job, before, after, reason: never_a_victim_while_protected(
        engine, now, job, reason)
    counts: dict = {}
    engine.on_reason = lambda now, job, before, after, reason: capacity_retry_costs_nothing(counts, job, reason, seen)
    engine.run()
    for job in engine.jobs:
        if job.status in (Status.SUCCEEDED, Status.FAILED):
            continue
        assert job.status is Status.RUNNABLE, job  # a SCHEDULED plan job ends within 2 days of its dispatch
        assert not (engine.plans is not None and engine.plans.pending(job)), job  # no window left: it failed
        if not job.misconfigured:
            head = job.share.line.first
            assert head is not job and head is not None and head.misconfigured, engine.waiting_reason(job)


@PROPERTY_SETTINGS
@given(plan_scenarios())
def test_plan_jobs_run_only_on_free_instances_of_active_windows(scenario):
    plan_run(scenario, [])


def test_capacity_retries_never_consume_attempts_and_no_job_holds_quota_for_a_plan_without_a_window():
    """Plans days away, jobs dispatched long before: the same checks, and the examples did requeue jobs."""
    seen: list[int] = []

    @PROPERTY_SETTINGS
    @given(plan_scenarios(far=True))
    def run(scenario):
        plan_run(scenario, seen)

    run()
    assert seen  # not vacuous


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(plan_scenarios(), plan_scenarios(far=True)))
def test_a_plan_run_is_the_same_whether_or_not_anyone_listens(scenario):
    """Unheard, a placed plan job that gets a free instance of its plan runs at once, and one that does not waits
    SCHEDULED, without the steps a listener hears (SCHEDULED, STARTING, RUNNING): the outcome is the same."""
    heard: list[tuple[float, str, str, str]] = []
    listened = Engine(*scenario)
    listened.on_transition = lambda now, job, before, after, reason: heard.append((now, job.spec.name, after, reason))
    listened.run()
    alone = Engine(*scenario)
    alone.run()
    assert json.dumps(build_result(alone).to_json()) == json.dumps(build_result(listened).to_json())
    assert heard or not scenario[1]
