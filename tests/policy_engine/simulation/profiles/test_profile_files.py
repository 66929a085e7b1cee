"""A workload profile is checked like a topology: every problem one line naming the file, the share and the
rule, exit 2; a good one draws the jobs it describes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.foundation.diagnostics import LoadError
from policy_engine.inputs.loading import load_topology
from policy_engine.simulation.inputs.generate import share_reach
from policy_engine.simulation.profiles.loading import load_profile
from policy_engine.simulation.profiles.sampling import draw_workload

GOOD = """\
shares:
  vision:
    jobs_per_day: 200
    daily_cycle: [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.5, 1, 2, 3, 3, 3, 2, 3, 3, 3, 2, 1, 0.5, 0.2, 0.1, 0.1, 0.1, 0.1]
    weekly_cycle: [1.2, 1.2, 1.2, 1.2, 1.2, 0.5, 0.5]
    sizes: {1: 0.5, 2: 0.3, 4: 0.2}
    instance_types: {ml.p4d.24xlarge: 0.25, ml.g5.12xlarge: 0.75}
    run_time: {law: {distribution: lognormal, median: 3600, sigma: 1.0}}
    priorities: {1: 0.9, 5: 0.1}
  training/platform:
    jobs_per_day: 50
    bursts: {mean_jobs: 10, spread: 120}
    run_time: {law: {distribution: exponential, mean: 600}}
    early_failures: {fraction: 0.2, after: 0.5}
    preemption_retries: 2
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_problem_is_one_line_naming_file_line_share_and_rule(tmp_path, company):
    bad = write(tmp_path, """\
timezone: Mars/Olympus
shares:
  vision:
    jobs_per_dya: 3
    daily_cycle: [1, 2]
    sizes: {1: -1}
  nobody:
    jobs_per_day: 1
  speech:
    jobs_per_day: 1
    instance_types: {ml.p4d.24xlarge: 1}
    run_time: {law: {distribution: lognormal, median: 10}}
""")
    out = CliRunner().invoke(main, ["generate", str(company), "--workload-profile", str(bad), "--days", "1",
                                    "-o", str(tmp_path / "jobs.csv")])
    assert out.exit_code == 2, out.output
    lines = out.output.splitlines()
    assert "Traceback" not in out.output and all(line.startswith(f"error: {bad}:") for line in lines), lines
    text = "\n".join(lines)
    assert f"{bad}:4: shares.vision.jobs_per_dya: unknown key 'jobs_per_dya' (did you mean 'jobs_per_day'?)" in text
    assert "shares.vision.daily_cycle: expected 24 multipliers (one per hour), not all 0; 2 given" in text
    assert "shares.vision.sizes[1]: input should be greater than or equal to 0" in text
    assert "shares.speech.run_time.law.sigma: missing required key" in text
    # topology problems need a valid schema first: fixed, they are each one line too
    bad.write_text("timezone: Mars/Olympus\nshares:\n  nobody: {jobs_per_day: 1}\n"
                   "  speech: {jobs_per_day: 1, instance_types: {ml.p4d.24xlarge: 1}}\n", encoding="utf-8")
    with pytest.raises(LoadError) as raised:
        load_profile(bad, load_topology(company))
    assert raised.value.problems == [
        f"{bad}:1: timezone: unknown time zone 'Mars/Olympus' (an IANA name such as UTC or Europe/Paris)",
        f"{bad}:3: shares.nobody: no quota share 'nobody' (write QUEUE/SHARE or a unique SHARE name)",
        f"{bad}:4: shares.speech.instance_types.ml.p4d.24xlarge: training/speech has no limit for ml.p4d.24xlarge "
        "(its instance types: ml.g5.12xlarge)",
    ]


