"""What a sampled output says it shows: sample 1 of a recorded workload is the recorded jobs themselves (the
resamples are samples 2..N), every table is either the medians across the samples or titled as sample 1's, and a
seed that would repeat samples is refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from statistics import median

import pytest

from tests.chromium import needs_browser
from tests.policy_engine.cli.commands.test_samples import _sample_scenarios, files, run

__all__ = ["files"]


def test_sample_one_of_a_recorded_workload_is_the_recorded_jobs(files):
    from policy_engine.simulation.scenarios.samples import sample_for, samples_for
    from policy_engine.simulation.scenarios.workload import load_scenario

    loaded = load_scenario(files["scenario"])
    samples = samples_for(loaded, 4, 3)
    assert samples[0] == tuple(loaded.jobs)  # unresampled, unrenamed
    assert all(sample != samples[0] for sample in samples[1:])
    assert all("@" in job.name for sample in samples[1:] for job in sample)  # resamples: NAME@DAY
    assert [sample_for(loaded, number, 3) for number in range(4)] == list(samples)  # what each worker draws


def test_simulate_compare_and_diff_show_the_recorded_month_as_sample_1(files):
    code, plain, err = run("simulate", files["scenario"], "--format", "json")
    assert code == 0, err
    code, sampled, err = run("simulate", files["scenario"], "--samples", "3", "--workers", "1", "--format", "json")
    assert code == 0, err
    plain_data, sampled_data = json.loads(plain), json.loads(sampled)
    assert sampled_data["jobs"] == plain_data["jobs"] and sampled_data["summary"] == plain_data["summary"]
    assert sampled_data["samples"]["first_sample_recorded"] is True
    assert sampled_data["samples"]["jobs"][0] == len(plain_data["jobs"])

    designs = ["--topology", files["A"], "--topology", files["B"], "--workers", "1", "--format", "json"]
    code, plain, _ = run("compare", files["scenario"], *designs)
    code2, sampled, err = run("compare", files["scenario"], *designs, "--samples", "3")
    assert code == code2 == 0, err
    assert [run_["summary"] for run_ in json.loads(sampled)["runs"]] == \
           [run_["summary"] for run_ in json.loads(plain)["runs"]]

    change = ["diff", files["A"], files["B"], "--scenario", files["scenario"], "--fail-on", "never", "--format",
              "json"]
    plain_impact = json.loads(run(*change)[1])["impact"]
    sampled_impact = json.loads(run(*change, "--samples", "3", "--workers", "1")[1])["impact"]
    assert sampled_impact["preempted"] == plain_impact["preempted"]  # the jobs listed: the recorded ones
    for output in ("text", "markdown"):  # so no resampled NAME@DAY name reaches a list of jobs
        listed = run(*change[:-1], output, "--samples", "3", "--workers", "1")[1]
        assert not re.search(r"d\dj\d+@\d", listed), listed
    assert sampled_impact["first_sample_recorded"] is True


def test_simulate_type_table_holds_per_type_medians_of_the_samples(files):
    code, out, err = run("simulate", files["scenario"], "--samples", "3", "--seed", "2", "--workers", "1",
                         "--format", "json")
    assert code == 0, err
    types = {row["instance_type"]: row for row in json.loads(out)["samples"]["instance_types"]}
    singles = []
    for path in _sample_scenarios(files, 3, 2):  # the same three workloads, one plain run each
        code, single, err = run("simulate", path, "--format", "json")
        assert code == 0, err
        singles.append(json.loads(single)["summary"]["instance_types"])
    assert set(types) == set(singles[0])
    for name, row in types.items():
        for figure in ("jobs", "preemptions", "used_instance_hours", "utilisation"):
            values = [single.get(name, {}).get(figure, 0.0) for single in singles]
            assert row[figure] == pytest.approx(median(values))
            assert row["spread"][figure]["p10"] <= row[figure] <= row["spread"][figure]["p90"]
    code, text, _ = run("simulate", files["scenario"], "--samples", "3", "--seed", "2", "--workers", "1")
    preemptions = {name: f"{row['preemptions']:,.0f}" for name, row in types.items()}
    in_table = dict(re.findall(r"(ml\.\S+)\s+│\s+\d+\s+│.*│\s+(\d+)(?: \([^)]*\))?\s+│\s+[\d.,]+(?: \([^)]*\))?\s+│$",
                               text, re.MULTILINE))
    assert in_table == preemptions  # the text's per-type table shows those medians


@pytest.mark.parametrize("output", ["text", "markdown"])
def test_every_table_of_a_sampled_simulate_is_medians_or_titled_sample_1(tmp_path: Path, files, output):
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nper_instance_hour:\n  ml.p4d.24xlarge: 30\n  ml.g5.12xlarge: 5\n",
                      encoding="utf-8")
    code, out, err = run("simulate", files["scenario"], "--samples", "3", "--workers", "1", "--prices", prices,
                         "--format", output)
    assert code == 0, err
    if output == "text":  # every table's title (centred above its top border)
        lines = out.splitlines()
        titles = []
        for index, line in enumerate(lines):
            if line.lstrip().startswith("┏"):  # the title's lines: right above it, after what came before
                start = index
                while start > max(0, index - 3) and lines[start - 1].strip() and \
                        not lines[start - 1].lstrip().startswith(("└", "┗")):
                    start -= 1
                titles.append(" ".join(" ".join(lines[start:index]).split()))
        assert titles
        for title in titles:
            assert "across 3 samples" in title or "sample 1 of 3 (the recorded jobs): " in title, title
        assert "sample 1 of 3 (the recorded jobs): t=" in out  # the summary line too
    else:
        from tests import gfm

        html = gfm.html(out)
        assert "<h4>Sample 1 of 3 (the recorded jobs)</h4>" in html
        before, _ = out.split("#### Sample 1 of 3")
        assert "Per instance type across 3 samples, median (p10-p90)" in before
        assert "Per share and instance type across 3 samples, medians" in before
        assert "Sample 1 of 3 (the recorded jobs):" in before.split("| jobs |")[0]  # the headline table


@pytest.mark.parametrize("command", ["simulate", "compare", "diff"])
@pytest.mark.parametrize("seed", ["-1", str(2**63)])
def test_a_seed_out_of_range_is_one_line_and_exit_2(files, command, seed):
    args = {"simulate": ["simulate", files["scenario"]],
            "compare": ["compare", files["scenario"], "--topology", files["A"], "--topology", files["B"]],
            "diff": ["diff", files["A"], files["B"], "--scenario", files["scenario"]]}[command]
    code, out, err = run(*args, "--samples", "3", "--seed", seed)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and f"--seed {seed}: must be from 0 to" in err, err


def _page_text(path: Path, selector: str) -> str | None:
    """``selector``'s text on the page as headless Chromium shows it (``None``: no such element)."""
    from tests.chromium import headless_chromium, open_page

    with headless_chromium() as driver:
        open_page(driver, path)
        return driver.execute_script(f"const e = document.querySelector({json.dumps(selector)});"
                                     "return e === null ? null : e.innerText")


