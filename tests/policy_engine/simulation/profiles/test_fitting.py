"""``fit`` recovers the laws a workload was drawn from, and a fitted profile regenerates its history.

Histories here are synthetic with known parameters (drawn by ``sampling``), so what the fit should find
is known; the round trip holds the issue's bounds for every share with at least 500 completed jobs.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.simulation.inputs.generate import share_reach
from policy_engine.simulation.profiles.fitting import fit_profile, read_columns
from policy_engine.simulation.profiles.loading import load_profile
from policy_engine.simulation.profiles.sampling import Columns, draw_workload, write_columns
from policy_engine.simulation.profiles.spec import Empirical, Exponential, LogNormal, Pareto

PEAK = [0.2] * 7 + [1, 2, 3, 3, 3, 2, 3, 3, 3, 2, 1] + [0.4] * 6
SOURCE = f"""\
shares:
  vision:
    jobs_per_day: 120
    daily_cycle: {PEAK}
    weekly_cycle: [1.3, 1.3, 1.3, 1.3, 1.3, 0.25, 0.25]
    sizes: {{1: 0.5, 2: 0.3, 4: 0.2}}
    instance_types: {{ml.p4d.24xlarge: 0.4, ml.g5.12xlarge: 0.6}}
    run_time: {{law: {{distribution: lognormal, median: 5400, sigma: 1.1}}}}
    priorities: {{1: 0.8, 5: 0.2}}
  language:
    jobs_per_day: 40
    run_time: {{law: {{distribution: pareto, minimum: 1200, alpha: 1.8}}}}
    sizes: {{1: 0.2, 2: 0.3, 4: 0.5}}
  speech:
    jobs_per_day: 60
    bursts: {{mean_jobs: 8, spread: 40}}
    run_time: {{law: {{distribution: exponential, mean: 1800}}}}
    early_failures: {{fraction: 0.1, after: 0.2}}
  research:
    jobs_per_day: 50
    sizes: {{1: 0.6, 8: 0.4}}
    instance_types: {{ml.g5.12xlarge: 1}}
    run_time:
      law: {{distribution: empirical}}
      quantiles: {{0: 60, 0.3: 300, 0.5: 900, 0.7: 7200, 0.9: 36000, 1: 172800}}
  platform:
    jobs_per_day: 0.5
    run_time: {{law: {{distribution: exponential, mean: 600}}}}
