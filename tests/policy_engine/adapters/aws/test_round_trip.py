"""Round trip: a topology -> the project's constructs -> the Describe responses AWS would give -> import -> the same.

Normalised: the order of queues, environments and shares (AWS stores none); AWS reports
a LEND_AND_BORROW share's unset borrow limit as its default, -1, which means the same;
``system_tags`` (the CloudFormation system tags AWS adds) is the one field the import adds.
"""

from __future__ import annotations

from botocore.stub import Stubber
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policy_engine.adapters.aws.account import read_account
from policy_engine.adapters.aws.clients import Api
from policy_engine.foundation.limits import TIME_LIMIT_REASONS
from policy_engine.foundation.model import JobQueue, JobStateTimeLimitAction, ServiceEnvironment, Topology
from policy_engine.inputs.loading import topology_from_data
from tests.policy_engine.adapters.aws.fake_account import FakeAccount, batch_client, topology_template
from tests.policy_engine.test_properties import TYPES, shares

NAME = st.text(alphabet="abcXYZ019-_", min_size=1, max_size=40)
TAGS = st.dictionaries(st.text(alphabet="abcdef-_:", min_size=1, max_size=12).filter(lambda k: not k.startswith("aws")),
                       st.text(alphabet="xyz 019", max_size=12), max_size=3)
STATE = st.sampled_from(("ENABLED", "DISABLED"))


@st.composite
def deployable_topologies(draw) -> Topology:
    queue_names = draw(st.lists(NAME, min_size=1, max_size=3, unique=True))
    environments, queues = [], []
    for index, queue_name in enumerate(queue_names):
        types = tuple(draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True)))
        share_list = draw(shares(types, draw(st.lists(NAME, min_size=0, max_size=6, unique=True))))
        share_list = tuple(s.model_copy(update={"tags": draw(TAGS), "state": draw(STATE)}) for s in share_list)
        capacity = {t: sum(s.capacity.get(t, 0) for s in share_list) + draw(st.integers(0, 4)) or 1 for t in types}
        environments.append(ServiceEnvironment(name=f"env-{index}", capacity=capacity, state=draw(STATE),
                                               tags=draw(TAGS)))
        queues.append(JobQueue(
            name=queue_name, service_environment=f"env-{index}", priority=draw(st.integers(0, 1000)),
            state=draw(STATE), shares=share_list, tags=draw(TAGS),
            scheduling_policy=draw(st.none() | st.just(f"policy-{index}")),
            job_state_time_limit_actions=tuple(
                JobStateTimeLimitAction(max_time_seconds=seconds, reason=reason)
                for seconds, reason in draw(st.lists(
                    st.tuples(st.integers(600, 86400), st.sampled_from(TIME_LIMIT_REASONS)), max_size=2)))))
    return Topology(service_environments=tuple(environments), job_queues=tuple(queues))


def _normalised(topology: Topology) -> dict:
    data = topology.model_dump(exclude={"guarantees", "allow_oversubscription"})
    for env in data["service_environments"]:
        env.pop("system_tags")
    for queue in data["job_queues"]:
        queue.pop("system_tags")
        for share in queue["shares"]:
            share.pop("system_tags")
            if share["strategy"] == "LEND_AND_BORROW" and share["borrow_limit"] is None:
                share["borrow_limit"] = -1
        queue["shares"] = sorted(queue["shares"], key=lambda item: item["name"])
    for key in ("service_environments", "job_queues"):
        data[key] = sorted(data[key], key=lambda item: item["name"])
    return data


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deployable_topologies())
def test_import_of_what_the_constructs_deploy_gives_the_topology_back(topology):
    account = FakeAccount.from_template(topology_template(topology), stack_name="RoundTrip")
    client = batch_client()
    with Stubber(client) as stubber:
        calls = account.stub_import(stubber, page_size=2, share_page_size=5)
        api = Api(client)
        read = read_account(api)
        stubber.assert_no_pending_responses()
    assert not read.errors and not read.skipped
    assert sum(api.calls.values()) == calls
    imported = topology_from_data(read.data, "account")
    assert _normalised(imported) == _normalised(topology)
    assert all(s.system_tags == {"aws:cloudformation:stack-name": "RoundTrip",
                                "aws:cloudformation:logical-id": s.system_tags["aws:cloudformation:logical-id"]}
               for _, s in imported.shares())


def _deployed(account: FakeAccount) -> dict:
    """What the account holds, without what AWS adds on its own (system tags)."""
    def user(tags):
        return {k: v for k, v in (tags or {}).items() if not k.startswith("aws:")}

    return {
        "environments": sorted(({**e, "tags": user(e.get("tags"))} for e in account.environments),
                               key=lambda e: e["serviceEnvironmentName"]),
        "policies": sorted(({**p, "tags": user(p.get("tags"))} for p in account.policies), key=lambda p: p["name"]),
        "queues": sorted(({**q, "tags": user(q.get("tags"))} for q in account.queues), key=lambda q: q["jobQueueName"]),
        "shares": sorted(({**s, "tags": user(account.tags[s["quotaShareArn"]])}
                          for shares in account.shares.values() for s in shares), key=lambda s: s["quotaShareArn"]),
    }


def test_import_then_synth_deploys_the_same_properties_the_account_has():
    from tests.quota_constructs.test_botocore_shapes import _rich_topology

    original = FakeAccount.from_template(topology_template(_rich_topology()), stack_name="Original")
    client = batch_client()
    with Stubber(client) as stubber:
        original.stub_import(stubber)
        imported = topology_from_data(read_account(Api(client)).data, "account")
    redeployed = FakeAccount.from_template(topology_template(imported), stack_name="Redeployed")
    assert _deployed(redeployed) == _deployed(original)
