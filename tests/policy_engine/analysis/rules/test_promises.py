"""BQ501/BQ502: rules about a change, evaluated by ``diff`` only; ``check`` never reports them."""

from __future__ import annotations

import pytest

from policy_engine.analysis.rules import REGISTRY
from policy_engine.changes import compare
from tests.builders import GPU, guarantee, run_rule, share, topology

SHARES = (share("A", 4, "LEND"), share("B", 4, "LEND"))
BASE = topology(*SHARES, guarantees=[guarantee("training/A", min_capacity={GPU: 4}, never_preempted=True)])


@pytest.mark.parametrize(("rule", "head", "kinds"), [
    ("BQ501", topology(*SHARES, guarantees=[guarantee("training/A", min_capacity={GPU: 3}, never_preempted=True)]),
     ["weakened"]),
    ("BQ502", topology(*SHARES, guarantees=[guarantee("training/A", min_capacity={GPU: 4})]),
     ["never_preempted_removed"]),
    ("BQ502", topology(*SHARES), ["removed", "never_preempted_removed"]),
])
def test_failing_change(rule, head, kinds):
    promises = compare(BASE, head).promises
    assert [p.kind.value for p in promises] == kinds
    assert {p.kind.rule for p in promises} == {rule}
    assert all(p.share == "training/A" and p.failing for p in promises)
    assert REGISTRY[rule].diff_only and REGISTRY[rule].can_suppress(REGISTRY[rule].severity)


@pytest.mark.parametrize("rule", ["BQ501", "BQ502"])
def test_passing_and_never_reported_by_check(rule):
    stronger = topology(*SHARES, guarantees=[guarantee("training/A", min_capacity={GPU: 4}, never_preempted=True),
                                             guarantee("training/B", min_capacity={GPU: 2})])
    assert [p for p in compare(BASE, stronger).promises if p.kind.rule] == []
    assert run_rule(rule, BASE) == [] and run_rule(rule, stronger) == []
