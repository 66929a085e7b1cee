"""Every transition carries a named cause, every waiting job a waiting cause; both worded in one place."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from policy_engine.foundation.model import Topology
from policy_engine.simulation.causes import PREEMPTIONS, Cause, Reason, describe, describe_waiting
from policy_engine.simulation.core import lifecycle
from policy_engine.simulation.core.engine import Engine, SimulationSettings
from policy_engine.simulation.core.jobs import MISCONFIG_QUOTA, Job, JobSpec, LiveState, Status
from policy_engine.simulation.results.records import build_result
from tests.builders import job, share
from tests.builders import simulated_topology as topology

Change = tuple[float, str, str, str, Reason]


def changes(topo: Topology, jobs: Sequence[JobSpec], until: float | None = None, **settings: object
            ) -> tuple[Engine, list[Change]]:
    """Run with both listeners; every worded reason is the value's ``describe``, in the same order."""
    engine = Engine(topo, jobs, settings=SimulationSettings(**settings))  # type: ignore[arg-type]
    values: list[Change] = []
    texts: list[tuple[float, str, str, str, str]] = []
    engine.on_reason = lambda t, j, before, after, reason: values.append((t, j.spec.name, before, after, reason))
    engine.on_transition = lambda t, j, before, after, text: texts.append((t, j.spec.name, before, after, text))
    engine.run(until)
    assert texts == [(t, name, before, after, describe(reason)) for t, name, before, after, reason in values]
    return engine, values


def of(found: list[Change], name: str) -> list[tuple[str, str, Reason]]:
    return [(before, after, reason) for _, job_name, before, after, reason in found if job_name == name]


def test_a_reclaim_names_its_preemptor_and_the_text_is_unchanged():
    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    engine, found = changes(topo, [job("a1", "A"), job("a2", "A"), job("l", "L", at=100)], until=100)
    assert of(found, "a2") == [
        ("", "SUBMITTED", Reason(Cause.SUBMITTED)), ("SUBMITTED", "RUNNABLE", Reason(Cause.QUEUED)),
        ("RUNNABLE", "SCHEDULED", Reason(Cause.PLACED_ON_BORROWED_CAPACITY)),
        ("SCHEDULED", "STARTING", Reason(Cause.STARTED)), ("STARTING", "RUNNING", Reason(Cause.STARTED)),
        ("RUNNING", "RUNNABLE", Reason(Cause.RECLAIM_PREEMPTION, "l"))]
    assert describe(Reason(Cause.RECLAIM_PREEMPTION, "l")) == "preempted (reclaim) by l"
    assert of(found, "l")[2] == ("RUNNABLE", "SCHEDULED", Reason(Cause.PLACED_ON_OWN_CAPACITY))
    waiting = engine.waiting(engine.by_name["a2"])
    assert Cause.REQUEUED_AFTER_PREEMPTION in waiting.also


def test_an_in_share_preemption_is_its_own_cause():
    topo = topology(1, share("A", 1, "RESERVE", in_share_preemption=True))
    _, found = changes(topo, [job("low", "A", priority=1), job("high", "A", priority=5, at=10)])
    preempted = [reason for _, _, reason in of(found, "low") if reason.cause in PREEMPTIONS]
    assert preempted == [Reason(Cause.IN_SHARE_PREEMPTION, "high")]
    assert describe(preempted[0]) == "preempted (in-share) by high"


def test_failed_attempts_carry_their_number_and_the_last_one_exhausts_the_retries():
    _, found = changes(topology(1, share("A", 1)), [job("j", "A", attempts=2, failures=2, duration=10)])
    ends = [(after, reason) for before, after, reason in of(found, "j") if before == "RUNNING"]
    assert ends == [("RUNNABLE", Reason(Cause.ATTEMPT_FAILED, 1)), ("FAILED", Reason(Cause.RETRIES_EXHAUSTED, (2, 2)))]
    assert [describe(reason) for _, reason in ends] == [
        "attempt 1 failed; retrying", "FAILED: attempt 2 of 2 (retryStrategy.attempts) failed"]


