"""Run time conditional on size (``run_time_by_size``): a profile draws a job's run time from its size's law,
``fit`` writes one per size with enough completed jobs (the rest pooled), and a profile without it draws exactly
what it drew before (docs/workloads.md, "Run time by size")."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.foundation.diagnostics import LoadError
from policy_engine.inputs.loading import load_topology
from policy_engine.simulation.inputs.generate import share_reach
from policy_engine.simulation.profiles.fitting import read_columns
from policy_engine.simulation.profiles.loading import load_profile
from policy_engine.simulation.profiles.sampling import Columns, draw_workload

from .test_accounting_exports import ROOT
from .test_plan_jobs import SOURCE as PLAN_SOURCE
from .test_plan_jobs import TOPOLOGY as PLAN_TOPOLOGY

#: Bigger jobs run longer: medians 1 h, 6 h and 30 h for 1, 4 and 16 instances (lognormal, sigma 0.8).
BY_SIZE = """\
shares:
  research:
    jobs_per_day: 60
    sizes: {1: 0.5, 4: 0.3, 16: 0.2}
    instance_types: {ml.g5.12xlarge: 1}
    run_time: {law: {distribution: lognormal, median: 3600, sigma: 0.8}}
    run_time_by_size:
      4: {law: {distribution: lognormal, median: 21600, sigma: 0.8}}
      16: {law: {distribution: lognormal, median: 108000, sigma: 0.8}}
    early_failures: {fraction: 0.1, after: 0.5}
"""
#: A topology where research can reach 16 g5 instances.
TOPOLOGY = """\
service_environments:
  - name: gpu
    capacity: {ml.g5.12xlarge: 64}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: research, capacity: {ml.g5.12xlarge: 32}, strategy: LEND_AND_BORROW}
      - {name: ads, capacity: {ml.g5.12xlarge: 32}, strategy: LEND_AND_BORROW}
"""
DAYS = 28


def _files(tmp_path: Path, topology: str, profile: str) -> tuple[Path, Path]:
    (tmp_path / "topology.yaml").write_text(topology, encoding="utf-8")
    (tmp_path / "profile.yaml").write_text(profile, encoding="utf-8")
    return tmp_path / "topology.yaml", tmp_path / "profile.yaml"


def _digest(columns: Columns) -> str:
    digest = hashlib.sha256()
    for name in ("share", "instance_type", "instances", "priority", "submit_at", "duration", "preemption_retries",
                 "failures", "fail_after"):
        values = getattr(columns, name)
        digest.update(np.asarray(values).astype(str if values.dtype == object else values.dtype).tobytes())
    digest.update(str(None if columns.training_plan is None else columns.training_plan.tolist()).encode())
    return digest.hexdigest()


def test_a_profile_without_run_times_by_size_draws_exactly_the_jobs_it_drew_before(tmp_path):
    # digests of the jobs drawn by the code before run_time_by_size (main at 1b614e2), same profiles and seeds
    company = load_topology(ROOT / "examples" / "profiles" / "company.yaml")
    teams = load_profile(ROOT / "examples" / "profiles" / "teams.yaml", company)
    drawn = draw_workload(company, teams, 14, 3, share_reach(company))
    assert (len(drawn), _digest(drawn)) == (4218, "001b6e52a502de37e72f219cdd44e5da97640cde0ef0edd6809deaa11813069e")
    topology_path, profile_path = _files(tmp_path, PLAN_TOPOLOGY, PLAN_SOURCE)  # plan jobs: their path too
    plans = load_topology(topology_path)
    drawn = draw_workload(plans, load_profile(profile_path, plans), 30, 7, share_reach(plans))
    assert (len(drawn), _digest(drawn)) == (2994, "84f94d060b3830e3f56cb67a8d599217c5aebfb973d32668cdee975bbb236149")


def test_a_job_draws_the_run_time_of_its_size_and_a_size_not_listed_the_pooled_one(tmp_path):
    topology_path, profile_path = _files(tmp_path, TOPOLOGY, BY_SIZE)
    topology = load_topology(topology_path)
    profile = load_profile(profile_path, topology)
    drawn = draw_workload(topology, profile, DAYS, 2, share_reach(topology))
    for size, median in ((1, 3600), (4, 21600), (16, 108000)):
        mine = drawn.instances == size
        assert np.median(drawn.duration[mine]) == pytest.approx(median, rel=0.12), size
    failing = drawn.failures == 1  # a failure still runs `after` of its own (size's) run time
    assert np.allclose(drawn.fail_after[failing], np.round(drawn.duration[failing] * 0.5, 1))
    again = draw_workload(topology, profile, DAYS, 2, share_reach(topology))
    assert np.array_equal(again.duration, drawn.duration)


def test_plan_jobs_draw_their_plan_s_run_time_else_the_share_s_for_their_size(tmp_path):
    source = PLAN_SOURCE.replace("""  speech:
    jobs_per_day: 30
