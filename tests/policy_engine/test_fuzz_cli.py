"""The fuzz campaign's share of the normal suite: mutated topology, scenario and CSV files plus the hostile corpus,
through the CLI entry point in-process. Zero tracebacks, zero runs over 10 s, exit codes only 0, 1 or 2.

``benchmarks/fuzz_bench.py`` runs the same harness over 10,000+ inputs and prints its figures.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.policy_engine import fuzz

FUZZ = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _assert_behaved(outcomes: list[fuzz.Outcome], data: bytes = b"") -> None:
    failures = [f"{' '.join(o.args[:2])}: {o.problem}" for o in outcomes if o.problem]
    assert not failures, (failures, data[:3000])


#: Corpus files that are odd but valid: names full of markup (shown literally).
VALID = {"jobs-control-names.csv"}


@pytest.mark.parametrize("kind, path", list(fuzz.corpus()), ids=lambda value: getattr(value, "name", value))
def test_hostile_corpus(kind, path):
    outcomes = fuzz.run_corpus_file(kind, path)
    _assert_behaved(outcomes)
    expected = {0, 1} if path.name in VALID else {2}
    assert {o.exit_code for o in outcomes} <= expected, [(o.args[:2], o.exit_code) for o in outcomes]


def test_the_corpus_covers_every_kind_of_file():
    kinds = {kind for kind, _ in fuzz.corpus()}
    assert kinds == set(fuzz.KINDS)
    assert len(list(fuzz.corpus())) >= 40


@settings(FUZZ, max_examples=120)
@given(kind=st.sampled_from(["topology.yaml", "topology.json"]), rng=st.randoms(use_true_random=False),
       index=st.integers(0, 3))
def test_mutated_topologies(kind, rng, index):
    data = fuzz.mutate(fuzz.SEEDS[kind], rng)
    _assert_behaved(fuzz.run_input(kind, data, index), data)


@settings(FUZZ, max_examples=100)
@given(rng=st.randoms(use_true_random=False))
def test_mutated_scenarios(rng):
    data = fuzz.mutate(fuzz.SEEDS["scenario.yaml"], rng)
    _assert_behaved(fuzz.run_input("scenario.yaml", data), data)


@settings(FUZZ, max_examples=100)
@given(kind=st.sampled_from(["jobs.csv", "jobs.jsonl"]), rng=st.randoms(use_true_random=False))
def test_mutated_job_files(kind, rng):
    data = fuzz.mutate(fuzz.SEEDS[kind], rng)
    _assert_behaved(fuzz.run_input(kind, data), data)


@settings(FUZZ, max_examples=60)
@given(rng=st.randoms(use_true_random=False))
def test_mutated_cloudformation_templates(rng):
    data = fuzz.mutate(fuzz.SEEDS["template.yaml"], rng)
    _assert_behaved(fuzz.run_input("template.yaml", data), data)


@settings(FUZZ, max_examples=40)
@given(rng=st.randoms(use_true_random=False))
def test_mutated_prices_files(rng):
    data = fuzz.mutate(fuzz.SEEDS["prices.yaml"], rng)
    _assert_behaved(fuzz.run_input("prices.yaml", data), data)


def test_the_harness_catches_what_it_must(monkeypatch):
    """A traceback and NaN in JSON output are caught, so a clean campaign means something."""
    assert fuzz.run_cli(["nosuchcommand"]).problem is None  # click's usage error: exit 2, as it should be
    from policy_engine.cli.commands import check

    monkeypatch.setattr(check, "check_topology", lambda topology: 1 / 0)
    assert fuzz.run_cli(["check"]).problem.startswith("traceback: ZeroDivisionError")
    monkeypatch.undo()
    from policy_engine.reports.check import json as check_json

    monkeypatch.setattr(check_json, "render", lambda report, **options: '{"x": NaN}')
    assert "invalid JSON output" in fuzz.run_cli(["check", "--format", "json"]).problem


@settings(FUZZ, max_examples=60)
@given(rng=st.randoms(use_true_random=False))
def test_odd_option_values(rng):
    _assert_behaved(fuzz.run_flags(rng))


@settings(FUZZ, max_examples=40)
@given(rng=st.randoms(use_true_random=False))
def test_mutated_events_files(rng):
    data = fuzz.mutate(fuzz.SEEDS["events.jsonl"], rng)
    _assert_behaved(fuzz.run_input("events.jsonl", data), data)


@settings(FUZZ, max_examples=12)
@given(rng=st.randoms(use_true_random=False))
def test_odd_values_of_the_newer_surfaces(rng):
    """sweep, tune and compare options past their bounds, iam-policy, history --since and serve --events-url."""
    _assert_behaved(fuzz.run_surfaces(rng))


def test_every_output_refuses_hostile_targets_and_leaves_them_as_they_were():
    """A FIFO nobody reads, a device copy, a symlinked folder and planted links: every run exits 2 at once and
    every target (and the file a link points to) is what it was."""
    outcomes = fuzz.run_outputs()
    assert len(outcomes) >= 14
    _assert_behaved(outcomes)
