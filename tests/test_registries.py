"""The registries behave alike: each refuses a second entry of a name at registration, naming it, and
keeps the first (CONTRIBUTING, "The registries")."""

from __future__ import annotations

import pytest

from policy_engine.adapters.endpoint.handlers.registry import operation
from policy_engine.adapters.endpoint.operations import HANDLERS
from policy_engine.analysis.rules import REGISTRY, rule
from policy_engine.cli.app import COMMANDS, command_table
from policy_engine.foundation.findings import Severity
from policy_engine.reports.kit.formats import FormatTable, OutputFormat
from policy_engine.simulation.core.preemption import POLICIES, LowestPriorityNewestFirst, register_policy


def test_a_command_given_twice_is_refused():
    with pytest.raises(ValueError, match="command 'check' registered twice"):
        command_table(("check", "a.module", "one"), ("check", "b.module", "two"))
    assert command_table(("a", "m.a", "one"), ("b", "m.b", "two")) == {"a": ("m.a", "one"), "b": ("m.b", "two")}
    assert set(COMMANDS) >= {"check", "diff", "drift"}


def test_a_rule_id_given_twice_is_refused():
    first = REGISTRY["BQ001"]
    with pytest.raises(ValueError, match="rule BQ001 registered twice"):
        rule("BQ001", Severity.ERROR, "another")(lambda context: iter(()))
    assert REGISTRY["BQ001"] is first


def test_an_endpoint_operation_given_twice_is_refused():
    first = HANDLERS["SubmitServiceJob"]
    with pytest.raises(ValueError, match="operation SubmitServiceJob registered twice"):
        operation("SubmitServiceJob", mutating=True)(lambda service, params: {})
    assert HANDLERS["SubmitServiceJob"] is first


def test_a_format_given_twice_is_refused():
    with pytest.raises(ValueError, match="unique"):
        FormatTable("demo", [OutputFormat("json", "one", "policy_engine.reports.check.json"),
                             OutputFormat("json", "two", "policy_engine.reports.diff.json")])


def test_a_victim_policy_given_twice_is_refused():
    first = POLICIES[LowestPriorityNewestFirst.name]
    with pytest.raises(ValueError, match="victim policy 'lowest-priority-newest' registered twice"):
        register_policy(LowestPriorityNewestFirst())
    assert POLICIES[LowestPriorityNewestFirst.name] is first
