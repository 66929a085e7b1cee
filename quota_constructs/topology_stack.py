"""A whole ``policy_engine`` topology -> CDK constructs and stacks, checked once before synthesis.

The policy engine runs once per topology, before any construct is built; ``topology_findings``
puts its findings on the constructs (errors fail ``cdk synth``). An object whose construct refuses
its props is left out instead of aborting the build, and its finding fails synthesis anyway. No
Python callback is registered per resource: properties are set directly from the validated model.

CDK refuses more resources in a stack than ``limits.STACK_RESOURCES`` and CloudFormation more outputs than
``limits.STACK_OUTPUTS``, so ``TopologyStacks`` puts a topology that does not fit in one stack into one stack
per job queue (a queue, its policy, its service environment and AWS's most shares per queue,
``limits.SHARES_PER_QUEUE``, always fit). The
outputs counted include the exports that grants from other stacks add (one per share, queue and
environment ARN), so granting every share from a separate stack never overflows a stack.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Literal

from aws_cdk import App, CfnOutput, Environment, Stack
from constructs import Construct

from policy_engine.analysis.checks import CheckReport
from policy_engine.analysis.rules.objects import environment_ref, queue_ref, share_ref
from policy_engine.foundation import limits
from policy_engine.foundation import model as m
from quota_constructs.errors import QuotaConstructError
from quota_constructs.job_queue import TrainingJobQueue
from quota_constructs.quota_share import QuotaShare
from quota_constructs.service_environment import ServiceEnvironment, ServiceEnvironmentBase
from quota_constructs.topology_findings import (
    BuildProblem,
    attach_findings,
    build_or_record,
    checked_report,
)
from quota_constructs.validation import construct_path

Split = Literal["auto", "single", "per-queue"]

#: CDK's ``TooManyResourcesInStack`` threshold; one is kept for ``AWS::CDK::Metadata``.
MAX_RESOURCES_PER_STACK = limits.STACK_RESOURCES.at_most - 1
#: CloudFormation's limit on outputs per template.
MAX_OUTPUTS_PER_STACK = limits.STACK_OUTPUTS.at_most


class QueueResources(Construct):
    """One job queue of a topology: queue, quota policy, shares, and the outputs the SDK needs.

    Outputs: ``JobQueueArn``/``JobQueueName`` and, per share, ``Share:<share>/Arn`` and ``Share:<share>/Name``
    (the value for ``TrainingQueue(...).submit(..., quota_share_name=...)``). Shares are ``Share:<name>``
    so that no share name can clash with the queue's own children.

    With ``problems``, a queue or share whose construct refuses its props is recorded there and
    left out (``job_queue`` is then ``None`` and the queue has no shares); without it, it raises.
    ``service_environment=None`` (its environment could not be built) builds nothing.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        queue: m.JobQueue,
        service_environment: ServiceEnvironmentBase | None,
        problems: list[BuildProblem] | None = None,
    ) -> None:
        super().__init__(scope, id)
        self.job_queue: TrainingJobQueue | None = None
        self.shares: dict[str, QuotaShare] = {}
        if service_environment is None:
            return
        self.job_queue = build_or_record(
            problems, self, (queue_ref(queue), environment_ref(queue.service_environment)),
            lambda: TrainingJobQueue.from_model(self, "JobQueue", queue, service_environment),
        )
        job_queue = self.job_queue
        if job_queue is None:
            return
        for model in queue.shares:
            share = build_or_record(
                problems, self, (share_ref(queue, model), queue_ref(queue)),
                partial(QuotaShare.from_model, self, f"Share:{model.name}", model, job_queue),
            )
            if share is not None:
                self.shares[model.name] = share
        _output(self, "JobQueueArn", job_queue.job_queue_arn, f"ARN of job queue {queue.name}")
        _output(self, "JobQueueName", queue.name,
                f"Name of job queue {queue.name}: TrainingQueue(name) in the SageMaker Python SDK")
        for name, share in self.shares.items():
            _output(share, "Arn", share.quota_share_arn, f"ARN of quota share {share.share_id}")
            _output(share, "Name", name,
                    f"Name of quota share {share.share_id}: quota_share_name for job queue {queue.name}")


def _output(scope: Construct, id: str, value: str, description: str) -> CfnOutput:
    """A stack output: two per share make most of a topology's constructs."""
    return CfnOutput(scope, id, value=value, description=description)


def resources_needed(topology: m.Topology) -> int:
    """CloudFormation resources the topology becomes: environments, a queue and a policy per queue, shares."""
    return len(topology.service_environments) + sum(2 + len(q.shares) for q in topology.job_queues)


def outputs_needed(topology: m.Topology) -> int:
    """The stack's own outputs: ARN and name of every queue and share."""
    return sum(2 + 2 * len(q.shares) for q in topology.job_queues)


