"""``batch-quota generate``: sizes only where a share can reach them, scenario paths relative to the
scenario, one line per bad option."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.app import main
from tests.policy_engine.cli.commands.test_input_robustness import GOOD, run

TOPOLOGY = Path(__file__).parents[4] / "topologies" / "example.yaml"


def test_generate_refuses_sizes_no_share_can_reach(tmp_path):
    out = CliRunner().invoke(main, ["generate", str(TOPOLOGY), "-o", str(tmp_path / "j.csv"), "--sizes", "4:1"])
    assert out.exit_code == 2
    lines = out.output.splitlines()
    assert "error: --sizes: training/QS1 ml.g5.xlarge: can reach at most 2 instance(s); no job is drawn for it" in lines
    assert len(lines) == 3 and "Traceback" not in out.output


def test_generate_scenario_paths_are_relative_to_the_scenario_without_resolving_symlinks(tmp_path):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "real.yaml").write_text(TOPOLOGY.read_text(encoding="utf-8"), encoding="utf-8")
    (project / "topologies").mkdir()
    (project / "topologies" / "example.yaml").symlink_to(Path("..") / "data" / "real.yaml")
    (project / "scenarios").mkdir()
    out = CliRunner().invoke(main, [
        "generate", str(project / "topologies" / "example.yaml"), "-o", str(project / "scenarios" / "jobs.csv"),
        "--jobs", "5", "--scenario", str(project / "scenarios" / "gen.yaml")])
    assert out.exit_code == 0, out.output
    text = (project / "scenarios" / "gen.yaml").read_text(encoding="utf-8")
    assert text == "topology: ../topologies/example.yaml\njobs: jobs.csv\n"
    assert str(tmp_path) not in text


def test_priority_and_share_errors_name_their_option_and_an_ambiguous_share_lists_its_candidates(tmp_path):
    out = CliRunner().invoke(main, ["generate", str(TOPOLOGY), "-o", str(tmp_path / "j.csv"),
                                    "--priorities", "99999:1", "--share-priorities", "training/QS1=10000:1"])
    assert out.exit_code == 2
    assert out.output.splitlines() == [
        "error: --priorities: priorities must be integers 0-9999, got 99999",
        "error: --share-priorities training/QS1: priorities must be integers 0-9999, got 10000",
    ]
    topo = tmp_path / "t.yaml"
    topo.write_text("""service_environments:
  - {name: a-env, capacity: {ml.g5.xlarge: 2}}
  - {name: b-env, capacity: {ml.g5.xlarge: 1}}
job_queues:
  - {name: training, service_environment: a-env, shares: [{name: QS1, capacity: {ml.g5.xlarge: 2}, strategy: RESERVE}]}
  - {name: other, service_environment: b-env, shares: [{name: QS1, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}]}
""", encoding="utf-8")
    out = CliRunner().invoke(main, ["generate", str(topo), "-o", str(tmp_path / "j.csv"),
                                    "--share-priorities", "QS1=1:1"])
    assert out.exit_code == 2
    assert out.output.splitlines() == [
        "error: --share-priorities 'QS1=1:1': share 'QS1' is ambiguous (training/QS1, other/QS1); write QUEUE/SHARE",
    ]
    out = CliRunner().invoke(main, ["generate", str(topo), "-o", str(tmp_path / "j.csv"),
                                    "--share-priorities", "QS9=1:1", "--share-priorities", "QS1"])
    assert out.exit_code == 2
    assert out.output.splitlines() == [  # the one resolver's words, as for a workload row or a guarantee
        "error: --share-priorities 'QS9=1:1': no quota share 'QS9' (write QUEUE/SHARE or a unique SHARE name)",
        "error: --share-priorities 'QS1': expected SHARE=MIX naming one quota share of the topology",
    ]


def test_duration_shape_errors_name_the_option_and_the_rule(tmp_path):
    for args, message in ((["--duration-distribution", "pareto", "--duration-shape", "1"], "a pareto alpha must be"),
                          (["--duration-shape", "2"], "only lognormal and pareto durations have a shape"),
                          (["--duration-distribution", "lognormal", "--duration-shape", "0"], "sigma must be")):
        out = CliRunner().invoke(main, ["generate", str(TOPOLOGY), "-o", str(tmp_path / "j.csv"), *args])
        assert out.exit_code == 2, out.output
        errors = [line for line in out.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "--duration-shape" in errors[0] and message in errors[0], out.output


def test_the_heavy_shape_from_the_command_line(tmp_path):
    out = CliRunner().invoke(main, [
        "generate", str(TOPOLOGY), "-o", str(tmp_path / "j.csv"), "--jobs", "3000", "--duration-distribution",
        "lognormal", "--duration-shape", "2.5", "--duration-max", "1209600", "--burst-mean", "1000",
        "--burst-spread", "600", "--sizes", "1:0.85,2:0.15"])
    assert out.exit_code == 0, out.output
    from policy_engine.inputs.loading import load_topology
    from policy_engine.simulation.scenarios.workload import load_jobs

    jobs = load_jobs(tmp_path / "j.csv", load_topology(TOPOLOGY))
    assert len(jobs) == 3000 and max(j.duration for j in jobs) <= 1209600


def test_generate_from_stdin_writes_an_inline_topology(tmp_path):
    jobs, scenario = tmp_path / "j.csv", tmp_path / "s.yaml"
    result = run("generate", "-", "-o", str(jobs), "--jobs", "3", "--scenario", str(scenario), stdin=GOOD.encode())
    assert result.exit_code == 0, result.stderr
    assert run("simulate", str(scenario)).exit_code == 0
