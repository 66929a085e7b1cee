"""Hypothesis properties of the checks: the AWS-limit rules accept anything within AWS's limits, lenders
never lower a burst, and the guaranteed minimum is the limit whenever nothing is oversubscribed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.borrow.guarantees import guaranteed_capacity
from policy_engine.analysis.rules import REGISTRY, Context
from policy_engine.foundation.limits import TIME_LIMIT_REASONS
from policy_engine.foundation.model import JobQueue, JobStateTimeLimitAction, QuotaShare, ServiceEnvironment, Topology

TYPES = ("ml.g5.xlarge", "ml.g5.2xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.trn1.32xlarge")
NAME = st.text(alphabet="abcXYZ019-_", min_size=1, max_size=128)
SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def shares(draw, types: tuple[str, ...], names: list[str]) -> tuple[QuotaShare, ...]:
    result = []
    for name in names:
        strategy = draw(st.sampled_from(("RESERVE", "LEND", "LEND_AND_BORROW")))
        chosen = draw(st.lists(st.sampled_from(types), min_size=1, max_size=5, unique=True))
        result.append(QuotaShare(
            name=name,
            capacity={t: draw(st.integers(1, 8)) for t in chosen},
            strategy=strategy,
            borrow_limit=draw(st.none() | st.integers(-1, 400)) if strategy == "LEND_AND_BORROW" else None,
            in_share_preemption=draw(st.booleans()),
        ))
    return tuple(result)


@st.composite
def topologies_within_limits(draw) -> Topology:
    """Any topology AWS would accept: names, counts, priorities and capacities inside the documented ranges."""
    queue_names = draw(st.lists(NAME, min_size=1, max_size=4, unique=True))
    environments, queues = [], []
    for index, queue_name in enumerate(queue_names):
        types = tuple(draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=5, unique=True)))
        share_names = draw(st.lists(NAME, min_size=1, max_size=20, unique=True))
        environment = f"env-{index}"
        capacity = {t: draw(st.integers(1, 200)) for t in types}
        environments.append(ServiceEnvironment(name=environment, capacity=capacity))
        actions = draw(st.lists(st.tuples(st.integers(600, 86400), st.sampled_from(TIME_LIMIT_REASONS)), max_size=2))
        queues.append(JobQueue(
            name=queue_name,
            service_environment=environment,
            priority=draw(st.integers(0, 1000)),
            shares=draw(shares(types, share_names)),
            job_state_time_limit_actions=tuple(JobStateTimeLimitAction(max_time_seconds=s, reason=reason)
                                               for s, reason in actions),
        ))
    return Topology(service_environments=tuple(environments), job_queues=tuple(queues))


@SETTINGS
@given(topologies_within_limits())
def test_topology_within_limits_is_never_rejected_by_an_aws_limit_rule(topology):
    context = Context(topology)
    findings = [f for rule in REGISTRY.values() if rule.enforced_by_aws for f in rule.run(context)]
    assert findings == []


@st.composite
def queue_and_new_lender(draw) -> tuple[Topology, QuotaShare]:
    types = TYPES[:3]
    existing = draw(shares(types, [f"s{i}" for i in range(draw(st.integers(1, 8)))]))
    environment = {t: draw(st.integers(1, 40)) for t in types}
    topology = Topology(
        service_environments=(ServiceEnvironment(name="env", capacity=environment),),
        job_queues=(JobQueue(name="q", service_environment="env", shares=existing),),
        allow_oversubscription=True,
    )
    new = draw(shares(types, ["new-lender"]))[0]
    strategy = draw(st.sampled_from(("LEND", "LEND_AND_BORROW")))
    return topology, new.model_copy(update={"strategy": strategy, "borrow_limit": None})


@SETTINGS
@given(queue_and_new_lender())
def test_adding_a_lender_never_lowers_any_burst(case):
    before, lender = case
    queue = before.job_queues[0]
    after = before.model_copy(update={"job_queues": (queue.model_copy(update={"shares": (*queue.shares, lender)}),)})
    old, new = BorrowGraph(before), BorrowGraph(after)
    for share in queue.shares:
        for instance_type in share.capacity:
            node = f"q/{share.name}"
            assert new.max_burst(node, instance_type) >= old.max_burst(node, instance_type)


@SETTINGS
@given(st.data())
def test_min_capacity_is_the_limit_whenever_nothing_is_oversubscribed(data):
    types = TYPES[:3]
    queue_shares = data.draw(shares(types, [f"s{i}" for i in range(data.draw(st.integers(1, 20)))]))
    claimed = {t: sum(s.capacity.get(t, 0) for s in queue_shares) for t in types}
    environment = {t: claimed[t] + data.draw(st.integers(0, 5)) for t in types if claimed[t] > 0}
    topology = Topology(
        service_environments=(ServiceEnvironment(name="env", capacity=environment),),
        job_queues=(JobQueue(name="q", service_environment="env", shares=queue_shares),),
    )
    graph = BorrowGraph(topology)
    for share in queue_shares:
        for instance_type, limit in share.capacity.items():
            assert guaranteed_capacity(graph, f"q/{share.name}", instance_type) == limit
