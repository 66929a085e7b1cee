"""Scenario loading: values must have their type (CSV text must parse exactly); an empty topology is an error."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli import main

TOPOLOGY = Path(__file__).parents[3] / "topologies" / "example.yaml"


def test_yaml_values_must_have_their_type_and_csv_text_must_parse_exactly(tmp_path):
    topo = tmp_path / "topology.yaml"
    topo.write_text(TOPOLOGY.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "s.yaml").write_text("""topology: topology.yaml
jobs:
  - {name: a, share: QS1, priority: "3", duration: 10}
  - {name: b, share: QS1, priority: 2.0, duration: 10}
  - {name: c, share: QS1, submit_at: "1e3", duration: 10}
  - {name: d, share: QS1, duration: 10}
actions:
  - {at: 5, update_priority: {job: d, priority: 5.0}}
""", encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml")])
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = [line.split(": ", 2)[2] for line in out.output.splitlines()]
    assert lines == [
        "jobs[a].priority: must be an integer, got '3' (text, not a number: write it unquoted)",
        "jobs[b].priority: must be an integer, got 2.0",
        "jobs[c].submit_at: must be a number, got '1e3' (text, not a number: write it unquoted)",
        "actions[0].update_priority.priority: must be an integer 0-9999, got 5.0",
    ]
    (tmp_path / "j.csv").write_text("name,share,priority,submit_at,duration\n"
                                    "a,QS1,3,1e3,10\nb,QS1, 3,0,10\nc,QS1,2.0,0,10\nd,QS1,1,1_0,10\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text("topology: topology.yaml\njobs: j.csv\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "c.yaml")])
    assert out.exit_code == 2
    assert [line.split(": ", 2)[2] for line in out.output.splitlines()] == [
        "jobs[b].priority: must be an integer, got ' 3'",
        "jobs[c].priority: must be an integer, got '2.0'",
        "jobs[d].submit_at: must be a number, got '1_0'",
    ]


def test_an_empty_topology_is_an_error(tmp_path):
    (tmp_path / "s.yaml").write_text("topology: {}\njobs: []\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml")])
    assert out.exit_code == 2
    assert out.output.splitlines() == [
        f"error: {tmp_path / 's.yaml'}:1: topology: must not be empty: a path or a mapping with the topology"]


def test_a_victim_policy_that_is_not_a_name_is_one_line(tmp_path):
    (tmp_path / "topology.yaml").write_text(TOPOLOGY.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "s.yaml").write_text("topology: topology.yaml\nsettings: {victim_policy: [a, b]}\njobs: []\n",
                                     encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml")])
    assert out.exit_code == 2
    assert out.output.splitlines() == [
        f"error: {tmp_path / 's.yaml'}:2: settings.victim_policy: unknown victim policy ['a', 'b'] "
        "(known: lowest-priority-newest, fewest-instances)"]


def test_a_duplicate_job_name_is_reported_even_when_either_row_has_other_errors(tmp_path):
    (tmp_path / "s.yaml").write_text(f"""topology: {TOPOLOGY.as_posix()}
jobs:
  - {{name: c, share: QS1, priority: 10000, duration: 10}}
  - {{name: c, share: QS1, instances: 0, duration: 10}}
  - {{name: e, share: QS1, duration: 10}}
  - {{name: e, share: QS1, duration: -1}}
""", encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml")])
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = [line.split(": ", 2)[2] for line in out.output.splitlines()]
    assert "jobs[c].name: duplicate job name 'c'" in lines
    assert "jobs[e].name: duplicate job name 'e'" in lines
    (tmp_path / "j.csv").write_text("name,share,duration\nx,QS1,10\nx,QS1,-1\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text(f"topology: {TOPOLOGY.as_posix()}\njobs: j.csv\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "c.yaml")])
    assert out.exit_code == 2 and "jobs[x].name: duplicate job name 'x'" in out.output