"""
DAYS = 28


@pytest.fixture
def history(tmp_path, company_topology) -> Path:
    (tmp_path / "source.yaml").write_text(SOURCE, encoding="utf-8")
    source = load_profile(tmp_path / "source.yaml", company_topology)
    jobs = draw_workload(company_topology, source, DAYS, 11, share_reach(company_topology))
    path = tmp_path / "history.csv"
    write_columns(path, jobs)
    return path


def test_fit_recovers_the_laws_cycles_bursts_and_failures_it_was_drawn_from(history, company_topology):
    result = fit_profile(read_columns(history), str(history), company_topology)
    vision, language = result.shares["training/vision"].profile, result.shares["training/language"].profile
    speech, research = result.shares["training/speech"].profile, result.shares["training/research"].profile
    assert isinstance(vision.run_time.law, LogNormal)
    assert vision.run_time.law.median == pytest.approx(5400, rel=0.05)
    assert vision.run_time.law.sigma == pytest.approx(1.1, rel=0.05)
    assert isinstance(language.run_time.law, Pareto) and language.run_time.law.alpha == pytest.approx(1.8, rel=0.1)
    assert isinstance(speech.run_time.law, Exponential) and speech.run_time.law.mean == pytest.approx(1800, rel=0.1)
    assert isinstance(research.run_time.law, Empirical)  # no family fits a made-up quantile curve
    assert research.run_time.quantiles[0.5] == pytest.approx(900, rel=0.1)
    assert vision.jobs_per_day == pytest.approx(120, rel=0.05)
    assert np.corrcoef(vision.daily_cycle, PEAK)[0, 1] > 0.95
    assert vision.weekly_cycle is not None and vision.weekly_cycle[0] / vision.weekly_cycle[6] == pytest.approx(
        1.3 / 0.25, rel=0.2)
    assert language.daily_cycle is None and language.weekly_cycle is None  # flat: noise is not a cycle
    assert speech.bursts is not None and speech.bursts.mean_jobs == pytest.approx(8, rel=0.2)
    assert speech.bursts.spread == pytest.approx(40, rel=0.25)
    assert speech.early_failures is not None and speech.early_failures.fraction == pytest.approx(0.1, abs=0.02)
    assert vision.instance_types == pytest.approx({"ml.p4d.24xlarge": 0.4, "ml.g5.12xlarge": 0.6}, abs=0.03)
    assert vision.priorities == pytest.approx({1: 0.8, 5: 0.2}, abs=0.03)
    platform = result.shares["training/platform"]
    assert platform.family == "default" and any("fewer than 30" in note for note in platform.notes)
    assert result.shares["training/ads"].profile.jobs_per_day == 0  # in the topology, not in the window


def _stats(columns: Columns, share: str) -> dict[str, float]:
    mask = (columns.share == share) & (columns.failures == 0)
    everything = columns.share == share
    sizes = columns.instances[everything]
    return {"jobs": float(everything.sum()),
            "hours": float((columns.instances[everything] * columns.duration[everything]).sum() / 3600),
            "p50": float(np.quantile(columns.duration[mask], 0.5)),
            "p95": float(np.quantile(columns.duration[mask], 0.95)),
            **{f"size{size}": float((sizes == size).mean()) for size in (1, 2, 4, 8)}}


def test_a_fitted_profile_regenerates_its_history_within_the_bounds(history, company_topology, tmp_path):
    out = CliRunner().invoke(main, ["fit", str(history), "--topology", str(tmp_path / "company.yaml"),
                                    "-o", str(tmp_path / "fitted.yaml")])
    assert out.exit_code == 0, out.output
    source = read_columns(history)
    fitted = load_profile(tmp_path / "fitted.yaml", company_topology)
    reach = share_reach(company_topology)
    regenerated = [draw_workload(company_topology, fitted, DAYS, seed, reach) for seed in range(5)]
    original = Columns(source["share"], source["instance_type"], source["instances"].astype(np.int64),
                       source["priority"].astype(np.int64), source["submit_at"], source["duration"],
                       np.full(len(source["share"]), np.nan),
                       np.nan_to_num(source.get("failures", np.zeros(len(source["share"])))).astype(np.int64),
                       np.full(len(source["share"]), np.nan))
    checked = 0
    for share in sorted(set(source["share"].tolist())):
        truth = _stats(original, share)
        if truth["jobs"] * 0.9 < 500:  # completed jobs
            continue
        checked += 1
        mean = {key: float(np.mean([_stats(r, share)[key] for r in regenerated])) for key in truth}
        assert mean["jobs"] == pytest.approx(truth["jobs"], rel=0.15), share
        assert mean["hours"] == pytest.approx(truth["hours"], rel=0.15), share
        assert mean["p50"] == pytest.approx(truth["p50"], rel=0.2), share
        assert mean["p95"] == pytest.approx(truth["p95"], rel=0.2), share
        for size in (1, 2, 4, 8):
            assert abs(mean[f"size{size}"] - truth[f"size{size}"]) <= 0.05, (share, size)
    assert checked == 4


def test_jobs_without_a_known_run_time_are_counted_not_fitted_and_short_windows_say_so(tmp_path):
    path = tmp_path / "history.csv"
    rng = np.random.default_rng(3)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name", "share", "instance_type", "instances", "priority", "submit_at", "duration",
                         "submitted_epoch_ms", "duration_known", "observed_status"])
        start_ms = 1_767_225_600_000  # 2026-01-01T00:00Z, a Thursday
        for index in range(600):
            preempted = index % 6 == 0
            writer.writerow([f"j{index}", "team", "ml.g5.xlarge", 1, 1, index * 300,
                             round(float(rng.exponential(900)) + 1, 1), start_ms + index * 300_000,
                             "false" if preempted else "true", "FAILED" if preempted else "SUCCEEDED"])
    out = CliRunner().invoke(main, ["fit", str(path), "--format", "json"])
    assert out.exit_code == 0, out.output
    document = json.loads(out.output)
    team = document["shares"]["team"]
    assert team["jobs"] == 600 and team["completed"] == 500
    assert document["absolute_times"] is True
    assert any("shorter than two weeks" in note for note in document["notes"])
    assert team["law"] == "exponential"
    assert document["profile"]["shares"]["team"]["jobs_per_day"] == pytest.approx(600 / (599 * 300 / 86400),
                                                                                  rel=0.01)


def test_near_equal_run_times_fit_no_law_a_profile_cannot_hold():
    """Run times of 3600..3615 s fit a Pareto of alpha near 500, past what a profile holds (at most 100): that family
    is left out (it raised a pydantic ValidationError, a traceback from ``fit``), and the law is one a profile holds."""
    from scipy import stats

    from policy_engine.simulation.profiles.fitting import fit_run_time

    values = 3600.0 + np.arange(40) % 16
    assert stats.pareto.fit(values, floc=0)[0] > 100  # the case: the unbounded fit is out of the profile's range
    run_time, name, _ = fit_run_time(values, np.random.default_rng(0), 0)
    assert name != "pareto" and run_time.quantiles[0.5] == pytest.approx(3607, abs=1)


def test_fit_reads_cycles_in_the_time_zone_asked_for(tmp_path):
    path = tmp_path / "history.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["share", "instances", "submit_at", "duration", "submitted_epoch_ms"])
        start_ms = 1_767_225_600_000
        for day in range(20):  # every job at 09:00-10:00 in Tokyo, which is 00:00-01:00 UTC
            for minute in range(0, 60, 2):
                at = start_ms + day * 86_400_000 + minute * 60_000
                writer.writerow(["team", 1, (at - start_ms) / 1000, 600, at])
    for zone, hour in (("UTC", 0), ("Asia/Tokyo", 9)):
        out = CliRunner().invoke(main, ["fit", str(path), "--timezone", zone, "-o", str(tmp_path / f"{hour}.yaml")])
        assert out.exit_code == 0, out.output
        daily = yaml.safe_load((tmp_path / f"{hour}.yaml").read_text(encoding="utf-8"))["shares"]["team"][
            "daily_cycle"]
        assert int(np.argmax(daily)) == hour and daily[hour] == pytest.approx(24, rel=0.05)


def test_bad_job_files_are_one_line_and_exit_2(tmp_path):
    missing = tmp_path / "missing.csv"
    missing.write_text("name,share,instances\nj,a,1\n", encoding="utf-8")
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("name,share,instances,submit_at,duration\nj,a,ten,0,5\n", encoding="utf-8")
    for path, message in ((missing, "header lacks the required column(s) 'duration'"),
                          (wrong, "CSV conversion error to int64")):
        out = CliRunner().invoke(main, ["fit", str(path)])
        assert out.exit_code == 2 and message in out.output and len(out.output.splitlines()) == 1, out.output
    out = CliRunner().invoke(main, ["fit", str(missing), "--timezone", "Nowhere/Land", "-o", str(tmp_path / "p.txt")])
    assert out.exit_code == 2 and len(out.output.splitlines()) == 2


def test_failed_jobs_keep_their_hours_when_most_fail_early_and_a_few_late(tmp_path):
    rng = np.random.default_rng(5)
    completed = np.round(rng.exponential(3600, 800) + 1, 1)
    failed = np.where(np.arange(200) < 160, 60.0, 7200.0)  # most fail in a minute, a fifth after two hours
    path = tmp_path / "history.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["share", "instances", "submit_at", "duration", "observed_status"])
        for index, (duration, status) in enumerate([(d, "SUCCEEDED") for d in completed]
                                                   + [(d, "FAILED") for d in failed]):
            writer.writerow(["team", 1, index * 600, duration, status])
    fit = fit_profile(read_columns(path), str(path)).shares["team"]
    early = fit.profile.early_failures
    assert early is not None and early.fraction == pytest.approx(0.2)
    # drawn failures run `after` x a run time of the completed jobs' law: the ratio of means keeps their hours
    assert early.after == pytest.approx(failed.mean() / completed.mean(), abs=0.001)
    assert early.after > 10 * np.median(failed) / np.median(completed)  # a ratio of medians would lose them

    with path.open("a", newline="", encoding="utf-8") as handle:  # failures longer than successes: said, capped
        csv.writer(handle).writerows(["team", 1, 600_000 + i, 500_000, "FAILED"] for i in range(100))
    fit = fit_profile(read_columns(path), str(path)).shares["team"]
    assert fit.profile.early_failures is not None and fit.profile.early_failures.after == 1.0
    assert any("hours are undercounted" in note for note in fit.notes)


def test_fit_refuses_what_simulate_refuses_with_the_same_line(tmp_path):
    """One job-file reader: every file simulate's reader refuses, fit refuses (the header and JSON Lines with the
    reader's own lines; a CSV's cells a column at a time against the same bounds, a line naming the field)."""
    topology = tmp_path / "topology.yaml"
    topology.write_text("service_environments: [{name: e, capacity: {ml.g5.xlarge: 2}}]\n"
                        "job_queues: [{name: q, service_environment: e, shares: [{name: team, capacity: "
                        "{ml.g5.xlarge: 2}, strategy: LEND_AND_BORROW}]}]\n", encoding="utf-8")
    cases = {
        "nan.csv": ("name,share,submit_at,duration\na,team,0,NaN\n", "duration"),
        "share-twice.csv": ("name,share,share,submit_at,duration\na,team,team,0,60\n",
                            "header names column(s) 'share' more than once"),
        "maybe.csv": ("name,share,submit_at,duration,duration_known\na,team,0,60,maybe\n", "duration_known: must be"),
        "deep.jsonl": ('{"name": "a", "share": "team", "duration": ' + "[" * 10000 + "]" * 10000 + "}\n",
                       "cannot read: nested too deeply"),
        "twice.jsonl": ('{"name": "a", "share": "team", "share": "other", "duration": 60}\n',
                        "the key 'share' appears more than once"),
        "name-number.jsonl": ('{"name": 7, "share": "team", "duration": 60}\n', "name: must be a string, got 7"),
        "huge.csv": ("name,share,instances,duration\na,team,2147483648,60\n", "instances"),
        "status.csv": ("name,share,duration,observed_status\na,team,60,PREEMPTED\n", "observed_status"),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        (tmp_path / "s.yaml").write_text(f"topology: topology.yaml\njobs: {name}\n", encoding="utf-8")
        fitted = CliRunner().invoke(main, ["fit", str(path)])
        simulated = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml"), "--quiet"])
        assert fitted.exit_code == 2 and message in fitted.stderr, (name, fitted.output)
        assert simulated.exit_code == 2 and message in simulated.stderr, (name, simulated.output)


TWO_TYPES = """\
service_environments:
  - {name: gpu, capacity: {ml.g5.xlarge: 8, ml.p4d.24xlarge: 4}}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: vision, capacity: {ml.g5.xlarge: 4, ml.p4d.24xlarge: 4}, strategy: RESERVE}
      - {name: speech, capacity: {ml.g5.xlarge: 4}, strategy: RESERVE}