def test_a_profile_draws_its_rates_cycles_sizes_types_failures_and_bursts(tmp_path, company_topology):
    profile = load_profile(write(tmp_path, GOOD), company_topology)
    days = 28
    jobs = draw_workload(company_topology, profile, days, 5, share_reach(company_topology))
    vision = jobs.share == "training/vision"
    platform = jobs.share == "training/platform"
    assert vision.sum() == pytest.approx(200 * days, rel=0.05)
    assert platform.sum() == pytest.approx(50 * days, rel=0.25)  # bursts of 10: fewer, larger arrivals
    hours = (jobs.submit_at[vision] // 3600 % 24).astype(int)
    busy, quiet = np.isin(hours, [9, 10, 11]).sum(), np.isin(hours, [1, 2, 3]).sum()
    assert busy / quiet == pytest.approx(30, rel=0.3)
    weekday = (jobs.submit_at[vision] // 86400 % 7).astype(int)
    assert (weekday < 5).sum() / (weekday >= 5).sum() == pytest.approx(5 * 1.2 / (2 * 0.5), rel=0.1)
    p4d = jobs.instance_type[vision] == "ml.p4d.24xlarge"
    assert p4d.mean() == pytest.approx(0.25, abs=0.02)
    assert (jobs.instances[vision] == 4).mean() == pytest.approx(0.2, abs=0.02)
    assert np.median(jobs.duration[vision]) == pytest.approx(3600, rel=0.05)
    assert jobs.failures[platform].mean() == pytest.approx(0.2, abs=0.05)
    failed = platform & (jobs.failures == 1)
    assert np.allclose(jobs.fail_after[failed], np.round(jobs.duration[failed] * 0.5, 1))
    assert set(jobs.preemption_retries[platform]) == {2.0}
    gaps = np.diff(np.sort(jobs.submit_at[platform]))
    assert (gaps <= 120).mean() > 0.8  # most jobs arrive within a burst of the one before
    assert np.all(np.diff(jobs.submit_at) >= 0) and jobs.submit_at.max() < days * 86400


def test_the_same_seed_draws_the_same_jobs_and_scaling_one_team_leaves_the_others(tmp_path, company_topology):
    profile = load_profile(write(tmp_path, GOOD), company_topology)
    reach = share_reach(company_topology)
    a = draw_workload(company_topology, profile, 7, 1, reach)
    b = draw_workload(company_topology, profile, 7, 1, reach)
    assert np.array_equal(a.submit_at, b.submit_at) and np.array_equal(a.duration, b.duration)
    doubled = draw_workload(company_topology, profile, 7, 1, reach, {"training/vision": 2.0})
    assert (doubled.share == "training/vision").sum() == pytest.approx(2 * (a.share == "training/vision").sum(),
                                                                      rel=0.06)
    assert np.array_equal(doubled.submit_at[doubled.share == "training/platform"],
                          a.submit_at[a.share == "training/platform"])


def test_generate_with_a_profile_scales_adds_teams_and_refuses_what_it_cannot_do(tmp_path, company):
    profile = write(tmp_path, GOOD)
    out_csv = tmp_path / "jobs.csv"
    run = CliRunner().invoke
    ok = run(main, ["generate", str(company), "--workload-profile", str(profile), "--days", "7", "-o", str(out_csv),
                    "--scale", "vision=0.5", "--add-share", "safety=platform"])
    assert ok.exit_code == 0, ok.output
    text = out_csv.read_text(encoding="utf-8")
    assert text.splitlines()[0] == "name,share,instance_type,instances,priority,submit_at,duration," \
                                   "preemption_retries,failures,fail_after"
    assert "training/safety" in text
    assert "share(s) the profile does not name follow the generate options" in ok.output
    for args, message in [
        (["--jobs", "10"], "--jobs and --days are exclusive"),
        (["--scale", "nobody=2"], "--scale 'nobody=2': no quota share 'nobody'"),
        (["--scale", "speech=2"], "--scale 'speech=2': training/speech is not in the profile"),
        (["--scale", "vision=-1"], "the factor must be a finite number >= 0"),
        (["--add-share", "vision=platform"], "training/vision already has a profile; it is not overwritten"),
    ]:
        bad = run(main, ["generate", str(company), "--workload-profile", str(profile), "--days", "7",
                         "-o", str(out_csv), *args])
        assert bad.exit_code == 2 and message in bad.output and "Traceback" not in bad.output, (args, bad.output)
    no_days = run(main, ["generate", str(company), "--workload-profile", str(profile), "-o", str(out_csv)])
    assert no_days.exit_code == 2 and "give --days" in no_days.output
    no_profile = run(main, ["generate", str(company), "--scale", "vision=2", "-o", str(out_csv)])
    assert no_profile.exit_code == 2 and "--scale: only with --workload-profile" in no_profile.output


def test_without_a_profile_big_teams_submit_more_by_default_and_uniform_keeps_the_old_draw(tmp_path, company):
    counts = {}
    for mix in ("limit", "uniform"):
        out_csv = tmp_path / f"{mix}.csv"
        result = CliRunner().invoke(main, ["generate", str(company), "-o", str(out_csv), "--jobs", "20000",
                                           "--share-mix", mix])
        assert result.exit_code == 0, result.output
        rows = [line.split(",") for line in out_csv.read_text(encoding="utf-8").splitlines()[1:]]
        counts[mix] = {key: sum(1 for r in rows if (r[1], r[2]) == key) for key in {(r[1], r[2]) for r in rows}}
    total = 20000
    limits = {("training/vision", "ml.g5.12xlarge"): 8, ("training/platform", "ml.g5.12xlarge"): 4,
              ("training/language", "ml.p4d.24xlarge"): 6}
    all_limits = 6 + 8 + 6 + 8 + 8 + 6 + 2 + 4 + 2 + 10 + 4
    for key, limit in limits.items():
        assert counts["limit"][key] / total == pytest.approx(limit / all_limits, rel=0.1), key
    # uniform: a share first (1/8), then one of its types
    assert counts["uniform"][("training/platform", "ml.g5.12xlarge")] / total == pytest.approx(1 / 8, rel=0.1)
    assert counts["uniform"][("training/vision", "ml.g5.12xlarge")] / total == pytest.approx(1 / 16, rel=0.1)
