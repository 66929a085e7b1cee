"""``--samples N`` on ``simulate``, ``compare`` and ``diff --scenario`` (and ``tune``'s alias): N workloads by the one
resampler, each per-share figure's median and p10-p90, differences paired and marked significant, ``--samples 1``
as before, bad values refused in one line; a distributed run on a real Dask cluster started here."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli import main
from tests import gfm
from tests.chromium import headless_chromium, needs_browser, open_page
from tests.policy_engine.cli.commands.test_compare import DESIGN_A, DESIGN_B

DAY = 86_400


def week_jobs(seed: int = 5, days: int = 6) -> str:
    """A few days of jobs whose load differs day by day (so day-block samples differ)."""
    rng = random.Random(seed)
    rows = []
    for day in range(days):
        for index in range(rng.randrange(3, 16)):
            share = rng.choice(("vision", "language", "speech"))
            kind = "ml.g5.12xlarge" if share == "speech" else "ml.p4d.24xlarge"
            rows.append(f"  - {{name: d{day}j{index}, share: {share}, instance_type: {kind}, "
                        f"instances: {rng.choice((1, 2))}, submit_at: {day * DAY + rng.randrange(0, 20_000)}, "
                        f"duration: {rng.randrange(3_600, 30_000)}}}")
    return "jobs:\n" + "\n".join(rows) + "\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {"A": tmp_path / "A.yaml", "B": tmp_path / "B.yaml", "scenario": tmp_path / "week.yaml"}
    out["A"].write_text(DESIGN_A)
    out["B"].write_text(DESIGN_B)
    out["scenario"].write_text("topology: A.yaml\n" + week_jobs())
    return out


def run(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def _sample_scenarios(files: dict[str, Path], count: int, seed: int) -> list[Path]:
    """Each sample ``--samples`` draws, written as a scenario of its own (what one run of it would be)."""
    from policy_engine.simulation.scenarios.samples import samples_for
    from policy_engine.simulation.scenarios.workload import load_scenario

    loaded = load_scenario(files["scenario"])
    out = []
    for number, jobs in enumerate(samples_for(loaded, count, seed)):
        rows = [f"  - {{name: '{job.name}', share: {job.share.split('/')[1]}, instance_type: {job.instance_type}, "
                f"instances: {job.instances}, submit_at: {job.submit_at}, duration: {job.duration}}}" for job in jobs]
        path = files["scenario"].with_name(f"sample{number}.yaml")
        path.write_text("topology: A.yaml\njobs:\n" + "\n".join(rows) + "\n")
        out.append(path)
    return out


def test_compare_samples_are_medians_of_single_runs_and_differences_are_paired(files):
    code, out, err = run("compare", files["scenario"], "--topology", files["A"], "--topology", files["B"],
                         "--samples", "3", "--seed", "4", "--workers", "1", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["samples"] == 3 and data["seed"] == 4 and data["runs_sample"] == 1
    singles = []
    for path in _sample_scenarios(files, 3, 4):  # the same three workloads, one plain compare each
        code, single, err = run("compare", path, "--topology", files["A"], "--topology", files["B"], "--workers",
                                "1", "--format", "json")
        assert code == 0, err
        singles.append({(row["share"], row["instance_type"]): row for row in json.loads(single)["shares"]})
    changed = 0
    for row in data["shares"]:
        key = (row["share"], row["instance_type"])
        for figure, value in row["runs"]["A"].items():
            found = row["spread"]["A"][figure]
            assert found["p10"] <= found["p50"] <= found["p90"] and value == found["p50"]
            per_sample = [single[key]["runs"]["A"][figure] if key in single else 0.0 for single in singles]
            assert value == pytest.approx(sorted(per_sample)[1])  # the median of three
            paired = [single[key]["differences"]["B"][figure] if key in single else 0.0 for single in singles]
            difference = row["paired_differences"]["B"][figure]
            assert row["differences"]["B"][figure] == pytest.approx(sorted(paired)[1])
            low, high = difference["p10"], difference["p90"]
            assert difference["significant"] == (low > 0 or high < 0)
            changed += difference["significant"]
    assert changed  # the designs do differ on this workload


def test_compare_text_and_markdown_say_across_n_samples_and_never_call_noise_a_change(files):
    code, out, err = run("compare", files["scenario"], "--topology", files["A"], "--topology", files["B"],
                         "--samples", "5", "--workers", "1", "--format", "markdown")
    assert code == 0, err
    assert "across 5 samples" in out and "sample 1" in out
    verdict = next(line for line in out.splitlines() if "against A, across 5 samples: wait p95" in line)
    assert "no significant change for" in verdict
    tables = gfm.tables(out)
    per_share = [table for table in tables if table[0][0] == "share" and "instance type" not in table[0]
                 and any("wait" in head for head in table[0])]  # one per instance type (a pull request's)
    assert per_share
    for row in (row for table in per_share for row in table[1:]):
        for cell in row[1:]:  # median (p10-p90) → ... (difference or n.s.); alike in every sample: said once
            if "→" in cell:
                assert cell.endswith(")")
            if cell.endswith("(n.s.)"):
                assert "+" not in cell and "−" not in cell.rsplit("(", 1)[1]
    code, text, err = run("compare", files["scenario"], "--topology", files["A"], "--topology", files["B"],
                          "--samples", "5", "--workers", "1")
    assert code == 0 and text.splitlines()[1].startswith(
        "across 5 samples of the workload (sample 1 the recorded jobs, then seeds 1-4 resampled by day")


def test_samples_one_is_the_default_and_labelled_one_sample(files):
    from policy_engine.simulation.results.spread import ONE_SAMPLE

    for args in (["compare", files["scenario"], "--topology", files["A"], "--topology", files["B"], "--workers", "1"],
                 ["simulate", files["scenario"]],
                 ["diff", files["A"], files["B"], "--scenario", files["scenario"], "--fail-on", "never"]):
        for output in ("text", "json", "markdown"):
            plain = run(*args, "--format", output)
            assert plain[0] == 0, plain[2]
            assert run(*args, "--format", output, "--samples", "1") == plain  # the default, said or not
            assert "across 1 sample" not in plain[1] and "p10" not in plain[1]
            if output == "json":
                data = json.loads(plain[1])
                found = data["impact"] if args[0] == "diff" else data
                assert found["samples"] == ({"count": 1} if args[0] == "simulate" else 1)
            else:  # labelled where N samples say "across N samples": the first line, the headline, the table title
                said = " ".join(gfm.html(plain[1]).split()) if output == "markdown" else " ".join(plain[1].split())
                assert ONE_SAMPLE in said, (args[0], output)


def test_simulate_samples_give_each_shares_median_and_spread_and_name_the_first_sample(files):
    code, out, err = run("simulate", files["scenario"], "--samples", "3", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["samples"]["count"] == 3 and "jobs" in data["samples"]["first_sample_shows"]
    for share in data["shares"]:
        for figure, found in share["spread"].items():
            assert found["p10"] <= found["p50"] <= found["p90"]
            assert share[figure] == found["p50"]
    code, text, _ = run("simulate", files["scenario"], "--samples", "3")
    assert code == 0 and "Shares across 3 samples: median (p10-p90)" in text
    said = " ".join(text.split())
    assert "every table titled sample 1 (the jobs, the summary, --events, --report, the cost tables, the targets) " \
           "is the first sample's alone" in said


def test_diff_samples_pr_comment_says_across_n_samples(files):
    args = ["diff", files["A"], files["B"], "--scenario", files["scenario"], "--samples", "5", "--fail-on", "never"]
    code, out, err = run(*args, "--format", "markdown")
    assert code == 0, err
    html = gfm.html(out)
    assert "across 5 samples" in html and "sample 1 of 5" in html
    tables = gfm.tables(out)
    impact = [table for table in tables if table[0][:2] == ["share", "jobs"]]  # one per instance type
    cells = [cell for table in impact for row in table[1:] for cell in row[1:]]
    assert impact and any(" (" in cell for cell in cells)  # spreads shown
    assert all(cell.endswith(")") for cell in cells if "→" in cell)  # every change paired: a difference or n.s.
    code, out, _ = run(*args, "--format", "json")
    data = json.loads(out)["impact"]
    assert data["samples"] == 5
    rows = data["share_comparison"]
    assert rows and all(isinstance(found["significant"], bool)
                        for row in rows for found in row["paired_differences"]["with HEAD"].values())
    for row in data["shares"]:
        assert row["wait_p95_after"] == row["spread"]["wait_p95_after"]["p50"]


@pytest.mark.parametrize("value", ["0", "-1", "abc"])
@pytest.mark.parametrize("command", ["simulate", "compare", "diff", "tune"])
def test_bad_sample_counts_are_one_line_and_exit_2(files, command, value):
    args = {"simulate": ["simulate", files["scenario"]],
            "compare": ["compare", files["scenario"], "--topology", files["A"], "--topology", files["B"]],
            "diff": ["diff", files["A"], files["B"], "--scenario", files["scenario"]],
            "tune": ["tune", files["scenario"], "--vary", "vision.borrow_limit=0,100", "--workers", "1"]}[command]
    code, out, err = run(*args, "--samples", value)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--samples" in err, err


def test_a_seed_without_samples_is_refused_not_ignored(files):
    code, _, err = run("simulate", files["scenario"], "--seed", "3")
    assert code == 2
    assert err.strip() == "error: --seed 3: it seeds the workload samples; add --samples N (N of at least 2)"


def test_samples_run_on_a_real_dask_cluster_with_the_figures_of_an_in_process_run(files):
    from dask.distributed import LocalCluster

    compare = ["compare", files["scenario"], "--topology", files["A"], "--topology", files["B"], "--samples", "3",
               "--format", "json"]
    diff = ["diff", files["A"], files["B"], "--scenario", files["scenario"], "--samples", "3", "--fail-on", "never",
            "--format", "json"]
    simulate = ["simulate", files["scenario"], "--samples", "3", "--format", "json"]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1") as cluster:
        on_cluster = [run(*command, "--scheduler", cluster.scheduler_address) for command in (compare, diff, simulate)]
        assert len(cluster.scheduler_info["workers"]) == 2
    here = [run(*command, "--workers", "1") for command in (compare, diff, simulate)]
    assert all(code == 0 for code, _, _ in (*on_cluster, *here))
    assert json.loads(on_cluster[0][1])["shares"] == json.loads(here[0][1])["shares"]
    assert json.loads(on_cluster[1][1])["impact"] == json.loads(here[1][1])["impact"]
    assert json.loads(on_cluster[2][1]) == json.loads(here[2][1])


def test_plan_jobs_keep_their_day_in_every_resample():
    from policy_engine.simulation.core.jobs import JobSpec
    from policy_engine.simulation.scenarios.samples import resample

    jobs = [JobSpec(f"j{day}", "q/s", "ml.p5.48xlarge", 1, 1, day * DAY + 100.0, 3600.0) for day in range(5)]
    plan = JobSpec("plan", "q/s", "ml.p5.48xlarge", 4, 1, 2 * DAY + 5.0, 3600.0, training_plan="p")
    for sample in resample([*jobs, plan], 4, seed=9):
        assert sample.count(plan) == 1  # the same job, same time, same name
        assert len(sample) == 6 and all(job.name.rsplit("@", 1)[-1].isdigit() for job in sample if job is not plan)


def test_a_profile_scenario_samples_its_seeds_and_the_first_is_its_own_workload(tmp_path: Path):
    (tmp_path / "topology.yaml").write_text(
        "service_environments: [{name: e, capacity: {ml.g5.xlarge: 4}}]\n"
        "job_queues: [{name: q, service_environment: e, shares: [\n"
        "  {name: A, capacity: {ml.g5.xlarge: 2}, strategy: LEND_AND_BORROW},\n"
        "  {name: B, capacity: {ml.g5.xlarge: 2}, strategy: LEND}]}]\n", encoding="utf-8")
    (tmp_path / "profile.yaml").write_text("shares:\n  A: {jobs_per_day: 40}\n  B: {jobs_per_day: 20}\n",
                                           encoding="utf-8")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("topology: topology.yaml\nworkload: {profile: profile.yaml, days: 2, seed: 7}\n",
                        encoding="utf-8")
    code, plain, err = run("simulate", scenario, "--format", "json")
    assert code == 0, err
    code, sampled, err = run("simulate", scenario, "--samples", "3", "--format", "json")
    assert code == 0, err
    plain_data, sampled_data = json.loads(plain), json.loads(sampled)
    assert sampled_data["samples"]["seed"] == 7  # the profile's own seed: sample 1 is the scenario's jobs
    assert sampled_data["jobs"] == plain_data["jobs"] and sampled_data["summary"] == plain_data["summary"]
    assert len(set(sampled_data["samples"]["jobs"])) > 1  # seeds 7, 8, 9 draw different workloads
    code, other, _ = run("simulate", scenario, "--samples", "3", "--seed", "8", "--format", "json")
    assert json.loads(other)["jobs"] != plain_data["jobs"]


@needs_browser
def test_the_compare_page_with_samples_draws_and_marks_noise_in_chromium(files, tmp_path):
    report = tmp_path / "report"
    code, _, err = run("compare", files["scenario"], "--topology", files["A"], "--topology", files["B"],
                       "--samples", "3", "--workers", "1", "--report", report)
    assert code == 0, err
    with headless_chromium() as driver:
        open_page(driver, report / "index.html")
        deadline = time.monotonic() + 30
        while driver.execute_script("return document.documentElement.dataset.rendered") == "false" and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        assert driver.execute_script("return document.documentElement.dataset.rendered") == "true"
        said = driver.execute_script("return document.querySelector('p.samples').textContent")
        assert said.startswith("across 3 samples of the workload") and "show sample 1" in said
        cells = driver.execute_script("return Array.from(document.querySelectorAll('#shares td.num'))"
                                      ".map(c => c.textContent)")
        assert cells and all(cell.endswith(")") for cell in cells if "→" in cell)  # each change paired
        assert all("(+" not in cell and "(−" not in cell for cell in cells if "→" not in cell)  # said once: alike
        assert any(" (" in cell for cell in cells)  # spreads shown
        every = driver.execute_script("return Array.from(document.querySelectorAll('table td.num'))"
                                      ".map(c => c.textContent)")
        assert any(cell.endswith("(n.s.)") for cell in every)  # noise in some table, never called a change
        bars = driver.execute_script("return document.querySelectorAll('#chart-deltas svg path, "
                                     "#chart-deltas svg rect').length")
        assert bars > 0


PRICES = "currency: USD\nper_instance_hour: {ml.g5.12xlarge: 7, ml.p4d.24xlarge: 32}\n"


def test_diff_bill_and_instance_hours_lost_are_medians_of_each_samples_replay_with_paired_significance(files):
    prices = files["scenario"].with_name("prices.yaml")
    prices.write_text(PRICES)
    args = ["diff", files["A"], files["B"], "--fail-on", "never", "--prices", prices]
    code, out, err = run(*args, "--scenario", files["scenario"], "--samples", "3", "--seed", "2", "--format", "json")
    assert code == 0, err
    impact = json.loads(out)["impact"]
    singles = []
    for path in _sample_scenarios(files, 3, 2):  # each sample replayed on its own: what the medians are of
        code, single, err = run(*args, "--scenario", path, "--format", "json")
        assert code == 0, err
        singles.append(json.loads(single)["impact"])
    bill = impact["bill_comparison"]
    for side, label in (("before", "without the change"), ("after", "with HEAD")):
        totals = sorted(single["costs"][side]["bill"]["total"] for single in singles)
        assert bill["runs"][label]["total"] == pytest.approx(totals[1])
        assert bill["spread"][label]["total"]["p10"] == pytest.approx(totals[0] + 0.2 * (totals[1] - totals[0]))
    paired = sorted(s["costs"]["after"]["bill"]["total"] - s["costs"]["before"]["bill"]["total"] for s in singles)
    found = bill["paired_differences"]["with HEAD"]["total"]
    assert found["p50"] == pytest.approx(paired[1]) and found["significant"] == (found["p10"] > 0 or found["p90"] < 0)
    lost = {row["instance_type"]: row for row in impact["instance_hours_lost_by_type"]}
    for kind, row in lost.items():
        per_sample = sorted(sum(r["instance_hours_lost_before"] for r in single["shares"] if r["instance_type"] == kind)
                            for single in singles)
        assert row["runs"]["without the change"]["instance_hours_lost"] == pytest.approx(per_sample[1], abs=1e-6)
        assert set(row["paired_differences"]["with HEAD"]["instance_hours_lost"]) == {"p10", "p50", "p90",
                                                                                      "significant"}
    code, text, _ = run(*args, "--scenario", files["scenario"], "--samples", "3", "--seed", "2")
    line = next(line for line in text.splitlines() if line.strip().startswith("bill for"))
    assert "across 3 samples" in line and " (" in line.split("→")[0]  # a median (p10-p90) each side
    assert ("no significant change" in line.split("; waste")[0]) != found["significant"]
    lost_line = next(line for line in text.splitlines() if "instance-hours lost because of the change" in line)
    for kind, row in lost.items():
        part = lost_line.split(kind, 1)[1]
        assert part.strip().startswith("no significant change") != row["paired_differences"]["with HEAD"][
            "instance_hours_lost"]["significant"]


def test_simulate_samples_bill_is_the_median_of_each_samples_bill(files):
    prices = files["scenario"].with_name("prices.yaml")
    prices.write_text(PRICES)
    code, out, err = run("simulate", files["scenario"], "--samples", "3", "--prices", prices, "--format", "json")
    assert code == 0, err
    found = json.loads(out)["costs"]["spread"]
    totals = []
    for path in _sample_scenarios(files, 3, 0):
        code, single, err = run("simulate", path, "--prices", prices, "--format", "json")
        assert code == 0, err
        totals.append(json.loads(single)["costs"]["bill"]["total"])
    totals.sort()
    assert found["total"]["p50"] == pytest.approx(totals[1]) and found["total"]["p90"] <= totals[2] + 1e-6
    code, text, _ = run("simulate", files["scenario"], "--samples", "3", "--prices", prices)
    assert "The bill across 3 samples: " in " ".join(text.split())


def test_compare_samples_bill_and_instance_hours_lost_have_spreads_and_paired_differences(files):
    prices = files["scenario"].with_name("prices.yaml")
    prices.write_text(PRICES)
    code, out, err = run("compare", files["scenario"], "--topology", files["A"], "--topology", files["B"],
                         "--samples", "3", "--workers", "1", "--prices", prices, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    everything = next(row for row in data["costs"] if row["instance_type"] == "all types")
    assert set(everything["spread"]["A"]["total"]) == {"p10", "p50", "p90"}
    assert "significant" in everything["paired_differences"]["B"]["total"]
    for row in data["instance_types"]:
        spread = row["spread"]["A"]["instance_hours_lost"]
        assert spread["p10"] <= row["runs"]["A"]["instance_hours_lost"] == spread["p50"] <= spread["p90"]
