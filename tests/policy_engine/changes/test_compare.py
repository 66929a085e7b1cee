"""Per kind of change: each field, add, remove, rename, move, guarantees lost and regained, findings."""

from __future__ import annotations

import pytest

from policy_engine.changes import compare
from policy_engine.changes.report import ChangeStatus, HazardKind
from policy_engine.foundation.diagnostics import ObjectKind, ObjectRef
from policy_engine.foundation.model import JobQueue, ServiceEnvironment, Topology
from policy_engine.inputs.loading import LoadError
from policy_engine.inputs.renames import Renames, parse_renames
from tests.builders import GPU, guarantee, share, topology

BASE = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("B", 2, "LEND"), share("C", 1))


def _share(report, name):
    return next(change for change in report.shares if change.name == name)


def _fields(change):
    return {(f.field, f.instance_type): (f.before, f.after) for f in change.changes}


def test_nothing_changes():
    report = compare(BASE, BASE)
    assert report.objects == [] and report.guarantees == [] and report.hazards == []
    assert report.failures() == []


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("strategy", "RESERVE", ("LEND", "RESERVE")),
    ("in_share_preemption", True, (False, True)),
    ("state", "DISABLED", ("ENABLED", "DISABLED")),
    ("tags", {"team": "x"}, ({}, {"team": "x"})),
])
def test_each_share_field(field, value, expected):
    fields = {"strategy": "LEND", field: value}
    head = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("B", 2, **fields), share("C", 1))
    report = compare(BASE, head)
    change = _share(report, "training/B")
    assert change.status == "changed"
    assert _fields(change)[(field, None)] == expected


def test_borrow_limit_changes_ceiling_and_burst():
    head = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=50), share("B", 2, "LEND"), share("C", 1))
    fields = _fields(_share(compare(BASE, head), "training/A"))
    assert fields[("borrow_limit", None)] == (100, 50)
    assert fields[("ceiling", GPU)] == (4, 3)
    assert fields[("max_burst", GPU)] == (4, 3)


def test_lower_limit_changes_guaranteed_burst_and_who_preempts():
    head = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("B", 1, "LEND"), share("C", 1),
                    environment=5)
    report = compare(BASE, head)
    fields = _fields(_share(report, "training/B"))
    assert fields[("limit", GPU)] == (2, 1)
    assert fields[("guaranteed", GPU)] == (2, 1)
    assert _fields(_share(report, "training/A"))[("max_burst", GPU)] == (4, 3)
    assert [h.kind for h in report.hazards] == ["lowered_limit"]


def test_strategy_change_changes_who_preempts_whom():
    head = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("B", 2, "RESERVE"), share("C", 1))
    report = compare(BASE, head)
    assert _fields(_share(report, "training/A"))[("preempted_by", None)] == (["training/B"], [])
    assert _fields(_share(report, "training/B"))[("may_preempt", None)] == (["training/A"], [])


def test_added_and_removed_shares():
    head = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("B", 2, "LEND"), share("D", 1),
                    environment=5)
    report = compare(BASE, head)
    assert {(c.name, c.status) for c in report.shares} >= {("training/C", "removed"), ("training/D", "added")}
    assert [h.name for h in report.hazards if h.kind == "delete"] == ["training/C"]
    added = _fields(_share(report, "training/D"))
    assert added[("limit", GPU)] == (None, 1) and added[("strategy", None)] == (None, "RESERVE")
    assert added[("guaranteed", GPU)] == (None, 1)
    assert _fields(_share(report, "training/C"))[("limit", GPU)] == (1, None)


def test_unlimited_ceiling_is_named():
    head = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=-1), share("B", 2, "LEND"), share("C", 1))
    assert _fields(_share(compare(BASE, head), "training/A"))[("ceiling", GPU)] == (4, "unlimited")


def test_rename_is_declared_not_guessed():
    head = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("B2", 2, "LEND"), share("C", 1))
    guessed = compare(BASE, head)
    assert {c.status for c in guessed.shares if c.name in ("training/B", "training/B2")} == {"removed", "added"}
    renames = parse_renames(["training/B=training/B2"], BASE, head)
    report = compare(BASE, head, renames)
    change = _share(report, "training/B2")
    assert change.status == "renamed" and change.renamed_from == "training/B" and change.changes == ()
    # A's lender is renamed, not lost
    assert not any(c.name == "training/A" for c in report.shares)
    replaced = [h for h in report.hazards if h.kind == "replace"]
    assert [(h.name, h.properties) for h in replaced] == [("training/B2", ("QuotaShareName",))]


def test_move_between_queues():
    base = Topology(
        service_environments=(ServiceEnvironment(name="e1", capacity={GPU: 2}),
                              ServiceEnvironment(name="e2", capacity={GPU: 2})),
        job_queues=(JobQueue(name="q1", service_environment="e1", shares=(share("S", 1), share("T", 1))),
                    JobQueue(name="q2", service_environment="e2", shares=(share("U", 1),))))
    head = base.model_copy(update={"job_queues": (
        JobQueue(name="q1", service_environment="e1", shares=(share("T", 1),)),
        JobQueue(name="q2", service_environment="e2", shares=(share("U", 1), share("S", 1))))})
    report = compare(base, head, parse_renames(["q1/S=q2/S"], base, head))
    assert _share(report, "q2/S").status == "renamed"
    hazard = next(h for h in report.hazards if h.kind == "replace")
    assert hazard.properties == ("JobQueue",) and "moved" in hazard.message


