"""One set of bounds for every number an input can carry (``foundation/bounds.py``), applied by every reader:
past a bound is one line and exit 2, never a traceback, a hang, a clamp or an infinite figure; and work that
grows without bound (grids, samples, workers) is refused before it starts."""

from __future__ import annotations

import json
import math
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli import main
from policy_engine.foundation import bounds
from policy_engine.foundation.units import parse_duration
from tests.builders import scenario_files


def run(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stderr.strip().splitlines()


def refused(*args: str) -> str:
    """The one ``error:`` line a refused command prints (exit 2)."""
    code, lines = run(*args)
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (code, lines)
    return lines[0]


def test_the_last_instant_is_9999_12_31_and_every_duration_fits_before_it():
    assert datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC) == bounds.MAX_INSTANT
    assert datetime.fromtimestamp(bounds.MAX_SECONDS, UTC) == bounds.MAX_INSTANT
    # the largest figures a report derives from bounded inputs stay finite
    assert math.isfinite(bounds.MAX_RATE * bounds.MAX_INSTANCES * bounds.MAX_SECONDS / 3600 * 10_000)
    assert bounds.instant_problem(None, bounds.MAX_SECONDS) is None
    assert "past 9999-12-31" in (bounds.instant_problem(datetime(2026, 1, 1, tzinfo=UTC), bounds.MAX_SECONDS) or "")
    with pytest.raises(ValueError):
        parse_duration("1e308d")
    assert parse_duration(f"{bounds.MAX_SECONDS}s") == bounds.MAX_SECONDS


@pytest.fixture
def files(tmp_path):
    scenario_files(tmp_path)
    return tmp_path


def test_job_files_bound_instances_and_times(files):
    (files / "jobs.csv").write_text("name,share,instances,submit_at,duration\n"
                                    f"a,QS1,{10**30},0,60\nb,QS2,1,{10**13},60\n", encoding="utf-8")
    code, lines = run("simulate", str(files / "scenario.yaml"), "--quiet")
    assert code == 2 and lines == [
        f"error: {files / 'jobs.csv'}:2: jobs[a].instances: must be at most {bounds.MAX_INSTANCES}, got {10**30}",
        f"error: {files / 'jobs.csv'}:3: jobs[b].submit_at: must be at most {bounds.MAX_SECONDS}, got {10**13}"]


def test_a_scenario_start_plus_its_seconds_stays_a_date(files):
    (files / "jobs.csv").write_text(f"name,share,submit_at,duration\na,QS1,{bounds.MAX_SECONDS - 10},60\n",
                                    encoding="utf-8")
    (files / "scenario.yaml").write_text("topology: topology.yaml\njobs: jobs.csv\nstart: 2026-01-01T00:00:00Z\n")
    assert "is past 9999-12-31T23:59:59+00:00" in refused("simulate", str(files / "scenario.yaml"), "--quiet")


def test_eventbridge_events_past_the_last_date_are_one_line(files):
    (files / "jobs.csv").write_text(f"name,share,submit_at,duration\na,QS1,{bounds.MAX_SECONDS - 100},100000\n",
                                    encoding="utf-8")
    line = refused("simulate", str(files / "scenario.yaml"), "--quiet", "--events", str(files / "e.jsonl"),
                   "--event-format", "eventbridge")
    assert "is past 9999-12-31T23:59:59+00:00" in line and "--until" in line