@needs_browser
def test_the_simulate_and_compare_pages_say_which_sample_they_show(files, tmp_path: Path):
    code, _, err = run("simulate", files["scenario"], "--samples", "3", "--workers", "1", "--report",
                       tmp_path / "sim")
    assert code == 0, err
    said = _page_text(tmp_path / "sim" / "index.html", "h1 ~ p.sample-one")
    assert said is not None and said.startswith("This page shows sample 1 of 3 (the recorded jobs) alone")
    longest = _page_text(tmp_path / "sim" / "index.html", "#worst-count")
    assert longest is not None
    code, _, err = run("simulate", files["scenario"], "--report", tmp_path / "one")
    assert code == 0, err
    page = (tmp_path / "one" / "index.html").read_text(encoding="utf-8")
    assert "sample-one" not in page  # one run: nothing to say
    assert "waited longest: their time RUNNABLE, from submission to placement plus each requeue" in page
    assert "before their first placement" not in page

    code, _, err = run("compare", files["scenario"], "--topology", files["A"], "--topology", files["B"],
                       "--samples", "3", "--seed", "5", "--workers", "1", "--report", tmp_path / "cmp")
    assert code == 0, err
    said = _page_text(tmp_path / "cmp" / "index.html", "h1 ~ p.sample-one")
    assert said == ("This page: the tables are medians across 3 samples with their p10-p90; the charts over time "
                    "and why jobs waited draw sample 1 of 3 (the recorded jobs) alone.")
