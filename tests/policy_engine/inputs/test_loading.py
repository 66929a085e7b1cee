"""Loading: the file format means what the Python model means, and bad input is named precisely."""

from __future__ import annotations

import json

import pytest

from policy_engine.foundation.diagnostics import Named, Problem
from policy_engine.inputs.examples import EXAMPLE_YAML, example_topology
from policy_engine.inputs.loading import LoadError, load_topology, topology_from_data

GOOD = """\
service_environments:
  - name: gpu-env
    capacity: {ml.g5.xlarge: 3}
job_queues:
  - name: training
    service_environment: gpu-env
    shares:
      - name: QS1
        capacity: {ml.g5.xlarge: 1}
        strategy: LEND_AND_BORROW
        borrow_limit: 200
        in_share_preemption: true
guarantees:
  - share: training/QS1
    min_capacity: {ml.g5.xlarge: 1}
    burst_capacity: {ml.g5.xlarge: 3}
    never_preempted: true
"""


def problems_of(write_file, text: str, name: str = "t.yaml") -> list[str]:
    with pytest.raises(LoadError) as caught:
        load_topology(write_file(name, text))
    return caught.value.problems


def test_issue_example_loads(write_file):
    topology = load_topology(write_file("t.yaml", GOOD))
    share = topology.job_queues[0].shares[0]
    assert share.strategy == "LEND_AND_BORROW"
    assert share.borrow_limit == 200
    assert share.ceiling("ml.g5.xlarge") == 3
    assert topology.guarantees[0].burst_capacity == {"ml.g5.xlarge": 3}


def test_embedded_yaml_equals_python_example():
    assert load_topology(EXAMPLE_YAML) == example_topology()


def test_json_means_the_same_as_yaml(write_file):
    as_json = json.dumps(example_topology().model_dump())
    assert load_topology(write_file("t.json", as_json)) == example_topology()


def test_typo_is_named_with_suggestion_and_line(write_file):
    (problem,) = problems_of(write_file, GOOD.replace("strategy:", "stratgy:"))
    assert problem.startswith("t.yaml") or "t.yaml:" in problem
    assert ":10:" in problem  # the line of the share's mapping key
    assert "job_queues[training].shares[QS1]" in problem
    assert "unknown key 'stratgy'" in problem and "did you mean 'strategy'" in problem


def test_all_problems_are_reported_at_once(write_file):
    text = GOOD.replace("capacity: {ml.g5.xlarge: 3}", 'capacity: {ml.g5.xlarge: "3"}', 1)
    text = text.replace("in_share_preemption: true", "in_share_preemption: yes-please")
    text = text.replace("strategy: LEND_AND_BORROW", "strategy: BORROW")
    problems = problems_of(write_file, text)
    assert len(problems) == 3, problems
    assert any("service_environments[gpu-env].capacity.ml.g5.xlarge" in p and "integer" in p for p in problems)
    assert any("shares[QS1].strategy" in p and "BORROW" in p for p in problems)
    assert any("shares[QS1].in_share_preemption" in p for p in problems)


def test_yaml_syntax_error_names_the_line(write_file):
    (problem,) = problems_of(write_file, "service_environments:\n  - name: [unclosed\n")
    assert "YAML syntax error" in problem and "t.yaml:" in problem


def test_duplicate_yaml_keys_are_not_silently_dropped(write_file):
    text = GOOD.replace("strategy: LEND_AND_BORROW", "strategy: LEND_AND_BORROW\n        strategy: LEND")
    (problem,) = problems_of(write_file, text)
    assert "duplicate key 'strategy'" in problem