def test_the_final_causes_are_kept_on_the_job_and_worded_in_its_record():
    topo = topology(4, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"), share("D", 1, state="DISABLED"),
                    share("T", 1), time_limit=600)
    jobs = [job("a1", "A", duration=5000), job("a2", "A", preemption_retries=0), job("l", "L", at=100),
            job("rejected", "D"), job("tries", "T", attempts=1, failures=1, at=10, duration=5),
            job("timed", "A", at=20, duration=10)]
    engine, found = changes(topo, jobs)
    finals = {name: reason for _, name, _, after, reason in found if after == "FAILED"}
    assert finals == {
        "a2": Reason(Cause.PREEMPTION_RETRIES_EXHAUSTED, 0),
        "rejected": Reason(Cause.REJECTED_BY_DISABLED_SHARE, "quota share q/D"),
        "tries": Reason(Cause.RETRIES_EXHAUSTED, (1, 1)),
        "timed": Reason(Cause.TIME_LIMIT_ACTION, "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"),
    }
    assert {j.spec.name: j.end_reason for j in engine.jobs if j.status is Status.FAILED} == finals
    records = {r.name: r.reason for r in build_result(engine).jobs}
    assert records["rejected"] == "REJECTED: quota share q/D is DISABLED"
    assert records["a2"] == "PREEMPTED: preemptionRetriesBeforeTermination (0) exceeded"
    assert records["timed"] == ("Terminated by JobStateTimeLimit action due to reason: "
                                "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY")
    assert records["a1"] == ""  # succeeded: nothing to say


def test_terminate_snapshot_and_misconfiguration_have_causes():
    topo = topology(4, share("A", 2, "RESERVE"))
    jobs = [job("live", "A", duration=100), job("big", "A", instances=3)]
    engine = Engine(topo, jobs, live={"live": LiveState(Status.RUNNING, -10.0, 50.0)})
    found: list[tuple[str, Reason]] = []
    engine.on_reason = lambda t, j, before, after, reason: found.append((j.spec.name, reason))
    engine.run(0)
    engine.terminate(engine.by_name["live"], "by test")
    assert found == [("live", Reason(Cause.ON_CAPACITY_AT_SNAPSHOT)), ("live", Reason(Cause.STARTED)),
                     ("big", Reason(Cause.SUBMITTED)), ("big", Reason(Cause.MISCONFIGURED, MISCONFIG_QUOTA)),
                     ("live", Reason(Cause.TERMINATED, "by test"))]
    assert engine.by_name["live"].reason == "by test"


def test_every_transition_cause_is_worded():
    details = {Cause.REJECTED_BY_DISABLED_SHARE: "job queue q", Cause.ATTEMPT_FAILED: 1,
               Cause.RETRIES_EXHAUSTED: (1, 1), Cause.RECLAIM_PREEMPTION: "x", Cause.IN_SHARE_PREEMPTION: "x",
               Cause.PREEMPTION_RETRIES_EXHAUSTED: 0, Cause.TIME_LIMIT_ACTION: MISCONFIG_QUOTA,
               Cause.TERMINATED: "asked", Cause.TOPOLOGY_CHANGE: ("q/A", "ml.g5.xlarge"),
               Cause.MISCONFIGURED: MISCONFIG_QUOTA, Cause.PLAN_WINDOW_ENDED: ("p", 0), Cause.PLAN_PENDING_EXPIRED: "p",
               Cause.PLAN_STOPPING_CONDITION: ("p", 60), Cause.WAITING_FOR_PLAN_WINDOW: "p",
               Cause.PLAN_CAPACITY_RETRY: "p", Cause.PLAN_NO_WINDOW_LEFT: ("p", "Expired")}
    silent = {Cause.QUEUED, Cause.STARTED}  # the state says it all
    waiting_only = {Cause.BEHIND_HEAD, Cause.SHARE_AT_LIMIT, Cause.NOTHING_LENDABLE, Cause.LENDABLE_TAKEN,
                    Cause.ENVIRONMENT_FULL, Cause.WAITING_FOR_RECLAIM, Cause.REQUEUED_AFTER_PREEMPTION,
                    Cause.TIME_LIMIT_ACTION_PENDING}
    transitions = [c for c in Cause if c not in waiting_only]
    for cause in transitions:
        text = describe(Reason(cause, details.get(cause)))
        assert (text == "") == (cause in silent), cause
    assert describe(Reason(Cause.TOPOLOGY_CHANGE, ("q/A", "ml.g5.xlarge"))) == (
        "Terminated: quota share q/A no longer has ml.g5.xlarge capacity")


