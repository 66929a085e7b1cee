"""``explain``'s view: one share in plain sentences, for the team that owns it (the plan windows' sentences and
figures from ``plans``).

Every sentence is derived from the same ``ShareSummary`` and ``BorrowGraph`` the checks use,
so what ``explain`` tells a team and what ``check`` enforces never disagree. The result is a
list of ``(topic, sentence)`` pairs; the command prints them, tests read them.
"""

from __future__ import annotations

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.checks import CheckReport, borrow_graph
from policy_engine.analysis.rules.objects import findings_by_share
from policy_engine.analysis.summary import ShareSummary
from policy_engine.foundation.model import Topology
from policy_engine.foundation.units import duration_text
from policy_engine.reports.explain.plans import plan_figures, plan_sentences
from policy_engine.reports.kit.subjects import ExplainOutput

__all__ = ["Sentence", "explain_share", "plan_figures", "sentences"]

Sentence = tuple[str, str]


def _amount(count: int, instance_type: str) -> str:
    return f"{count} {instance_type}"


def _names(nodes: list[str] | tuple[str, ...]) -> str:
    items = list(nodes)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def explain_share(topology: Topology, node: str, report: CheckReport, graph: BorrowGraph | None = None
                  ) -> list[Sentence]:
    """Sentences about ``node`` (``QUEUE/SHARE``): guarantee, burst, lending, reclaim, preemption, findings."""
    graph = graph or borrow_graph(topology, report)
    summary: ShareSummary = report.summaries[node]
    share, queue = graph.share(node), graph.queue(node)
    sentences: list[Sentence] = []
    limits = ", ".join(_amount(n, t) for t, n in share.capacity.items())
    named = [label for label in (f"job_queues[{queue.name}]", f"service_environments[{queue.service_environment}]",
                                 node) if label in topology.named_at_deploy]
    deploy = (f" Named at deploy: {', '.join(named)} (these names are the template's logical IDs; CloudFormation "
              "names the resources when it deploys)." if named else "")
    sentences.append(("what", f"{node} is a {share.strategy} quota share of job queue {queue.name} "
                              f"(service environment {queue.service_environment}) with a limit of {limits}." + deploy
                      + (" It is DISABLED: it accepts no new jobs." if share.state == "DISABLED" else "")
                      + (f" Its job queue {queue.name} is DISABLED: every job submitted to {node} is rejected."
                         if queue.state == "DISABLED" else "")))
    for instance_type, limit in share.capacity.items():
        sentences.extend(_capacity_sentences(graph, node, summary, instance_type, limit))
    sentences.extend(_preemption_sentences(graph, node, summary))
    sentences.extend(plan_sentences(topology, graph, node))
    sentences.append(("time limits", _time_limit_sentence(graph, node)))
    for finding in findings_by_share(topology, report.findings).get(node, []):
        suppressed = f" [suppressed: {finding.suppressed}]" if finding.suppressed is not None else ""
        sentences.append(("findings", f"check {finding.severity.value} {finding.rule}: {finding.message}"
                          + (f" (fix: {finding.hint})" if finding.hint else "") + suppressed))
    return sentences