def test_prices_plan_windows_and_profiles_are_bounded(files):
    (files / "prices.yaml").write_text("currency: USD\nper_instance_hour:\n  ml.g5.xlarge: 1e308\n")
    for output in ("text", "json"):
        assert f"less than or equal to {bounds.MAX_RATE:.0f}" in refused(
            "simulate", str(files / "scenario.yaml"), "--prices", str(files / "prices.yaml"), "--format", output)
    topology = (files / "topology.yaml").read_text() + (
        "training_plans:\n  - name: p\n    arn: arn:aws:sagemaker:us-east-1:123456789012:training-plan/p\n"
        "    instance_type: ml.g5.xlarge\n    reserved_capacities:\n      - {instances: 1, start: 0, end: 1e308}\n")
    (files / "plan.yaml").write_text(topology)
    assert "expected at most 253402300799 seconds" in refused("check", str(files / "plan.yaml"))
    for body, message in (("jobs_per_day: '5'", "input should be a valid number, got '5'"),
                          ("jobs_per_day: true", "input should be a valid number, got true"),
                          ("jobs_per_day: 5\n    daily_cycle: ['1']", "got '1'"),
                          ("jobs_per_day: 5\n    sizes: {1: 1e308}", "less than or equal to 1000000000")):
        (files / "profile.yaml").write_text(f"timezone: UTC\nshares:\n  QS1:\n    {body}\n")
        assert message in refused("generate", str(files / "topology.yaml"), "--workload-profile",
                                  str(files / "profile.yaml"), "--days", "1", "-o", str(files / "out.csv"))


def test_fit_refuses_jobs_past_the_bound_and_a_negative_seed(files):
    (files / "long.csv").write_text("name,share,submit_at,duration\n" + "".join(
        f"j{i},QS1,{i * 3600},{10**13}\n" for i in range(3)))
    code, lines = run("fit", str(files / "long.csv"), "--format", "json")
    assert code == 2 and lines == [f"error: {files / 'long.csv'}: line 2: duration: must be a number of seconds 0 to "
                                   "253402300799, got 1e+13 (2 more line(s) like it)"]
    (files / "fits.csv").write_text("name,share,submit_at,duration\n" + "".join(
        f"j{i},QS1,{i * 3600},{bounds.MAX_SECONDS - 10**9 * i}\n" for i in range(40)))
    code, _ = run("fit", str(files / "fits.csv"), "-o", str(files / "fitted.yaml"))
    assert code == 0  # the longest legal job fits in the profile fit writes
    assert "-1 is not in the range" in refused("fit", str(files / "long.csv"), "--seed", "-1")


@pytest.mark.parametrize(("vary", "message"), [
    ("QS1.borrow_limit=0.." + "9" * 400, "is not an integer of at most 20 digits"),
    ("settings.startup_delay=0.1..1e308:1e-300", "must be >= 0 and <= 2.53402e+11"),
    ("settings.startup_delay=0..1:5e-324", "has more than 10,000 values"),
    ("workload.scale=5e-324", "must be >= 1e-06 and <= 1e+06"),
    ("workload.duration_scale=1e308", "must be >= 1e-06 and <= 1e+06"),
    ("QS1.borrow_limit=" + ",".join(f"{i * 10000}..{i * 10000 + 9999}" for i in range(30)),
     "300,000 values (at most 100,000 on one axis)"),
])
def test_vary_values_past_their_bounds_are_one_line(files, vary, message):
    assert message in refused("sweep", str(files / "scenario.yaml"), "--vary", vary, "--workers", "1")


def test_the_duplicate_check_of_vary_values_is_linear(files):
    nine_ranges = ",".join(f"{i * 10000}..{i * 10000 + 9999}" for i in range(9)) + ",5"
    began = time.process_time()
    line = refused("sweep", str(files / "scenario.yaml"), "--vary", f"QS1.borrow_limit={nine_ranges}")
    assert "value 5 is listed twice" in line and time.process_time() - began < 10  # minutes when quadratic


def test_a_grid_past_the_bound_needs_sample(files):
    grid = ["--vary", "QS1.borrow_limit=0..9999", "--vary", "QS2.borrow_limit=0..9999"]
    line = refused("sweep", str(files / "scenario.yaml"), *grid, "--workers", "1")
    assert f"100,000,000 candidates, more than {bounds.MAX_GRID:,}; pass --sample N" in line
    code, _ = run("sweep", str(files / "scenario.yaml"), *grid, "--workers", "1", "--sample", "2", "--quiet")
    assert code == 0


