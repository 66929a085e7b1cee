"""Run one rule over a topology and look at what it found."""

from __future__ import annotations

from policy_engine.findings import Finding
from policy_engine.model import Topology
from policy_engine.rules import REGISTRY, Context


def run(rule_id: str, topology: Topology) -> list[Finding]:
    return REGISTRY[rule_id].run(Context(topology))
