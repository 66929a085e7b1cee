"""``batch-quota serve`` as a process: prints its URL, serves boto3 via AWS_ENDPOINT_URL_BATCH; bad input exits 2."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import boto3
from click.testing import CliRunner

from policy_engine.cli.app import main


def test_serve_prints_its_url_and_answers_boto3_through_the_environment_variable(monkeypatch):
    command = str(Path(sys.executable).with_name("batch-quota"))
    process = subprocess.Popen([command, "serve", "--walkthrough", "--port", "0", "--speed", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", url)
        batch = boto3.client("batch", region_name="us-east-1", aws_access_key_id="any", aws_secret_access_key="any")
        shares = batch.list_quota_shares(jobQueue="training")["quotaShares"]
        assert [share["quotaShareName"] for share in shares] == ["QS1", "QS2", "QS3"]
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert f"export AWS_ENDPOINT_URL_BATCH={url}" in err
    assert f"export AWS_ENDPOINT_URL={url}" in err  # the deploy rehearsal's one variable (docs/rehearsal.md)


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    runner = CliRunner()
    not_a_database = tmp_path / "state.db"
    not_a_database.write_text("hello, not SQLite\n" * 100)
    result = runner.invoke(main, ["serve", "--state", str(not_a_database)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"error: {not_a_database}: not a batch-quota state file "
                                                  "(file is not a database)"]
    assert runner.invoke(main, ["serve", "--walkthrough", "topologies/example.yaml"]).exit_code == 2
    for option, value in (("--speed", "-1"), ("--speed", "nan"), ("--default-duration", "inf")):
        assert runner.invoke(main, ["serve", option, value]).exit_code == 2
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(main, ["serve", "--port", str(port)])
    assert result.exit_code == 2 and "cannot listen on 127.0.0.1:" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_topology_aws_would_reject_is_not_served(write_file):
    bad = write_file("bad.yaml", "service_environments:\n  - {name: 'e!', capacity: {ml.g5.xlarge: 1}}\n"
                                 "job_queues: []\n")
    result = CliRunner().invoke(main, ["serve", str(bad), "--port", "0"])
    assert result.exit_code == 1
    assert "BQ101" in result.output