def test_duplicate_names_and_dangling_references(write_file):
    text = GOOD.replace("service_environment: gpu-env", "service_environment: gpu-nv")
    text = text.replace("share: training/QS1", "share: training/QS9")
    text += "  - share: QS1\n  - share: QS1\n"
    text = text.replace(
        "        in_share_preemption: true\n",
        "        in_share_preemption: true\n      - name: QS1\n        capacity: {a: 1}\n        strategy: LEND\n",
    )
    text = text.replace(
        "guarantees:\n",
        "  - name: inference\n    service_environment: gpu-env\n    shares:\n"
        "      - {name: QS1, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}\nguarantees:\n",
    )
    problems = problems_of(write_file, text)
    assert any("job_queues[training].shares[1]: duplicate name 'QS1'" in p for p in problems)
    assert any("no service environment named 'gpu-nv'" in p for p in problems)
    assert any("no quota share 'training/QS9'" in p for p in problems)
    assert any("'QS1' is ambiguous (training/QS1, inference/QS1)" in p for p in problems)


def test_type_and_structure_problems_are_reported_together(write_file):
    text = GOOD.replace("strategy:", "stratgy:").replace("service_environment: gpu-env", "service_environment: x")
    problems = problems_of(write_file, text)
    assert len(problems) == 2
    assert "no service environment named 'x'" in problems[0] and "unknown key 'stratgy'" in problems[1]


def test_a_duplicate_key_does_not_hide_other_problems_and_lines_are_in_file_order(write_file):
    text = GOOD.replace("capacity: {ml.g5.xlarge: 3}", "capacty: {ml.g5.xlarge: 3}", 1)
    text = text.replace("service_environment: gpu-env", "service_environment: nowhere")
    text = text.replace("strategy: LEND_AND_BORROW", "strategy: LEND_AND_BORROW\n        strategy: LEND")
    problems = problems_of(write_file, text)
    assert [p.split(": ", 2)[1:] for p in problems] == [
        ["service_environments[gpu-env].capacty", "unknown key 'capacty' (did you mean 'capacity'?)"],
        ["job_queues[training].service_environment",
         "no service environment named 'nowhere' (known: gpu-env)"],
        ["job_queues[training].shares[QS1]", "duplicate key 'strategy'"],
    ]
    numbers = [int(p.split(":")[1]) for p in problems]
    assert numbers == sorted(numbers)


def test_json_duplicate_keys_name_the_object_and_line(write_file):
    as_json = json.dumps(example_topology().model_dump(), indent=2)
    as_json = as_json.replace('"strategy": "LEND",', '"strategy": "LEND",\n "strategy": "RESERVE",', 1)
    (problem,) = problems_of(write_file, as_json, name="t.json")
    assert ": job_queues[training].shares[QS2]: duplicate key 'strategy'" in problem
    assert problem.split(":")[1].isdigit()


def test_values_are_shown_as_written_and_an_empty_file_is_named(write_file):
    problems = problems_of(write_file, GOOD.replace("name: gpu-env", "name: true", 1))
    assert any(p.endswith("service_environments[0].name: input should be a valid string, got true") for p in problems)
    (problem,) = problems_of(write_file, "# nothing yet\n")
    assert problem.endswith("the file is empty; expected a mapping with service_environments and job_queues")


def test_top_level_must_be_a_mapping():
    with pytest.raises(LoadError, match="expected a mapping"):
        topology_from_data(["not", "a", "mapping"], "x.yaml")


def test_missing_file_and_unknown_suffix(tmp_path):
    with pytest.raises(LoadError, match="cannot read file"):
        load_topology(tmp_path / "nope.yaml")
    with pytest.raises(LoadError, match="unsupported file type"):
        load_topology(tmp_path / "t.toml")


def test_python_module_topology(write_file):
    module = write_file(
        "topo.py",
        "from policy_engine.inputs.examples import example_topology\nTOPOLOGY = example_topology()\n",
    )
    assert load_topology(module) == example_topology()
    broken = write_file("broken.py", "raise RuntimeError('boom')\n")
    with pytest.raises(LoadError, match="RuntimeError: boom"):
        load_topology(broken)