""", """  speech:
    jobs_per_day: 30
    sizes: {1: 1}
    run_time: {law: {distribution: exponential, mean: 600}}
    run_time_by_size: {2: {law: {distribution: lognormal, median: 50000, sigma: 0.3}}}
""").replace("""    sizes: {1: 0.6, 2: 0.4}
    run_time: {law: {distribution: lognormal, median: 3600, sigma: 1.0}}
""", """    sizes: {1: 0.6, 2: 0.4}
    run_time: {law: {distribution: lognormal, median: 3600, sigma: 1.0}}
    run_time_by_size: {4: {law: {distribution: lognormal, median: 900, sigma: 0.3}}}
""")
    topology_path, profile_path = _files(tmp_path, PLAN_TOPOLOGY, source)
    topology = load_topology(topology_path)
    with pytest.raises(LoadError) as raised:  # vision's size 4 is drawn only on its plan, which has its own law
        load_profile(profile_path, topology)
    assert raised.value.problems == [
        f"{profile_path}:6: shares.vision.run_time_by_size[4]: size 4 is not among the share's sizes (1, 2): only "
        "plan p5-plan draws it, with its own run_time"]
    profile_path.write_text(source.replace("run_time_by_size: {4: {law: {distribution: lognormal, median: 900",
                                           "run_time_by_size: {2: {law: {distribution: lognormal, median: 900"),
                            encoding="utf-8")
    drawn = draw_workload(topology, load_profile(profile_path, topology), 30, 7, share_reach(topology))
    speech = (drawn.share == "training/speech") & (drawn.training_plan == "p5-plan")
    # speech's plan jobs (size 2, no run time of the plan's own) draw the share's law for size 2
    assert speech.sum() > 20 and np.median(drawn.duration[speech]) == pytest.approx(50000, rel=0.15)
    vision = (drawn.share == "training/vision") & (drawn.training_plan == "p5-plan")
    # vision's plan has its own run time (median 4 h) for all its sizes; its jobs off plans of size 2 draw theirs
    assert np.median(drawn.duration[vision]) == pytest.approx(14400, rel=0.25)
    off = (drawn.share == "training/vision") & (drawn.training_plan == None)  # noqa: E711 (elementwise)
    assert np.median(drawn.duration[off & (drawn.instances == 2)]) == pytest.approx(900, rel=0.1)
    assert np.median(drawn.duration[off & (drawn.instances == 1)]) == pytest.approx(3600, rel=0.15)


def _hours(columns: dict[str, np.ndarray], share: str) -> float:
    mine = columns["share"] == share
    failures = np.nan_to_num(columns.get("failures", np.zeros(mine.shape[0])))
    ran = np.where(failures > 0, columns.get("fail_after", columns["duration"]), columns["duration"])
    return float((columns["instances"][mine] * ran[mine]).sum() / 3600)


def _as_history(path: Path) -> Path:
    """The drawn jobs as a history records them: a failed job's status and the time it ran."""
    columns = read_columns(path)
    failed = np.nan_to_num(columns["failures"]) > 0
    lines = ["share,instance_type,instances,submit_at,duration,observed_status"]
    for index in range(columns["share"].shape[0]):
        ran = columns["fail_after"][index] if failed[index] else columns["duration"][index]
        lines.append(f"{columns['share'][index]},{columns['instance_type'][index]},{int(columns['instances'][index])},"
                     f"{columns['submit_at'][index]},{ran},{'FAILED' if failed[index] else 'SUCCEEDED'}")
    history = path.with_name("history.csv")
    history.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return history


def _round_trip(tmp_path: Path, topology: Path, source: Path, fit_options: list[str]) -> tuple[float, float, dict]:
    """Draw the source month (seed 11), fit it, draw the fitted profile with 5 seeds: source and mean hours."""
    month = tmp_path / "month.csv"
    out = CliRunner().invoke(main, ["generate", str(topology), "--workload-profile", str(source), "--days",
                                    str(DAYS), "--seed", "11", "-o", str(month)])
    assert out.exit_code == 0, out.output
    history = _as_history(month)
    fitted = tmp_path / "fitted.yaml"
    out = CliRunner().invoke(main, ["fit", str(history), "--topology", str(topology), "-o", str(fitted),
                                    *fit_options])
    assert out.exit_code == 0, out.output
    hours = []
    for seed in range(5):
        again = tmp_path / f"again-{seed}.csv"
        out = CliRunner().invoke(main, ["generate", str(topology), "--workload-profile", str(fitted), "--days",
                                        str(DAYS), "--seed", str(seed), "-o", str(again)])
        assert out.exit_code == 0, out.output
        hours.append(_hours(read_columns(again), "training/research"))
    profile = yaml.safe_load(fitted.read_text(encoding="utf-8"))["shares"]["training/research"]
    return _hours(read_columns(month), "training/research"), float(np.mean(hours)), profile