"""


def test_instance_hours_per_day_are_per_instance_type_never_added_across_types(tmp_path):
    # two days; vision: 10 g5 jobs of 2 x 1 h (20 inst-h), 5 p4d jobs of 1 x 2 h (10), 2 jobs naming no type of a
    # two-type share (2, type not given); speech, one type: 4 jobs naming none of 1 x 30 min (2 inst-h of g5)
    rows = [*(("vision", "ml.g5.xlarge", 2, 3600),) * 10, *(("vision", "ml.p4d.24xlarge", 1, 7200),) * 5,
            *(("vision", "", 1, 3600),) * 2, *(("speech", "", 1, 1800),) * 4]
    path = tmp_path / "history.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name", "share", "instance_type", "instances", "submit_at", "duration"])
        for index, (team, instance_type, instances, duration) in enumerate(rows):
            writer.writerow([f"j{index}", team, instance_type, instances,
                             2 * 86400 if index == len(rows) - 1 else index * 1000, duration])
    (tmp_path / "topology.yaml").write_text(TWO_TYPES, encoding="utf-8")
    out = CliRunner().invoke(main, ["fit", str(path), "--topology", str(tmp_path / "topology.yaml"), "--format",
                                    "json"])
    assert out.exit_code == 0, out.output
    shares = json.loads(out.output)["shares"]
    assert shares["training/vision"]["instance_hours_per_day"] == {"ml.g5.xlarge": 10, "ml.p4d.24xlarge": 5}
    assert shares["training/vision"]["instance_hours_per_day_no_type"] == 1
    assert shares["training/speech"]["instance_hours_per_day"] == {"ml.g5.xlarge": 1}  # the share's only type
    assert shares["training/speech"]["instance_hours_per_day_no_type"] == 0
    # without a topology no type can be told: speech's hours are not given a type
    alone = json.loads(CliRunner().invoke(main, ["fit", str(path), "--format", "json"]).output)["shares"]
    assert (alone["speech"]["instance_hours_per_day"], alone["speech"]["instance_hours_per_day_no_type"]) == ({}, 1)
    text = CliRunner().invoke(main, ["fit", str(path), "--topology", str(tmp_path / "topology.yaml")])
    assert text.exit_code == 0, text.output
    cells = [line.split("│")[3].strip() for line in text.output.splitlines() if line.count("│") > 3]
    assert cells == ["ml.g5.xlarge 1.0", "ml.g5.xlarge 10.0", "ml.p4d.24xlarge 5.0", "type not given 1.0"]