SHARES_WITH_MERGE = """\
service_environments:
  - name: e
    capacity: {ml.g5.xlarge: 3}
job_queues:
  - name: q
    service_environment: e
    shares:
      - &base {name: s1, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
      - {<<: *base, name: s2, strategy: RESERVE}
"""


def test_yaml_merge_keys_work_and_explicit_keys_win(write_file):
    shares = load_topology(write_file("t.yaml", SHARES_WITH_MERGE)).job_queues[0].shares
    assert [(s.name, s.strategy, s.capacity) for s in shares] == [
        ("s1", "LEND", {"ml.g5.xlarge": 1}),
        ("s2", "RESERVE", {"ml.g5.xlarge": 1}),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("service_environments:\n  - name: !foo e\n", ":2: service_environments[0].name: cannot read value"),
        ("a: &x [*x]\n", ":1: a[0]: recursive alias"),
        ("service_environments:\n  - name: e\n    ? [a, b]\n    : 1\n", "a mapping key must be a plain value"),
        ("guarantees:\n", ":1: guarantees: input should be a valid list, got an empty value"),
    ],
)
def test_unusual_yaml_is_one_line_not_a_traceback(write_file, text, expected):
    problems = problems_of(write_file, text)
    assert any(expected in problem for problem in problems), problems
    assert all(problem.startswith(str(write_file("t.yaml", text))) for problem in problems)


def test_json_errors_name_the_line(write_file):
    as_json = json.dumps(example_topology().model_dump(), indent=2).replace('"strategy"', '"stratgy"', 1)
    (problem,) = problems_of(write_file, as_json, name="t.json")
    line = next(n for n, text in enumerate(as_json.splitlines(), 1) if '"stratgy"' in text)
    assert f"t.json:{line}: job_queues[training].shares[QS1].stratgy: unknown key" in problem


def test_python_module_errors_are_lines_at_the_users_line(write_file):
    calling = write_file("calling.py", "def TOPOLOGY():\n    raise RuntimeError('inside')\n")
    with pytest.raises(LoadError) as caught:
        load_topology(calling)
    assert caught.value.problems == [f"{calling}:2: calling TOPOLOGY() failed: RuntimeError: inside"]
    invalid = write_file(
        "invalid.py",
        "from policy_engine.foundation.model import ServiceEnvironment\n\n"
        "ENV = ServiceEnvironment(name='e', capacity={'ml.g5.xlarge': 3}, colour=1, state='on')\n",
    )
    with pytest.raises(LoadError) as caught:
        load_topology(invalid)
    assert caught.value.problems == [
        f"{invalid}:3: ServiceEnvironment.state: input should be 'ENABLED' or 'DISABLED', got 'on'",
        f"{invalid}:3: ServiceEnvironment.colour: unknown key 'colour'",
    ]


def test_load_problems_are_data_with_file_line_and_path(write_file):
    """Callers read where a problem is from the ``Problem`` itself; the rendered line is the same text."""
    text = GOOD.replace("strategy: LEND_AND_BORROW", "strategy: LEND_AND_BORROWS").replace(
        "  - name: training\n", "  - name: \"team.a: x\"\n").replace("share: training/QS1", "share: nobody")
    path = write_file("t.yaml", text)
    with pytest.raises(LoadError) as caught:
        load_topology(path)
    located = caught.value.located
    assert all(isinstance(problem, Problem) for problem in located)
    strategy, guarantee = located
    assert (strategy.source, strategy.line) == (str(path), 10)
    assert strategy.path == ("job_queues", Named(0, "team.a: x"), "shares", Named(0, "QS1"), "strategy")
    assert guarantee.path == ("guarantees", 0, "share") and guarantee.line == 14
    assert guarantee.message == "no quota share 'nobody' (write QUEUE/SHARE or a unique SHARE name)"
    assert caught.value.problems == [str(problem) for problem in located]
    assert caught.value.problems[0].startswith(f"{path}:10: job_queues[team.a: x].shares[QS1].strategy: ")
