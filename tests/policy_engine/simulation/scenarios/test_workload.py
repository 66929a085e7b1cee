"""Scenario loading: values must have their type (CSV text must parse exactly); an empty topology is an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs.loading import LoadError
from policy_engine.simulation.core.preemption import POLICIES
from tests.builders import share, simulated_topology

TOPOLOGY = Path(__file__).parents[4] / "topologies" / "example.yaml"


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
        f"(known: {', '.join(POLICIES)})"]


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


DOTTED = """service_environments:
  - {name: env, capacity: {ml.g5.xlarge: 4, ml.p4d.24xlarge: 2}}
job_queues:
  - name: team.a
    service_environment: env
    shares:
      - {name: QS1, capacity: {ml.g5.xlarge: 2, ml.p4d.24xlarge: 1}, strategy: LEND_AND_BORROW}
      - {name: dup, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
  - name: teamb
    service_environment: env
    shares:
      - {name: dup, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
"""


def test_row_problems_are_located_data_whatever_the_names_hold(tmp_path):
    from policy_engine.foundation.diagnostics import Named, Problem
    from policy_engine.simulation.inputs.input_problems import Problems
    from policy_engine.simulation.inputs.job_files import collect_jobs, rows_from_file
    from policy_engine.simulation.inputs.job_rows import ShareIndex
    from policy_engine.simulation.scenarios.workload import load_jobs

    topology_file = tmp_path / "t.yaml"
    topology_file.write_text(DOTTED, encoding="utf-8")
    from policy_engine.inputs.loading import load_topology

    topology = load_topology(topology_file)
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("name,share,duration,instance_type\nj.1,team.a/QS1,10,ml.g5.xlarge\nj.2,dup,10,\n"
                    "j.3,team.a/dup,x,\nj.1,teamb/dup,10,\n", encoding="utf-8")
    problems = Problems()
    shares = ShareIndex(topology)
    found = collect_jobs(rows_from_file(jobs, str(jobs), problems, shares), shares, problems)
    assert [spec.name for spec in found] == ["j.1"]
    assert problems.found == [
        Problem(str(jobs), 3, ("jobs", Named(3, "j.2"), "share"),
                "share 'dup' is ambiguous (team.a/dup, teamb/dup); write QUEUE/SHARE"),
        Problem(str(jobs), 4, ("jobs", Named(4, "j.3"), "duration"), "must be a number, got 'x'"),
        Problem(str(jobs), 5, ("jobs", Named(5, "j.1"), "name"), "duplicate job name 'j.1'"),
    ]
    with pytest.raises(LoadError) as error:  # rendered only at the edge, names with dots intact
        load_jobs(jobs, topology)
    assert error.value.problems[0] == (f"{jobs}:3: jobs[j.2].share: share 'dup' is ambiguous "
                                       "(team.a/dup, teamb/dup); write QUEUE/SHARE")
    assert error.value.located == problems.found  # the caller still has them as data


def test_a_row_names_a_share_through_the_one_resolver(tmp_path):
    from policy_engine.inputs.loading import load_topology
    from policy_engine.simulation.inputs.job_rows import ShareIndex

    topology_file = tmp_path / "t.yaml"
    topology_file.write_text(DOTTED, encoding="utf-8")
    shares = ShareIndex(load_topology(topology_file))
    assert shares.resolve("QS1") == ("team.a/QS1", ("ml.g5.xlarge", "ml.p4d.24xlarge"))
    assert shares.resolve("teamb/dup") == ("teamb/dup", ("ml.g5.xlarge",))
    assert shares.resolve("dup") == "share 'dup' is ambiguous (team.a/dup, teamb/dup); write QUEUE/SHARE"
    assert shares.resolve("team.a/nope") == ("no quota share 'team.a/nope' in the topology "
                                             "(known: team.a/QS1, team.a/dup, teamb/dup)")


def test_a_large_file_read_in_batches_reports_each_problem_on_its_line(tmp_path):
    # 10,000 good rows (more than one fast batch) with a duplicate inside the first batch, one across
    # batches and a broken row between them: every good row kept in order, each problem on its own line
    from policy_engine.foundation.diagnostics import Named, Problem
    from policy_engine.simulation.inputs.fast_csv import CHUNK as _BATCH
    from policy_engine.simulation.inputs.input_problems import Problems
    from policy_engine.simulation.inputs.job_files import collect_jobs, rows_from_file
    from policy_engine.simulation.inputs.job_rows import ShareIndex

    topo = simulated_topology(4, share("A", 2))
    names = [f"j{i}" for i in range(10_000)]
    names[10] = "j3"  # a duplicate within the first batch
    names[_BATCH + 7] = "j5"  # a duplicate in a later batch
    rows = [f"{name},q/A,{i}.5,{i}" for i, name in enumerate(names)]
    rows[100] = "j100,q/A,-1,100"  # a negative duration: the full check reports it
    path = tmp_path / "jobs.csv"
    path.write_text("name,share,duration,submit_at\n" + "\n".join(rows) + "\n", encoding="utf-8")
    problems = Problems()
    shares = ShareIndex(topo)
    found = collect_jobs(rows_from_file(path, str(path), problems, shares), shares, problems)
    line = {index: index + 2 for index in range(len(names))}  # the header is line 1
    assert [problem.line for problem in problems.found] == [line[10], line[100], line[_BATCH + 7]]
    assert problems.found[0] == Problem(str(path), line[10], ("jobs", Named(line[10], "j3"), "name"),
                                        "duplicate job name 'j3'")
    assert problems.found[1].path[-1] == "duration"
    expected = [name for i, name in enumerate(names) if i not in (10, 100, _BATCH + 7)]
    assert [spec.name for spec in found] == expected
    assert found[0].submit_at == 0 and found[0].duration == 0.5 and found[-1].submit_at == 9_999


def test_rows_read_before_an_unreadable_row_are_still_checked(tmp_path):
    # a field over the csv module's limit stops reading on line 6,002: the duplicate on line 5,992 (in the
    # chunk being read when it stopped) is still reported, then the stop
    from policy_engine.simulation.scenarios.workload import load_jobs

    topo = simulated_topology(4, share("A", 2))
    rows = [f"j{i},q/A,{i}.5" for i in range(6_000)]
    rows[5_990] = "j1,q/A,3.5"
    path = tmp_path / "jobs.csv"
    path.write_text("name,share,duration\n" + "\n".join(rows) + f'\nbig,q/A,"{"9" * 200_000}"\n', encoding="utf-8")
    with pytest.raises(LoadError) as error:
        load_jobs(path, topo)
    assert error.value.problems == [f"{path}:5992: jobs[j1].name: duplicate job name 'j1'",
                                    f"{path}:6002: cannot read CSV: field larger than field limit (131072)"]


def test_the_column_check_accepts_exactly_what_the_row_check_does(tmp_path):
    # each odd cell in a chunk of good rows: read a chunk at a time or row by row, the specs (values and
    # their int/float types) and the problems are the same
    from policy_engine.simulation.inputs import fast_csv
    from policy_engine.simulation.scenarios.workload import load_jobs

    topo = simulated_topology(4, share("A", 2))
    odd = ["1e3", "+5", "7", "007", "-0", "1.5e3", "2.", ".5", "1E2", " 3", "3_0", "1e999", "nan", "", "-1",
           '"1,5"', "\u0663", "9" * 40, "9" * 5000]
    header = "name,share,duration,submit_at,instances,priority\n"
    good = [f"k{i},q/A,{i}.25,{i},{'' if i % 2 else 2},{'' if i % 3 else 4}" for i in range(40)]

    def outcome(path):
        try:
            return [(spec, tuple(type(v).__name__ for v in spec)) for spec in load_jobs(path, topo)], []
        except LoadError as error:
            return None, error.problems

    rejected = 0
    for index, cell in enumerate(odd):
        for row in (f"odd,q/A,{cell},1,1,0", f"odd,q/A,1.5,{cell},1,0", f"odd,q/A,1.5,1,{cell},{cell}"):
            path = tmp_path / f"jobs{index}.csv"
            path.write_text(header + "\n".join([*good[:20], row, *good[20:]]) + "\n", encoding="utf-8")
            by_chunk = outcome(path)
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(fast_csv.FastReader, "chunk", lambda self, rows: None)  # row by row only
                by_row = outcome(path)
            assert by_chunk == by_row, row
            rejected += by_chunk[0] is None
    assert rejected >= 10  # the bad cells were reported, not read as something else


def test_count_columns_with_many_distinct_cells_and_long_digits_read_as_row_by_row(tmp_path):
    # above 64 distinct cells a chunk's count column is converted cell by cell rather than looked up, and
    # a chunk leaves long instances and priority cells (65 digits together) to the row check: whichever
    # path reads a row, the specs and the problems are the ones the row check gives
    from policy_engine.simulation.inputs import fast_csv
    from policy_engine.simulation.scenarios.workload import load_jobs

    topo = simulated_topology(4, share("A", 2))
    header = "name,share,duration,submit_at,instances,priority\n"
    good = [f"k{i},q/A,{i}.5,{i},{1 + i % 2},{i}" for i in range(200)]  # 200 distinct priorities
    assert len({row.rsplit(",", 1)[1] for row in good}) > fast_csv._FEW

    def outcome(rows, name):
        path = tmp_path / name
        path.write_text(header + "\n".join(rows) + "\n", encoding="utf-8")
        try:
            return [(spec, tuple(type(v).__name__ for v in spec)) for spec in load_jobs(path, topo)], []
        except LoadError as error:
            return None, [problem.replace(str(path), "F") for problem in error.problems]

    long_instances = "0" * 61 + "1"  # 62 digits, value 1: with 2 or 3 digits of priority, 64 or 65 in all
    odd_rows = [f"odd,q/A,1.5,1,1,{cell}" for cell in ("", "007", " 3", "3_0", "-1", "1e3", "\u0663", "9" * 70)]
    odd_rows += [f"odd,q/A,1.5,1,{long_instances},12", f"odd,q/A,1.5,1,{long_instances},123"]
    odd_rows += [f"odd,q/A,1.5,1,{cell},5" for cell in ("", "0", "02", "9" * 65)]
    read = 0
    for index, row in enumerate(odd_rows):
        rows = [*good[:100], row, *good[100:]]
        by_chunk = outcome(rows, f"chunk{index}.csv")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(fast_csv.FastReader, "chunk", lambda self, rows: None)  # row by row only
            by_row = outcome(rows, f"row{index}.csv")
        assert by_chunk == by_row, row
        read += by_chunk[0] is not None
    assert 3 <= read < len(odd_rows)  # some odd cells were read, the others reported
    plain = outcome(good, "plain.csv")[0]
    assert plain is not None and [spec.priority for spec, _ in plain] == list(range(200))