def exports_possible(topology: m.Topology) -> int:
    """Exports other stacks may add: one per ARN a grant or queue can reference (share, queue, environment).

    A grant from another stack (``share.grant_submit(role)``) makes CDK export the share's and its
    queue's ARNs; each export is one more output of this stack.
    """
    return len(topology.service_environments) + sum(1 + len(q.shares) for q in topology.job_queues)


def fits_one_stack(topology: m.Topology) -> bool:
    """Resources, and outputs including every export grants could add, within CDK's and CloudFormation's limits."""
    return (resources_needed(topology) <= MAX_RESOURCES_PER_STACK
            and outputs_needed(topology) + exports_possible(topology) <= MAX_OUTPUTS_PER_STACK)


class QuotaTopology(Construct):
    """Every resource of a topology in one scope (at most ``limits.STACK_RESOURCES``: see ``TopologyStacks``).

    ``report`` reuses a ``check_topology`` result; by default the policy engine runs here, once,
    before anything is built. ``validated=True`` says the caller already ran ``checked_report`` on
    this topology and report (``TopologyStacks`` does). Objects whose constructs refuse their props are
    left out (see the module docstring), so ``environments``, ``queues`` and ``shares`` hold what was built.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        topology: m.Topology,
        report: CheckReport | None = None,
        validated: bool = False,
    ) -> None:
        if not validated or report is None:
            report = checked_report(topology, report, source=f"QuotaTopology {id!r}")
        super().__init__(scope, id)
        _without_creation_traces(self)
        self.report = report
        problems: list[BuildProblem] = []
        self.environments: dict[str, ServiceEnvironment] = {}
        for model in topology.service_environments:
            environment = build_or_record(
                problems, self, (environment_ref(model.name),),
                partial(ServiceEnvironment.from_model, self, _environment_id(model.name), model),
            )
            if environment is not None:
                self.environments[model.name] = environment
        self.queues: dict[str, QueueResources] = {
            q.name: QueueResources(self, _queue_id(q.name), queue=q,
                                   service_environment=self.environments.get(q.service_environment), problems=problems)
            for q in topology.job_queues
        }
        attach_findings(self.report, topology, self.queues, self.environments, self, problems)

    @property
    def shares(self) -> dict[str, QuotaShare]:
        """Every share by ``QUEUE/SHARE``."""
        return {m.share_id(q, s): share for q, res in self.queues.items() for s, share in res.shares.items()}


#: CDK records a creation stack trace on every CloudFormation element unless this context is set (``cdk synth
#: --debug`` records them anyway). Built from Python, the trace holds only the jsii kernel's Node frames ("no user
#: code"), and capturing it cost about 0.15 s of building a 1,000-share topology. Templates do not change.
NO_CREATION_STACK_TRACES = "aws:cdk:disable-creation-stack-traces"


def _without_creation_traces(scope: Construct) -> None:
    """No creation stack traces below ``scope`` (set before it has children, as CDK requires)."""
    scope.node.set_context(NO_CREATION_STACK_TRACES, True)


def _stack(app: App, id: str, env: Environment | None, description: str) -> Stack:
    """A stack of ``TopologyStacks``: its constructs record no creation stack traces."""
    stack = Stack(app, id, env=env, description=description)
    _without_creation_traces(stack)
    return stack


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while building: the build allocates many objects that live on (one
    proxy per construct) and frees its kernel messages by reference counting, so collections, each scanning the
    topology and every proxy made so far, found nothing (about 0.1 s of a 1,000-share build)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _queue_id(name: str) -> str:
    """Construct ID of a queue: its name (kept stable), or a placeholder for the empty name BQ101 refuses."""
    return name or "(unnamed job queue)"


def _environment_id(name: str) -> str:
    """Construct ID of an environment: ``:`` never occurs in AWS names, so it cannot clash with a queue's."""
    return f"Environment:{name}"


_STACK_NAME = re.compile(rf"[A-Za-z][A-Za-z0-9-]{{0,{limits.STACK_NAME_LENGTH.at_most - 1}}}")


def _stack_id(app: App, stack_name: str, queue: str | None = None) -> str:
    """``stack_name`` or ``stack_name-queue``: CloudFormation allows letters, digits and '-' (queues' '_' -> '-')."""
    name = stack_name if queue is None else f"{stack_name}-{queue.replace('_', '-')}"
    if not _STACK_NAME.fullmatch(name):
        where = "stack_name" if queue is None else f"stack name for job queue {queue!r}"
        raise QuotaConstructError(f"TopologyStacks: {where} = {name!r} is invalid; expected "
                                  f"{limits.STACK_NAME_LENGTH.range_text()} letters, digits and '-', starting with a "
                                  "letter", path=construct_path(app, name), field="stack_name", value=name)
    return name