#: What each status reason AWS accepts for a time-limit action means for a job of the share.
_REASON_MEANING = {
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED": "a job larger than the share can ever get (its limit, "
                                                         "or its ceiling with borrowing)",
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE": "a job larger than the service environment",
    "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY": "a job waiting for instances the environment cannot supply",
}


def _time_limit_sentence(graph: BorrowGraph, node: str) -> str:
    """What the queue's jobStateTimeLimitActions terminate, or that a blocked head job waits for ever."""
    queue = graph.queue(node)
    actions = queue.job_state_time_limit_actions
    if not actions:
        return (f"Job queue {queue.name} has no time-limit action: a job of {node} that can never run stays "
                f"RUNNABLE at the front of the share and holds the jobs behind it until someone cancels it.")
    parts = [f"after {duration_text(a.max_time_seconds)} RUNNABLE at the front, "
             f"{_REASON_MEANING.get(a.reason, a.reason)} ({a.reason}) is terminated" for a in actions]
    return (f"Job queue {queue.name} terminates a job stuck at the front of {node}, so the line behind it moves "
            "again: " + "; ".join(parts) + ".")


def _capacity_sentences(graph: BorrowGraph, node: str, summary: ShareSummary, instance_type: str, limit: int
                        ) -> list[Sentence]:
    share = graph.share(node)
    out: list[Sentence] = []
    if graph.environment_capacity(node, instance_type) <= 0:
        # BQ202: no instance of this type exists, so guarantee, burst and lending are all moot.
        environment = graph.queue(node).service_environment
        return [("guaranteed", f"Service environment {environment} has no {instance_type}, so jobs of {node} "
                               f"that need {instance_type} can never run: its limit of {limit} gives it nothing, "
                               f"and it has none to lend.")]
    guaranteed = summary.guaranteed.get(instance_type, 0)
    if guaranteed >= limit:
        how = ("nobody else can ever use them" if share.strategy == "RESERVE" else
               "when its jobs wait, capacity lent to other shares is taken back for them")
        out.append(("guaranteed", f"It is guaranteed its {_amount(limit, instance_type)}: {how}."))
    else:
        out.append(("guaranteed", f"It is guaranteed only {_amount(guaranteed, instance_type)} of its limit of "
                                  f"{limit}: the other shares' limits on {graph.queue(node).service_environment} add "
                                  f"up to more than the environment has, and reclaim only takes back borrowed "
                                  f"capacity."))
    burst = graph.burst(node, instance_type)
    if not share.borrows:
        out.append(("burst", f"It never borrows, so it never runs more than its own {_amount(limit, instance_type)}."))
    elif not burst.borrowed:
        lenders = graph.lenders(node, instance_type)
        why = ("no other share of its job queue lends " + instance_type if not lenders else
               "its borrow limit or the environment leaves no room above its own limit")
        out.append(("burst", f"It may borrow but cannot burst above its own {_amount(limit, instance_type)}: "
                             f"{why}."))
    else:
        sources = _names([f"{count} from {lender}" for lender, count in burst.borrowed.items()])
        lenders = [f"{lender} (up to {graph.edge_capacity(lender, node, instance_type)})"
                   for lender in graph.lenders(node, instance_type)]
        out.append(("burst", f"When the other shares are idle it can burst to {_amount(burst.total, instance_type)}: "
                             f"its own {burst.own} plus {sources}. It can borrow {instance_type} from "
                             f"{_names(lenders)}, first come first served among borrowers."))
    borrowers = [b for b in graph.borrowers(node, instance_type) if graph.can_flow(node, b, instance_type)]
    if share.strategy == "RESERVE":
        out.append(("lends", f"It never lends: idle {instance_type} of {node} stay idle until its own jobs use them."))
    elif borrowers:
        out.append(("lends", f"While idle, its {instance_type} may be lent to {_names(borrowers)}; when a job of "
                             f"{node} then waits, the scheduler preempts their jobs running on borrowed capacity "
                             f"to give it back."))
    else:
        out.append(("lends", f"It lends idle {instance_type}, but no share of its job queue can borrow them."))
    return out


def _preemption_sentences(graph: BorrowGraph, node: str, summary: ShareSummary) -> list[Sentence]:
    share = graph.share(node)
    out: list[Sentence] = []
    reclaimers = [other for other in summary.preempted_by if other != node]
    if reclaimers:
        out.append(("taken back", f"{_names(reclaimers)} can take capacity back from it: when a job of "
                                  f"{'theirs' if len(reclaimers) > 1 else reclaimers[0]} waits for capacity {node} "
                                  f"borrowed from it, {node}'s jobs running above its own limit "
                                  f"are preempted (back to RUNNABLE). Jobs within its own limit are never taken "
                                  f"by another share."))
    else:
        out.append(("taken back", f"No other share can take capacity back from {node}: it never runs on borrowed "
                                  f"capacity."))
    if share.in_share_preemption:
        out.append(("preemption", f"In-share preemption is on: a higher-priority job of {node} preempts its "
                                  f"lower-priority jobs that are scheduled, starting or running."))
    else:
        out.append(("preemption", f"In-share preemption is off: a higher-priority job of {node} waits instead of "
                                  f"preempting the share's own jobs."))
    if summary.preempted_by:
        who = _names([("by a higher-priority job of its own" if other == node else f"by {other} (reclaim)")
                      for other in summary.preempted_by])
        out.append(("preemption", f"So its jobs can be preempted: {who}."))
    else:
        out.append(("preemption", "So its jobs are never preempted."))
    return out


def sentences(output: ExplainOutput) -> list[Sentence]:
    """Every sentence of the share: what it can count on, then (``explain --scenario``) why its jobs waited."""
    out = explain_share(output.topology, output.share, output.report)
    if output.waits is not None:
        from policy_engine.simulation.results.wait_advice import wait_sentences

        out += wait_sentences(output.topology, output.waits, output.share, output.backfill)
    if output.plan_account is not None:  # why the plans it uses sat idle, what their hazards cost it
        from policy_engine.simulation.results.plan_advice import plan_sentences

        out += plan_sentences(output.topology, output.plan_account, output.share)
    return out
