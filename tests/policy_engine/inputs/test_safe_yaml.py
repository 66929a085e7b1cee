"""YAML and JSON as their authors mean them: 1.2 scalars, bounded aliases and nesting, finite numbers only."""

from __future__ import annotations

import pytest
import yaml

from policy_engine.inputs import safe_yaml
from policy_engine.inputs.examples import EXAMPLE_YAML
from policy_engine.inputs.loading import LoadError, load_topology, read_data

TOPOLOGY = """\
service_environments:
  - name: env
    capacity: {ml.g5.xlarge: CAPACITY}
job_queues:
  - name: training
    service_environment: env
    shares:
      - name: NAME
        capacity: {ml.g5.xlarge: 1}
        strategy: LEND
"""

BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
)


def _load(write_file, text: str, name: str = "t.yaml"):
    return load_topology(write_file(name, text))


def _problems(write_file, text: str, name: str = "t.yaml") -> list[str]:
    with pytest.raises(LoadError) as error:
        _load(write_file, text, name)
    return error.value.problems


def test_yaml_1_1_surprises_read_as_yaml_1_2(write_file):
    topology = _load(write_file, TOPOLOGY.replace("CAPACITY", "010").replace("NAME", "NO"))
    assert topology.environment("env").capacity["ml.g5.xlarge"] == 10  # not octal 8
    assert topology.job_queues[0].shares[0].name == "NO"  # not False


def test_sexagesimal_and_yes_are_text_reported_where_a_number_or_bool_is_expected(write_file):
    problems = _problems(write_file, TOPOLOGY.replace("CAPACITY", "1:30").replace("NAME", "QS1"))
    assert len(problems) == 1 and "'1:30'" in problems[0] and "integer" in problems[0]
    text = TOPOLOGY.replace("CAPACITY", "1").replace("NAME", "QS1") + "allow_oversubscription: yes\n"
    problems = _problems(write_file, text)
    assert len(problems) == 1 and "allow_oversubscription" in problems[0] and "'yes'" in problems[0]


def test_billion_laughs_is_refused_with_one_line_in_topologies_and_scenarios(write_file):
    assert len(BILLION_LAUGHS) < 1024
    problems = _problems(write_file, BILLION_LAUGHS)
    assert len(problems) == 1 and "aliases expand the document" in problems[0]
    with pytest.raises(LoadError) as error:
        read_data(write_file("scenario.yaml", BILLION_LAUGHS))
    assert "aliases expand the document" in error.value.problems[0]


def test_aliases_within_the_budget_still_work(write_file):
    text = EXAMPLE_YAML.read_text(encoding="utf-8")
    assert load_topology(write_file("example.yaml", text)) == load_topology(EXAMPLE_YAML)
    merged = "base: &base {x: 1, y: 2}\nitems: [{<<: *base, y: 3}, *base]\n"
    data, _ = read_data(write_file("m.yaml", merged))
    assert data["items"] == [{"x": 1, "y": 3}, {"x": 1, "y": 2}]


@pytest.mark.parametrize("name, text", [
    ("deep.yaml", "[" * 5000 + "]" * 5000),
    ("deep-block.yaml", "".join(f"{'  ' * i}- \n" for i in range(2000)) + "  " * 2000 + "- x\n"),
    ("deep.json", "[" * 100_000 + "]" * 100_000),
    ("shallow-but-too-deep.json", "[" * 500 + "]" * 500),
])
def test_deep_nesting_is_one_line(write_file, name, text):
    problems = _problems(write_file, text, name)
    assert len(problems) == 1 and ("deep" in problems[0] or "nesting" in problems[0]), problems


@pytest.mark.parametrize("name, text, expected", [
    ("huge.yaml", "a: " + "9" * 5000, "integer of 5,000 digits is too large"),
    ("huge.json", '{"a": ' + "9" * 5000 + "}", "integer of 5,000 digits is too large"),
    ("overflow.yaml", "a: 1.0e999", "not a finite number"),
    ("overflow.json", '{"a": 1e999}', "not a finite number"),
    ("nan.yaml", "a: .nan", "not a finite number"),
    ("inf.yaml", "a: -.inf", "not a finite number"),
    ("nan.json", '{"a": NaN}', "not a number JSON allows"),
    ("inf.json", '{"a": -Infinity}', "not a number JSON allows"),
])
def test_huge_and_non_finite_numbers_are_one_line(write_file, name, text, expected):
    problems = _problems(write_file, text, name)
    assert any(expected in problem for problem in problems), problems
    assert all(problem.startswith(str(write_file(name, text))) for problem in problems)


def test_dump_quotes_text_that_yaml_1_2_would_read_as_another_type():
    data = {"names": ["1e3", "0o17", "010", "NO", "true", "null", "1:30", "plain"], "n": 3}
    text = safe_yaml.dump(data)
    assert yaml.safe_load(text) == data  # PyYAML (1.1) agrees
    loaded = safe_yaml.compose(text)
    names = next(value for key, value in loaded.value if key.value == "names")
    assert [safe_yaml.scalar(node) for node in names.value] == data["names"]