def test_tune_bounds_its_samples_batches_and_gain(files):
    tune = ["tune", str(files / "scenario.yaml"), "--vary", "QS1.borrow_limit=0,100", "--workers", "1"]
    assert "1000000 is not in the range 1<=x<=1000" in refused(*tune, "--budget", "2", "--workload-samples",
                                                                "1000000")
    assert "--batch-size 5: larger than --budget 2" in refused(*tune, "--budget", "2", "--batch-size", "5")
    assert "is not in the range 1<=x<=100000" in refused(*tune, "--budget", "2", "--batch-size", str(10**9))
    assert "'nan' is not a finite number" in refused(*tune, "--budget", "2", "--min-gain", "nan")
    assert "a duration is at most 253,402,300,799 s" in refused(*tune, "--budget", "2", "--constraint",
                                                                 "max(wait_p95) <= 1e308d")
    code, _ = run(*tune, "--budget", "2", "--quiet")  # the default batch of 8 is a budget of 2's one round
    assert code in (0, 1)


@pytest.mark.parametrize("command", ["sweep", "tune", "simulate", "compare"])
def test_workers_above_the_cpus_need_a_cluster(files, command, monkeypatch):
    monkeypatch.setattr("policy_engine.sweep.executor.cpu_count", lambda: 2)
    args = {"sweep": ["--vary", "QS1.borrow_limit=0,100"], "tune": ["--vary", "QS1.borrow_limit=0,100",
                                                                    "--budget", "2"],
            "simulate": [], "compare": ["--topology", str(files / "topology.yaml"), "--topology",
                                        str(files / "topology.yaml")]}[command]
    line = refused(command, str(files / "scenario.yaml"), *args, "--workers", "1000000")
    assert "--workers 1000000: more than this machine's 2 CPU(s)" in line and "--scheduler" in line


def test_compare_until_must_be_more_than_zero(files):
    topology = str(files / "topology.yaml")
    assert "must be more than 0s" in refused("compare", str(files / "scenario.yaml"), "--topology", topology,
                                             "--topology", topology, "--until", "0")


@pytest.mark.parametrize(("option", "value"), [("--account", "12"), ("--account", "abcdefghijkl"),
                                               ("--account", "*:*"), ("--region", ""),
                                               ("--region", "us-east-1/../*")])
def test_iam_policy_refuses_what_would_shift_an_arn(option, value):
    assert refused("iam-policy", option, value).startswith(f"error: {option} {value!r}: expected")


def test_iam_policy_takes_an_account_and_regions_of_every_partition():
    for region in ("us-east-1", "us-gov-west-1", "cn-north-1", "eu-isoe-west-1"):
        code, _ = run("iam-policy", "--account", "123456789012", "--region", region)
        assert code == 0


def test_serve_events_url_that_is_no_url_is_one_line():
    assert "not a URL" in refused("serve", "--events-url", "http://[::1")


def test_history_since_past_the_bound_is_one_line(monkeypatch):
    for since in ("1e308d", "1e300d", "1e15s"):
        assert "at most 253,402,300,799 s" in refused("history", "--queue", "training", "--since", since,
                                                      "--region", "us-east-1")
    assert "reaches back before 1970-01-01" in refused("history", "--queue", "training", "--since", "100000d",
                                                       "--region", "us-east-1")


def test_json_reports_hold_only_finite_numbers_at_the_largest_rate(files):
    (files / "prices.yaml").write_text(f"currency: USD\nper_instance_hour:\n  ml.g5.xlarge: {bounds.MAX_RATE}\n")
    result = CliRunner().invoke(main, ["simulate", str(files / "scenario.yaml"), "--prices",
                                       str(files / "prices.yaml"), "--format", "json"])
    assert result.exit_code == 0

    def constant(token: str) -> float:
        raise AssertionError(f"{token} in JSON")

    json.loads(result.stdout, parse_constant=constant)
    assert Path(files / "prices.yaml").exists()