class TopologyStacks:
    """Build an app's stacks for a topology: one stack when it fits, else one per job queue.

    ``stacks`` lists them; ``queues`` (by name) and ``shares`` (by ``QUEUE/SHARE``) expose the
    constructs for grants, e.g. ``deployed.shares["training/QS1"].grant_submit(role)``.
    A service environment lives in the stack of the first queue that uses it; other queues
    reference it across stacks (CDK adds the export, import and dependency).
    """

    def __init__(
        self,
        app: App,
        topology: m.Topology,
        *,
        stack_name: str = "BatchQuota",
        env: Environment | None = None,
        split: Split = "auto",
        report: CheckReport | None = None,
    ) -> None:
        if split not in ("auto", "single", "per-queue"):
            raise QuotaConstructError(f"TopologyStacks: split = {split!r} is invalid; expected one of auto, single, "
                                      "per-queue", path=construct_path(app, stack_name), field="split", value=split)
        self.report = checked_report(topology, report, source="TopologyStacks")
        _stack_id(app, stack_name)
        self.stacks: list[Stack] = []
        self.queues: dict[str, QueueResources] = {}
        with _collector_paused():
            self._build(app, topology, stack_name, env, split)

    def _build(self, app: App, topology: m.Topology, stack_name: str, env: Environment | None, split: Split) -> None:
        """Build the stacks (see the class docstring); ``__init__`` has checked the arguments."""
        problems: list[BuildProblem] = []
        one_stack = split == "single" or (split == "auto" and fits_one_stack(topology))
        if one_stack or not topology.job_queues:
            stack = _stack(app, _stack_id(app, stack_name), env, self._describe(topology, None))
            built = QuotaTopology(stack, "Topology", topology=topology, report=self.report, validated=True)
            self.stacks.append(stack)
            self.queues = built.queues
            return
        # A queue whose name AWS refuses (BQ101, reported below) cannot name a stack either: it gets none.
        misnamed = {f.object for f in self.report.errors if f.rule == "BQ101"}
        stack_ids: dict[str, str] = {}
        queues: list[m.JobQueue] = []
        for queue in topology.job_queues:
            try:
                stack_id = _stack_id(app, stack_name, queue.name)
            except QuotaConstructError:
                if queue_ref(queue) in misnamed:
                    continue
                raise
            if stack_id in stack_ids:
                raise QuotaConstructError(f"TopologyStacks: job queues {stack_ids[stack_id]!r} and {queue.name!r} both "
                                          f"need stack name {stack_id!r} (stack names allow letters, digits and '-'); "
                                          "rename one", path=construct_path(app, stack_id), field="job_queues",
                                          value=queue.name)
            stack_ids[stack_id] = queue.name
            queues.append(queue)
        environments: dict[str, ServiceEnvironmentBase | None] = {}

        def environment_in(stack: Stack, model: m.ServiceEnvironment) -> ServiceEnvironmentBase | None:
            if model.name not in environments:
                environments[model.name] = build_or_record(
                    problems, stack, (environment_ref(model.name),),
                    lambda: ServiceEnvironment.from_model(stack, _environment_id(model.name), model),
                )
            return environments[model.name]

        declared = {model.name: model for model in topology.service_environments}  # validated: each queue's exists
        for queue, stack_id in zip(queues, stack_ids, strict=True):
            stack = _stack(app, stack_id, env, self._describe(topology, queue))
            self.stacks.append(stack)
            self.queues[queue.name] = QueueResources(
                stack, _queue_id(queue.name), queue=queue,
                service_environment=environment_in(stack, declared[queue.service_environment]),
                problems=problems,
            )
        if not self.stacks:  # every queue was left out: the findings still need a stack to fail
            self.stacks.append(_stack(app, _stack_id(app, stack_name), env, self._describe(topology, None)))
        for unused in topology.service_environments:
            environment_in(self.stacks[0], unused)
        built_environments = {name: e for name, e in environments.items() if e is not None}
        attach_findings(self.report, topology, self.queues, built_environments, self.stacks[0], problems)

    @staticmethod
    def _describe(topology: m.Topology, queue: m.JobQueue | None) -> str:
        if queue is None:
            shares = sum(len(q.shares) for q in topology.job_queues)
            return f"batch-quota: {len(topology.job_queues)} job queue(s), {shares} quota share(s)"
        return f"batch-quota: job queue {queue.name} with {len(queue.shares)} quota share(s)"

    @property
    def shares(self) -> dict[str, QuotaShare]:
        """Every share by ``QUEUE/SHARE``."""
        return {m.share_id(q, s): share for q, res in self.queues.items() for s, share in res.shares.items()}