def _waiting(topo: Topology, jobs: Sequence[JobSpec], until: float, name: str, **settings: object):
    engine = Engine(topo, jobs, settings=SimulationSettings(**settings))  # type: ignore[arg-type]
    engine.run(until)
    target: Job = engine.by_name[name]
    assert target.status is Status.RUNNABLE
    waiting = engine.waiting(target)
    assert describe_waiting(waiting) == engine.waiting_reason(target) == build_result(engine).job(name).reason
    return waiting


def test_behind_the_head_and_at_the_limit():
    jobs = [job("a1", "A"), job("a2", "A", at=1), job("a3", "A", at=2)]
    behind = _waiting(topology(3, share("A", 1)), jobs, 2, "a3")
    assert (behind.cause, behind.detail, behind.head_misconfigured) == (Cause.BEHIND_HEAD, "a2", False)
    head = _waiting(topology(3, share("A", 1)), jobs, 2, "a2")
    assert (head.cause, head.used, head.bound, head.needs) == (Cause.SHARE_AT_LIMIT, 1, 1, 1)


def test_nothing_lendable_and_lendable_taken_by_an_earlier_borrower():
    alone = _waiting(topology(2, share("A", 1, "LEND_AND_BORROW")), [job("a1", "A"), job("a2", "A", at=1)], 1, "a2")
    assert (alone.cause, alone.lendable) == (Cause.NOTHING_LENDABLE, 0)
    topo = topology(3, share("A", 1, "LEND_AND_BORROW"), share("B", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a1", "A"), job("b1", "B"), job("a2", "A", at=1), job("b2", "B", at=2)]
    taken = _waiting(topo, jobs, 2, "b2")
    assert (taken.cause, taken.lendable) == (Cause.LENDABLE_TAKEN, 0)


def test_environment_full_and_waiting_for_a_protected_reclaim_victim():
    full = _waiting(topology(1, share("A", 1), share("B", 1), oversubscribed=True),
                    [job("a1", "A"), job("b1", "B", at=1)], 1, "b1")
    assert (full.cause, full.capacity, full.idle, full.reclaimable) == (Cause.ENVIRONMENT_FULL,
                                                                       Cause.ENVIRONMENT_FULL, 0, 0)
    topo = topology(2, share("A", 1, "LEND"), share("B", 1, "LEND_AND_BORROW", borrow_limit=-1))
    jobs = [job("b1", "B", duration=1000), job("b2", "B", at=10, duration=1000), job("a1", "A", at=10.5)]
    protected = _waiting(topo, jobs, 10.5, "a1", min_runtime=1.0)  # min_runtime is 0 unless set
    assert (protected.cause, protected.capacity) == (Cause.WAITING_FOR_RECLAIM, Cause.ENVIRONMENT_FULL)
    assert [(p.name, p.placed_at, p.until) for p in protected.protected] == [("b2", 10.0, 11.0)]


def test_a_misconfigured_job_and_a_pending_time_limit():
    misconfigured = _waiting(topology(4, share("A", 2)), [job("big", "A", instances=3)], 0, "big")
    assert (misconfigured.cause, misconfigured.detail) == (Cause.MISCONFIGURED, MISCONFIG_QUOTA)
    pending = _waiting(topology(2, share("A", 1), time_limit=600), [job("a1", "A"), job("a2", "A")], 100, "a2")
    assert pending.cause is Cause.SHARE_AT_LIMIT and pending.also == (Cause.TIME_LIMIT_ACTION_PENDING,)


@pytest.mark.interpreted
def test_no_reason_is_built_when_nobody_listens(monkeypatch: pytest.MonkeyPatch):
    """The hot path: without a listener only the reasons a job's record keeps (how it failed) are built."""
    built: list[Reason] = []

    def counting(cause: Cause, detail: object = None) -> Reason:
        built.append(Reason(cause, detail))  # type: ignore[arg-type]
        return built[-1]

    monkeypatch.setattr(lifecycle, "Reason", counting)
    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a1", "A"), job("a2", "A"), job("l", "L", at=100), job("f", "L", at=200, failures=1, duration=5)]
    engine = Engine(topo, jobs)
    engine.run()
    assert sum(j.preemptions for j in engine.jobs) == 1  # a preemption happened, and built nothing
    assert built == [Reason(Cause.RETRIES_EXHAUSTED, (1, 1))]