def test_added_queues_are_listed_in_head_order():
    queue = BASE.job_queues[0]
    added = tuple(queue.model_copy(update={"name": name, "shares": ()}) for name in ("zeta", "alpha", "mid"))
    head = BASE.model_copy(update={"job_queues": (*added[:1], queue, *added[1:])})
    report = compare(BASE, head)
    queues = [(c.name, c.status) for c in report.objects if c.kind == "job_queue"]
    assert queues == [("zeta", "added"), ("alpha", "added"), ("mid", "added")]


def test_queue_rename_replaces_queue_policy_and_every_share():
    head = BASE.model_copy(update={"job_queues": (BASE.job_queues[0].model_copy(update={"name": "train2"}),)})
    report = compare(BASE, head, parse_renames(["training=train2"], BASE, head))
    replaced = {(h.resource_type, h.object) for h in report.hazards if h.kind is HazardKind.REPLACE}
    assert replaced == {("AWS::Batch::JobQueue", ObjectRef.of_queue("train2")),
                        ("AWS::Batch::SchedulingPolicy",
                         ObjectRef.of_scheduling_policy("train2", "train2-quota-policy")),
                        *(("AWS::Batch::QuotaShare", ObjectRef.of_share("train2", s)) for s in "ABC")}
    assert {h.name for h in report.hazards if h.kind is HazardKind.REPLACE} == {
        "train2", "train2-quota-policy", "train2/A", "train2/B", "train2/C"}  # what the reports and JSON show
    assert all(c.status is ChangeStatus.RENAMED and c.kind is ObjectKind.SHARE for c in report.shares)


def test_environment_capacity_cut_and_queue_fields():
    head = BASE.model_copy(update={
        "service_environments": (ServiceEnvironment(name="gpu-env", capacity={GPU: 4}),),
        "job_queues": (BASE.job_queues[0].model_copy(update={"priority": 5}),)})
    report = compare(BASE, head)
    env = next(c for c in report.objects if c.kind == "service_environment")
    assert _fields(env)[("capacity", GPU)] == (5, 4)
    queue = next(c for c in report.objects if c.kind == "job_queue")
    assert _fields(queue)[("priority", None)] == (1, 5)
    assert any(h.kind == "capacity_cut" for h in report.hazards)


def test_guarantee_lost_with_counterexample_then_regained():
    promises = [guarantee("training/B", min_capacity={GPU: 2})]
    base = topology(share("A", 2, "LEND_AND_BORROW"), share("B", 2, "LEND"), guarantees=promises)
    lowered = topology(share("A", 2, "LEND_AND_BORROW"), share("B", 1, "LEND"), guarantees=promises)
    lost = compare(base, lowered)
    [change] = lost.guarantees
    assert (change.share, change.property, change.instance_type) == ("training/B", "min_capacity", GPU)
    assert change.lost and "promised 2" in change.message
    assert change.counterexample == {"training/A": {GPU: 2}, "training/B": {GPU: 1}}
    assert "guarantee" in " ".join(lost.failures())
    # reported once: under guarantees lost, not again as a new BQ401 finding
    assert lost.new_findings == [] and lost.to_dict()["summary"]["guarantees_lost"] == 1
    regained = compare(lowered, base)
    assert regained.guarantees[0].regained and not regained.lost_guarantees
    assert [f.rule for f in regained.resolved_findings] == ["BQ401"]
    assert "guarantee" not in " ".join(regained.failures())


def test_never_preempted_lost():
    promises = [guarantee("training/C", never_preempted=True)]
    base = topology(share("B", 2, "LEND"), share("C", 1), guarantees=promises)
    head = topology(share("B", 2, "LEND"), share("C", 1, in_share_preemption=True), guarantees=promises)
    [change] = compare(base, head).guarantees
    assert change.lost and change.property == "never_preempted" and change.instance_type is None


def test_fail_on_selects_what_fails():
    head = topology(share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("B", 1, "LEND"), share("C", 1))
    report = compare(BASE, head)
    assert report.failures(("hazard",)) and not report.failures(("guarantee",)) and not report.failures(())


def test_bad_renames_are_all_reported():
    with pytest.raises(LoadError) as error:
        parse_renames(["nothing", "training/X=training/A", "training/A=Z", "training/A=training/A"], BASE, BASE)
    # one line per bad --rename, whatever is wrong with it (X is unknown and A exists already: one line)
    assert len(error.value.problems) == 4
    assert error.value.problems[1] == ("--rename training/X=training/A: BASE has no quota share training/X; BASE "
                                       "already has a quota share training/A, so it cannot be the new name of "
                                       "training/X")


def test_renames_map_shares_of_a_renamed_queue():
    assert Renames(queues={"q": "r"}).share("q/S") == "r/S"
    assert Renames(shares={"q/S": "x/T"}, queues={"q": "r"}).share("q/S") == "x/T"