def test_a_second_document_and_undefined_aliases_are_reported(write_file):
    assert "single document" in _problems(write_file, "a: 1\n---\nb: 2\n")[0]
    assert "undefined alias" in _problems(write_file, "a: *nowhere\n")[0]


def test_generate_writes_a_scenario_that_reads_back_under_yaml_1_2(tmp_path):
    from click.testing import CliRunner

    from policy_engine.cli.app import main

    topology = tmp_path / "t.yaml"
    topology.write_text(TOPOLOGY.replace("CAPACITY", "2").replace("NAME", "'1e3'"))
    jobs, scenario = tmp_path / "jobs.csv", tmp_path / "s.yaml"
    assert CliRunner().invoke(main, ["generate", str(topology), "-o", str(jobs), "--jobs", "5",
                                     "--scenario", str(scenario)]).exit_code == 0
    inline = tmp_path / "inline.yaml"
    inline.write_text(safe_yaml.dump({"topology": yaml.safe_load(topology.read_text()), "jobs": "jobs.csv"}))
    for path in (scenario, inline):
        result = CliRunner().invoke(main, ["simulate", str(path), "--format", "json"])
        assert result.exit_code == 0, result.stderr


def test_readme_states_the_limits_the_reader_applies():
    from pathlib import Path

    readme = " ".join((Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8").split())
    assert f"max({safe_yaml.MIN_EXPANSION_BUDGET:,}, 4 x its nodes)" in readme
    assert f"nesting deeper than {safe_yaml.MAX_DEPTH} levels" in readme
    assert f"integers longer than {safe_yaml.MAX_INTEGER_DIGITS} digits" in readme


def test_readme_states_the_analysis_caps():
    from pathlib import Path

    from policy_engine.inputs import loading
    from policy_engine.reports.graph import borrow_graph as borrow_graph_render

    readme = " ".join((Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8").split())
    assert (f"more than {loading.MAX_QUEUES} job queues or service environments, {loading.MAX_SHARES_PER_QUEUE} "
            f"quota shares in a job queue, {loading.MAX_SHARES:,} shares in all or {loading.MAX_INSTANCE_TYPES} "
            "instance types in one capacity") in readme
    assert f"draws at most {borrow_graph_render.MAX_DOT_EDGES:,} edges" in readme


def test_scenarios_read_yaml_1_2_too(write_file):
    from policy_engine.simulation.scenarios.workload import load_scenario

    write_file("topology.yaml", EXAMPLE_YAML.read_text(encoding="utf-8"))
    scenario = load_scenario(write_file("s.yaml", "topology: topology.yaml\n"
                                                  "jobs: [{name: NO, share: QS1, priority: 010, duration: 1e3}]\n"))
    assert [(job.name, job.priority, job.duration) for job in scenario.jobs] == [("NO", 10, 1000.0)]
    with pytest.raises(LoadError) as error:
        load_scenario(write_file("s.yaml", "topology: topology.yaml\nsettings: {backfill: yes}\n"
                                           "jobs: [{name: a, share: QS1, duration: 1:30}]\n"))
    assert any("settings.backfill: must be true or false, got 'yes'" in p for p in error.value.problems)
    assert any("jobs[a].duration: must be a number, got '1:30'" in p for p in error.value.problems)


def test_import_and_snapshot_write_names_that_read_back_under_yaml_1_2(tmp_path):
    from policy_engine.adapters.aws.snapshot import Snapshot
    from policy_engine.adapters.aws.topology_file import topology_text
    from policy_engine.inputs.examples import example_topology

    topology = example_topology()
    queue = topology.job_queues[0]
    shares = tuple(share.model_copy(update={"name": name, "tags": {"team": tag}})
                   for share, name, tag in zip(queue.shares, ("1e3", "0o17", "NO"), ("1:30", "010", "true"),
                                               strict=True))
    renamed = topology.model_copy(update={"job_queues": (queue.model_copy(update={"shares": shares}),),
                                          "guarantees": ()})
    path = tmp_path / "imported.yaml"
    path.write_text(topology_text(renamed, path), encoding="utf-8")
    assert load_topology(path) == renamed
    snapshot = Snapshot(queue="training", region="eu-west-1", taken_at_ms=0,
                        topology=renamed.model_dump(mode="json", exclude_defaults=True),
                        jobs=[{"name": "1e3", "share": "training/1e3", "duration": 60}], estimates=["assumed"])
    data, _ = read_data(write_file_text(tmp_path / "snapshot.yaml", snapshot.to_yaml()))
    assert data["jobs"][0]["name"] == "1e3" and data["topology"]["job_queues"][0]["shares"][0]["name"] == "1e3"


def write_file_text(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path