def test_a_workload_whose_run_time_depends_on_size_round_trips_within_15_percent(tmp_path):
    topology, source = _files(tmp_path, TOPOLOGY, BY_SIZE)
    truth, again, profile = _round_trip(tmp_path, topology, source, [])
    assert set(profile["run_time_by_size"]) == {1, 4, 16}  # each size has at least 50 completed jobs in the month
    assert again == pytest.approx(truth, rel=0.15), again / truth
    # the same month fitted with one law per share (no size reaches the threshold) comes back far too low
    pooled_dir = tmp_path / "pooled"
    pooled_dir.mkdir()
    truth, pooled, profile = _round_trip(pooled_dir, topology, source, ["--min-jobs-per-size", "100000"])
    assert "run_time_by_size" not in profile
    assert pooled < 0.85 * truth, pooled / truth


def test_bad_run_times_by_size_are_one_line_each_exit_2(tmp_path):
    topology, _ = _files(tmp_path, TOPOLOGY, BY_SIZE)
    bad = tmp_path / "bad.yaml"
    bad.write_text("""\
shares:
  research:
    jobs_per_day: 10
    sizes: {1: 0.5, 4: 0.5}
    run_time_by_size:
      8: {law: {distribution: lognormal, median: 60, sigma: 1}}
  ads:
    jobs_per_day: 10
    run_time_by_size: {}
""", encoding="utf-8")
    out = CliRunner().invoke(main, ["generate", str(topology), "--workload-profile", str(bad), "--days", "1",
                                    "-o", str(tmp_path / "jobs.csv")])
    assert out.exit_code == 2 and "Traceback" not in out.output, out.output
    assert out.output.splitlines() == [
        f"error: {bad}:9: shares.ads.run_time_by_size: names no size: give at least one (e.g. 8: {{law: ...}}), or "
        "leave run_time_by_size out to draw every size from run_time, got a mapping"]
    bad.write_text("""\
shares:
  research:
    jobs_per_day: 10
    sizes: {1: 0.5, 4: 0.5}
    run_time_by_size:
      8: {law: {distribution: lognormal, median: 60, sigma: 1}}
      4: {law: {distribution: weibull, median: 60}}
      1: {law: {distribution: lognormal, median: -5, sigma: 1}, maximum: 10, quantilse: {}}
      two: {law: {distribution: exponential, mean: 60}}
""", encoding="utf-8")
    out = CliRunner().invoke(main, ["generate", str(topology), "--workload-profile", str(bad), "--days", "1",
                                    "-o", str(tmp_path / "jobs.csv")])
    assert out.exit_code == 2 and "Traceback" not in out.output, out.output
    lines = out.output.splitlines()
    assert all(line.startswith(f"error: {bad}:") for line in lines), lines
    text = "\n".join(lines)
    assert f"{bad}:7: shares.research.run_time_by_size[4].law: input tag 'weibull'" in text
    assert f"{bad}:8: shares.research.run_time_by_size[1].law.median: input should be greater than 0, got -5" in text
    assert (f"{bad}:8: shares.research.run_time_by_size[1].quantilse: unknown key 'quantilse' (did you mean "
            "'quantiles'?)") in text
    assert f"{bad}:9: shares.research.run_time_by_size.two: the key: input should be a valid integer" in text
    assert len(lines) == 4, lines  # size 8 (not among the sizes) is checked once the schema holds: below
    bad.write_text("""\
shares:
  research:
    jobs_per_day: 10
    sizes: {1: 0.5, 4: 0.5, 16: 0}
    run_time_by_size:
      8: {law: {distribution: lognormal, median: 60, sigma: 1}}
      16: {law: {distribution: lognormal, median: 60, sigma: 1}}
""", encoding="utf-8")
    out = CliRunner().invoke(main, ["generate", str(topology), "--workload-profile", str(bad), "--days", "1",
                                    "-o", str(tmp_path / "jobs.csv")])
    assert out.exit_code == 2, out.output
    assert out.output.splitlines() == [
        f"error: {bad}:6: shares.research.run_time_by_size[8]: size 8 is not among the share's sizes (1, 4): no job of "
        "it would draw this run time",
        f"error: {bad}:7: shares.research.run_time_by_size[16]: size 16 is not among the share's sizes (1, 4): no job "
        "of it would draw this run time"]
    out = CliRunner().invoke(main, ["fit", str(tmp_path / "nothing.csv"), "--min-jobs-per-size", "0"])
    assert out.exit_code == 2 and "--min-jobs-per-size" in out.output, out.output
