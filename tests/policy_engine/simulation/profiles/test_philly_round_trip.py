"""A profile fitted on a window of the real Microsoft Philly trace regenerates that window within the bounds.

The window (tests/data/README.md: eight weeks of the trace's jobs that passed or failed on more than one GPU
and ran at least an hour) goes through the example converter (virtual cluster -> share, one GPU -> one
ml.p3.2xlarge instance), ``batch-quota fit`` and five seeds of ``batch-quota generate`` for the same 56 days,
as a user would run them. For every share with at least 200 completed jobs, the mean of the five drawn
workloads is within 15 % of the window on job count and instance-hours, within 20 % on the completed jobs'
run-time p50 and p95, and within 5 points on every size's share of the jobs. Run times are drawn by size
(``run_time_by_size``): drawn independently of size, 7f04ca's instance-hours came back 22 % low.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.simulation.profiles.fitting import read_columns

from .test_accounting_exports import ROOT, example, write_rows

DATA = ROOT / "tests" / "data" / "philly"
WINDOW_DAYS = 56
SEEDS = range(5)
#: Completed jobs a share needs before the round trip holds it to the bounds (the issue's threshold).
CHECKED_FROM = 200


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    converter = example("examples/philly/job_log_to_jobs.py")
    jobs = converter.read_job_log(DATA / "philly-window.json.gz")
    rows, skipped = converter.convert(jobs, "ml.p3.2xlarge", 1, "America/Los_Angeles")
    assert skipped == {} and len(rows) == len(jobs) == 3321
    return write_rows(tmp_path_factory.mktemp("philly") / "philly.csv", converter.COLUMNS, rows)


def test_the_window_converts_by_virtual_cluster_and_gpus(history):
    columns = read_columns(history)
    first = int(np.argmin(columns["submitted_epoch_ms"]))
    # application_1506638472019_16095: vc ee9e8c, submitted 2017-10-09 00:17:52 PDT, 8 GPUs, passed
    assert columns["name"][first] == "application_1506638472019_16095"
    assert (columns["share"][first], columns["instances"][first]) == ("ee9e8c", 8)
    assert columns["submitted_epoch_ms"][first] == 1_507_533_472_000
    assert columns["observed_status"][first] == "SUCCEEDED"
    assert set(columns["share"].tolist()) == {"0e4a51", "103959", "11cb48", "2869ce", "51b7ef", "6214e9",
                                              "6c71a0", "7f04ca", "b436b2", "e13805", "ee9e8c"}
    assert set(columns["observed_status"].tolist()) == {"SUCCEEDED", "FAILED"}


def _source_stats(columns: dict[str, np.ndarray], share: str) -> dict[str, float]:
    mine = columns["share"] == share
    completed = mine & (columns["observed_status"] == "SUCCEEDED")
    sizes = columns["instances"][mine]
    return {"jobs": float(mine.sum()),
            "hours": float((sizes * columns["duration"][mine]).sum() / 3600),
            "p50": float(np.quantile(columns["duration"][completed], 0.5)),
            "p95": float(np.quantile(columns["duration"][completed], 0.95)),
            **{f"size{size:g}": float((sizes == size).mean()) for size in np.unique(sizes)}}


def _drawn_stats(columns: dict[str, np.ndarray], share: str, keys: list[str]) -> dict[str, float]:
    mine = columns["share"] == share
    failures = np.nan_to_num(columns.get("failures", np.zeros(mine.shape[0])))
    completed = mine & (failures == 0)
    # a failing job holds its instances until it fails: the hours it runs, as a history records them
    ran = np.where(failures > 0, columns.get("fail_after", columns["duration"]), columns["duration"])
    sizes = columns["instances"][mine]
    return {"jobs": float(mine.sum()), "hours": float((sizes * ran[mine]).sum() / 3600),
            "p50": float(np.quantile(columns["duration"][completed], 0.5)),
            "p95": float(np.quantile(columns["duration"][completed], 0.95)),
            **{key: float((sizes == float(key[4:])).mean()) for key in keys if key.startswith("size")}}


def test_a_profile_fitted_on_the_philly_window_regenerates_it_within_the_bounds(history, tmp_path):
    topology = DATA / "topology.yaml"
    fitted = tmp_path / "fitted.yaml"
    out = CliRunner().invoke(main, ["fit", str(history), "--topology", str(topology),
                                    "--timezone", "America/Los_Angeles", "-o", str(fitted)])
    assert out.exit_code == 0, out.output
    profile = yaml.safe_load(fitted.read_text(encoding="utf-8"))
    assert profile["timezone"] == "America/Los_Angeles"
    assert profile["shares"]["philly/ee9e8c"]["weekly_cycle"] is not None  # eight weeks: a weekly cycle is read
    # 7f04ca's 4- and 8-instance jobs (164 and 77 completed) get laws of their own; 16 and 32 (13) are pooled
    assert set(profile["shares"]["philly/7f04ca"]["run_time_by_size"]) == {4, 8}
    drawn = _drawn(topology, fitted, tmp_path)
    source = read_columns(history)
    checked = []
    results = {}
    for share in sorted(set(source["share"].tolist())):
        if ((source["share"] == share) & (source["observed_status"] == "SUCCEEDED")).sum() < CHECKED_FROM:
            continue
        checked.append(share)
        truth = _source_stats(source, share)
        keys = list(truth)
        mean = {key: float(np.mean([_drawn_stats(d, f"philly/{share}", keys)[key] for d in drawn])) for key in keys}
        results[share] = (truth, mean)
    for share, (truth, mean) in results.items():
        off = {key: f"{mean[key] / truth[key] - 1:+.1%}" for key in ("jobs", "hours", "p50", "p95")}
        assert mean["jobs"] == pytest.approx(truth["jobs"], rel=0.15), (share, off)
        assert mean["hours"] == pytest.approx(truth["hours"], rel=0.15), (share, off)
        assert mean["p50"] == pytest.approx(truth["p50"], rel=0.2), (share, off)
        assert mean["p95"] == pytest.approx(truth["p95"], rel=0.2), (share, off)
        for key in truth:
            if key.startswith("size"):
                assert abs(mean[key] - truth[key]) <= 0.05, (share, key, mean[key], truth[key])
    assert checked == ["103959", "6c71a0", "7f04ca", "ee9e8c"]  # the virtual clusters with 200 completed jobs


def _drawn(topology: Path, fitted: Path, folder: Path) -> list[dict[str, np.ndarray]]:
    drawn = []
    for seed in SEEDS:
        jobs = folder / f"drawn-{seed}.csv"
        out = CliRunner().invoke(main, ["generate", str(topology), "--workload-profile", str(fitted),
                                        "--days", str(WINDOW_DAYS), "--seed", str(seed), "-o", str(jobs)])
        assert out.exit_code == 0, out.output
        drawn.append(read_columns(jobs))
    return drawn


def test_drawn_independently_of_size_a_cluster_s_instance_hours_come_back_low(history, tmp_path):
    """What run times by size fix: with one law per share (no size has enough jobs for its own), 7f04ca's long
    8-instance runs are averaged away with its 4-instance ones."""
    topology = DATA / "topology.yaml"
    fitted = tmp_path / "pooled.yaml"
    out = CliRunner().invoke(main, ["fit", str(history), "--topology", str(topology), "--timezone",
                                    "America/Los_Angeles", "--min-jobs-per-size", "100000", "-o", str(fitted)])
    assert out.exit_code == 0, out.output
    assert not any("run_time_by_size" in share for share in yaml.safe_load(fitted.read_text())["shares"].values())
    source = read_columns(history)
    truth = _source_stats(source, "7f04ca")["hours"]
    hours = np.mean([_drawn_stats(d, "philly/7f04ca", [])["hours"] for d in _drawn(topology, fitted, tmp_path)])
    assert hours < 0.85 * truth, hours / truth
