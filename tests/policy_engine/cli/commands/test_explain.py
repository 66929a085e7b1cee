"""``batch-quota explain``: which share, which file, and plain sentences with colour only on a terminal."""

from __future__ import annotations

from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.foundation.model import JobQueue, ServiceEnvironment, Topology
from tests.builders import GPU, share, topology
from tests.policy_engine.cli.commands.test_input_robustness import GOOD, one_line, run


def test_command_prints_plain_sentences_without_colour_when_piped():
    result = CliRunner().invoke(main, ["explain", "QS1"])
    assert result.exit_code == 0, result.output
    assert "burst to 2 ml.g5.xlarge" in result.output
    assert "\x1b[" not in result.output


def test_command_colour_follows_the_terminal_and_no_color(monkeypatch):
    runner = CliRunner()
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich's way to say "this is a terminal"
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[" in runner.invoke(main, ["explain", "QS1"]).output
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in runner.invoke(main, ["explain", "QS1"]).output


def test_unknown_share_is_one_line_and_exit_2():
    result = CliRunner().invoke(main, ["explain", "nope"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: no quota share 'nope' in the embedded example "
        "(known: training/QS1, training/QS2, training/QS3)"]


def test_ambiguous_share_asks_for_queue_slash_share(tmp_path):
    one = topology(share("A", 1, "LEND"))
    second = JobQueue(name="other", service_environment="e2", shares=(share("A", 1, "LEND"),))
    t = Topology(service_environments=(*one.service_environments, ServiceEnvironment(name="e2", capacity={GPU: 1})),
                 job_queues=(*one.job_queues, second))
    path = tmp_path / "t.json"
    path.write_text(t.model_dump_json())
    result = CliRunner().invoke(main, ["explain", "A", str(path)])
    assert result.exit_code == 2 and "ambiguous (training/A, other/A); write QUEUE/SHARE" in result.output
    assert CliRunner().invoke(main, ["explain", "other/A", str(path)]).exit_code == 0


def test_explain_accepts_both_argument_orders(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(GOOD)
    first = run("explain", "training/QS1", str(path))
    assert first.exit_code == 0
    assert run("explain", str(path), "training/QS1").stdout == first.stdout
    one_line(run("explain", str(path)), "explain takes SHARE [TOPOLOGY]")


def test_explain_says_what_the_queues_time_limit_actions_terminate(tmp_path):
    from click.testing import CliRunner

    from policy_engine.cli.app import main

    topology = tmp_path / "t.yaml"
    topology.write_text("""\
service_environments: [{name: e, capacity: {ml.g5.xlarge: 3}}]
job_queues:
  - name: q
    service_environment: e
    job_state_time_limit_actions:
      - {max_time_seconds: 3600, reason: MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED}
    shares: [{name: a, capacity: {ml.g5.xlarge: 3}, strategy: RESERVE}]
""", encoding="utf-8")
    out = CliRunner().invoke(main, ["explain", "a", str(topology)])
    assert out.exit_code == 0, out.output
    line = next(line for line in out.output.splitlines() if line.strip().startswith("time limits"))
    assert "terminates a job stuck at the front of q/a" in line
    assert "after 1h 00m RUNNABLE at the front, a job larger than the share can ever get" in line
    plain = CliRunner().invoke(main, ["explain", "QS1"])
    assert "Job queue training has no time-limit action" in plain.output
