"""``tune`` answers a platform team can deploy: topology knobs only, a margin over the current topology,
the nearest miss of an infeasible constraint, transfers that keep a pair's total, promise changes said,
assumptions tested apart, and robust choices over resampled workloads (on a real Dask LocalCluster)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.cli.app import main
from policy_engine.sweep.candidate import topology_for
from policy_engine.sweep.grammar import VaryError, parse_vary
from policy_engine.sweep.guarantee_policy import GuaranteePolicy
from policy_engine.sweep.samples import DAY, day_blocks, resample
from tests.builders import GPU, guarantee, share, topology
from tests.policy_engine.sweep.scenarios import KNOWN_OPTIMUM

TRANSFER = "transfer(q/B,q/A).capacity.ml.g5.xlarge"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def known(tmp_path: Path) -> Path:
    path = tmp_path / "known.yaml"
    path.write_text(KNOWN_OPTIMUM, encoding="utf-8")
    return path


@pytest.mark.parametrize("axis", ["settings.backfill=true,false", "settings.victim_policy=fewest-instances",
                                  "settings.min_runtime=60", "workload.scale=0.5..2:0.5"])
def test_assumptions_are_refused_as_axes_with_one_line(known: Path, axis: str):
    result = invoke("tune", str(known), "--vary", axis, "--budget", "2", "--workers", "1", "--quiet")
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert "is a simulator assumption, not a knob AWS has" in line and "--assume" in line


def test_a_topology_path_is_refused_as_an_assumption(known: Path):
    result = invoke("tune", str(known), "--vary", f"{TRANSFER}=0..2", "--assume", "q/A.strategy=LEND",
                    "--budget", "2", "--workers", "1", "--quiet")
    assert result.exit_code == 2 and "is a topology knob: vary it with --vary" in result.output


def test_below_the_margin_the_answer_is_to_keep_the_current_topology(known: Path, tmp_path: Path):
    out = tmp_path / "best.yaml"
    # B's limit never makes A's third job start sooner: every candidate's figure equals the current one
    result = invoke("tune", str(known), "--vary", "q/B.capacity.ml.g5.xlarge=3..5", "--budget", "3", "--workers",
                    "1", "--quiet", "-o", str(out))
    assert result.exit_code == 0, result.output
    [answer] = [line for line in result.output.splitlines() if line.startswith("keep the current topology")]
    assert answer.startswith("keep the current topology: the best candidate improves min max(wait_p95) by 0.0%, "
                             "less than the margin 5.0% (--min-gain)")
    assert answer.endswith("nothing written")
    assert "best candidate: q/B.capacity.ml.g5.xlarge=" in result.output
    assert not out.exists()
    data = json.loads(invoke("tune", str(known), "--vary", "q/B.capacity.ml.g5.xlarge=3..5", "--budget", "3",
                             "--workers", "1", "--quiet", "--format", "json").stdout)
    assert data["keep_current"] is True and data["recommended"] is None and data["best"] is not None
    # every candidate ties: the best is the one changing nothing, never another team's knob that does not matter
    assert data["best"]["values"] == data["current"]["values"]
    assert ", the current topology itself;" in answer


def test_the_margin_is_relative_to_the_current_value(known: Path):
    # moving 2 of B's instances to A removes the 2-hour wait: a 100 % gain passes any margin up to 100 %
    passed = json.loads(invoke("tune", str(known), "--vary", f"{TRANSFER}=0..2", "--budget", "3", "--workers", "1",
                               "--quiet", "--format", "json", "--min-gain", "1").stdout)
    assert passed["recommended"]["values"] == {TRANSFER: 2} and passed["gain"] == pytest.approx(1.0)
    # moving 1 halves the wait: a 50 % gain is below a 60 % margin
    kept = json.loads(invoke("tune", str(known), "--vary", f"{TRANSFER}=0..1", "--budget", "2", "--workers", "1",
                             "--quiet", "--format", "json", "--min-gain", "0.6").stdout)
    assert kept["keep_current"] and kept["gain"] == pytest.approx(0.5)


def test_an_infeasible_constraint_names_the_nearest_candidate_and_the_misses(known: Path):
    result = invoke("tune", str(known), "--vary", f"{TRANSFER}=0..1", "--budget", "2", "--workers", "1", "--quiet",
                    "--constraint", "max(wait_p95) <= 100", "--constraint", "max(preemptions) <= 0")
    assert result.exit_code == 1
    assert "no candidate met every constraint" in result.output
    # transfer 1: A's third job waits 3600 s, 3500 over the bound (a duration); the preemption constraint holds
    assert f"nearest candidate: {TRANSFER}=1: max(wait_p95) <= 100 missed by 58m 20s" in result.output
    assert "max(preemptions) <= 0 missed" not in result.output


def test_follow_and_drop_change_promises_and_say_so(known: Path, tmp_path: Path):
    data = yaml.safe_load(KNOWN_OPTIMUM)
    data["topology"]["guarantees"] = [{"share": "q/B", "min_capacity": {GPU: 5}}]
    path = tmp_path / "promised.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    args = ["tune", str(path), "--vary", f"{TRANSFER}=0..2", "--budget", "3", "--workers", "1", "--quiet"]
    kept = json.loads(invoke(*args, "--format", "json").stdout)
    assert {r["values"][TRANSFER]: r["status"] for r in kept["runs"]} == {0: "ok", 1: "invalid", 2: "invalid"}
    out = tmp_path / "followed.yaml"
    followed = invoke(*args, "--guarantee-policy", "follow", "-o", str(out))
    assert followed.exit_code == 0, followed.output
    assert "promise changes made by --guarantee-policy follow" in followed.output
    assert "WEAKENED" in followed.output and "q/B min_capacity ml.g5.xlarge: 5 -> 3" in followed.output
    assert yaml.safe_load(out.read_text())["guarantees"] == [{"share": "q/B", "min_capacity": {GPU: 3}}]
    base = tmp_path / "base.yaml"
    base.write_text(yaml.safe_dump(data["topology"]), encoding="utf-8")
    review = invoke("diff", str(base), str(out))
    assert review.exit_code == 1 and "declared guarantee(s) weakened" in review.output  # intended: needs review
    dropped = json.loads(invoke(*args, "--guarantee-policy", "drop", "--format", "json").stdout)
    assert [(p["kind"], p["share"]) for p in dropped["promise_changes"]] == [("removed", "q/B")]


def test_transfer_paths_are_checked():
    scenario = topology(share("A", 2, "LEND"), share("B", 2, "LEND"))
    for path, says in [("transfer(training/A,training/A).capacity.ml.g5.xlarge=1", "two different shares"),
                       ("transfer(training/A,nope).capacity.ml.g5.xlarge=1", "nope"),
                       ("transfer(training/A,training/B).capacity.ml.p4d.24xlarge=1", "neither"),
                       ("transfer(training/A,training/B).capacity.ml.g5.xlarge=1.5", "not an integer")]:
        with pytest.raises(VaryError, match=says):
            parse_vary([path], scenario)
    with pytest.raises(VaryError, match="varies too"):
        parse_vary(["transfer(A,B).capacity.ml.g5.xlarge=-1..1", "A.capacity.ml.g5.xlarge=1,2"], scenario)


SHARES = st.lists(st.tuples(st.integers(1, 20), st.integers(1, 20)), min_size=2, max_size=5)


@settings(max_examples=60, deadline=None)
@given(limits=SHARES, moves=st.lists(st.integers(-25, 25), min_size=1, max_size=4), data=st.data())
def test_transfers_conserve_the_pairs_total_and_the_environment(limits, moves, data):
    shares = [share(f"S{i}", capacity={GPU: a, "ml.p4d.24xlarge": b}, strategy="LEND") for i, (a, b)
              in enumerate(limits)]
    base = topology(*shares)
    pairs = []
    for move in moves:
        i, j = data.draw(st.sampled_from([(i, j) for i in range(len(limits)) for j in range(len(limits)) if i != j]))
        kind = data.draw(st.sampled_from([GPU, "ml.p4d.24xlarge"]))
        pairs.append((f"transfer(training/S{i},training/S{j}).capacity.{kind}={move}", i, j, kind))
    try:
        axes = parse_vary([p for p, *_ in pairs], base)
    except VaryError as error:
        assert all("varies too" in problem or "twice" in problem for problem in error.problems)
        return
    after = topology_for(base, axes, {axis.path: axis.values[0] for axis in axes})
    totals = lambda t: {k: sum(s.capacity.get(k, 0) for _, s in t.shares()) for k in (GPU, "ml.p4d.24xlarge")}  # noqa: E731
    assert totals(after) == totals(base)
    assert after.service_environments == base.service_environments
    for _, i, j, kind in pairs:
        before_pair = limits[i][kind != GPU] + limits[j][kind != GPU]
        got = {s.name: s.capacity[kind] for _, s in after.shares()}
        assert got[f"S{i}"] + got[f"S{j}"] == before_pair


def test_day_blocks_are_resampled_with_replacement_seeded():
    scenario_jobs = load_scenario_jobs(days=4)
    samples = resample(scenario_jobs, 3, seed=11)
    assert samples == resample(scenario_jobs, 3, seed=11) and samples != resample(scenario_jobs, 3, seed=12)
    for sample in samples:
        assert len({job.name for job in sample}) == len(sample)  # a day drawn twice keeps unique names
        assert max(job.submit_at for job in sample) < 4 * DAY
        sizes = sorted(len(block) for block in day_blocks(sample))
        assert set(sizes) <= {len(block) for block in day_blocks(scenario_jobs)}


def load_scenario_jobs(days: int):
    from tests.builders import job

    # day d has d + 1 jobs, so every block is recognisable by its size
    return [job(f"d{d}-{i}", "A", at=d * DAY + 60 * i, duration=600) for d in range(days) for i in range(d + 1)]


def test_workload_samples_rank_by_the_mean_and_count_wins_on_a_local_cluster(tmp_path: Path):
    data = yaml.safe_load(KNOWN_OPTIMUM)
    data["jobs"] = [{"name": f"{team}{d}-{i}", "share": team.upper(), "submit_at": d * DAY + 10 * i,
                     "duration": 3600} for d in range(4) for team in "ab" for i in range(3 if d % 2 else 2)]
    path = tmp_path / "days.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = invoke("tune", str(path), "--vary", f"{TRANSFER}=0..2", "--budget", "3", "--workers", "2", "--quiet",
                    "--workload-samples", "5", "--seed", "3", "--minimize", "wait_p95", "--format", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["workload_samples"] == 5 and 0 <= out["wins"] <= 5
    spread = out["spread"]["best"]["values"]
    assert len(spread) == 5
    # the run's figures are the mean over the samples, which the spread lists
    assert out["best"]["summary"]["wait_p95"] == pytest.approx(sum(spread) / 5)
    if out["recommended"]:
        assert out["wins"] * 2 > 5
    else:
        assert "workload samples" in out["keep_reason"] or "less than" in out["keep_reason"]
    text = invoke("tune", str(path), "--vary", f"{TRANSFER}=0..2", "--budget", "3", "--workers", "1", "--quiet",
                  "--workload-samples", "5", "--seed", "3", "--minimize", "wait_p95").output
    assert "spread over 5 workload samples" in text and f"{out['wins']} of 5" in text


def test_a_bill_objective_over_workload_samples_prices_each_sample(tmp_path: Path):
    """Each sample keeps its own bill ledger: the spread lists each sample's bill and the run's bill is their
    mean (it raised ``ValueError`` on a sample with no ledger)."""
    data = yaml.safe_load(KNOWN_OPTIMUM)
    data["jobs"] = [{"name": f"{team}{d}-{i}", "share": team.upper(), "submit_at": d * DAY + 10 * i,
                     "duration": 3600 * (1 + i + d % 3)} for d in range(4) for team in "ab" for i in range(2)]
    path = tmp_path / "days.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nper_instance_hour: {ml.g5.xlarge: 2.5}\n", encoding="utf-8")
    result = invoke("tune", str(path), "--vary", f"{TRANSFER}=0..1", "--budget", "2", "--workers", "1", "--quiet",
                    "--workload-samples", "3", "--seed", "1", "--minimize", "bill", "--prices", str(prices),
                    "--format", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    bills = out["spread"]["best"]["values"]
    assert len(bills) == 3 and len(set(bills)) > 1  # the samples differ, so their bills do
    assert out["best"]["costs"]["bill"]["total"] == pytest.approx(sum(bills) / 3)


def test_a_scenario_whose_actions_name_jobs_cannot_be_resampled(tmp_path: Path):
    data = yaml.safe_load(KNOWN_OPTIMUM)
    data["actions"] = [{"at": 10, "update_priority": {"job": "a1", "priority": 5}}]
    path = tmp_path / "named.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = invoke("tune", str(path), "--vary", f"{TRANSFER}=0..2", "--budget", "2", "--workers", "1", "--quiet",
                    "--workload-samples", "3")
    assert result.exit_code == 2 and "renames its jobs" in result.output, result.output


def test_guarantee_policy_follow_keeps_what_the_candidate_proves():
    base = topology(share("A", 4, "LEND"), share("B", 4, "LEND_AND_BORROW"),
                    guarantees=[guarantee("training/B", min_capacity={GPU: 4}, burst_capacity={GPU: 8})])
    axes = parse_vary(["transfer(training/B,training/A).capacity.ml.g5.xlarge=1"], base)
    followed = topology_for(base, axes, {axes[0].path: 1}, GuaranteePolicy.FOLLOW)
    assert followed.guarantees[0].min_capacity == {GPU: 3}
    assert followed.guarantees[0].burst_capacity == {GPU: 8}  # still reachable by borrowing A's 5
    assert topology_for(base, axes, {axes[0].path: 1}, GuaranteePolicy.DROP).guarantees == ()
    assert topology_for(base, axes, {axes[0].path: 0}, GuaranteePolicy.DROP).guarantees == base.guarantees


def test_sweep_takes_transfer_axes_into_its_dataset(known: Path, tmp_path: Path):
    import pyarrow.parquet as pq

    out = tmp_path / "runs"
    result = invoke("sweep", str(known), "--vary", f"{TRANSFER}=-1..2", "--workers", "1", "--quiet", "--out",
                    str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert [r["values"][TRANSFER] for r in runs] == [-1, 0, 1, 2]
    assert [r["status"] for r in runs] == ["invalid", "ok", "ok", "ok"]  # A's limit 0 is refused by check
    for run in runs[1:]:  # the two limits always add up to 6
        limits = {s["share"]: s["limit"] for s in run["shares"]}
        assert limits["q/A"] + limits["q/B"] == 6 and limits["q/A"] == 1 + run["values"][TRANSFER]
    table = pq.read_table(out)
    assert str(table.schema.field(TRANSFER).type) == "int64"


def test_a_scenario_naming_a_profile_samples_seeds_of_the_profile(tmp_path: Path):
    from policy_engine.simulation.scenarios.workload import load_scenario
    from policy_engine.sweep.samples import samples_for

    (tmp_path / "topology.yaml").write_text(
        "service_environments: [{name: e, capacity: {ml.g5.xlarge: 4}}]\n"
        "job_queues: [{name: q, service_environment: e, shares: [\n"
        "  {name: A, capacity: {ml.g5.xlarge: 2}, strategy: LEND_AND_BORROW},\n"
        "  {name: B, capacity: {ml.g5.xlarge: 2}, strategy: LEND}]}]\n", encoding="utf-8")
    (tmp_path / "profile.yaml").write_text("shares:\n  A: {jobs_per_day: 40}\n  B: {jobs_per_day: 20}\n",
                                           encoding="utf-8")
    (tmp_path / "scenario.yaml").write_text("topology: topology.yaml\nworkload: {profile: profile.yaml, days: 2}\n",
                                            encoding="utf-8")
    scenario = load_scenario(tmp_path / "scenario.yaml")
    samples = samples_for(scenario, 3, seed=5)
    expected = [tuple(scenario.profile.jobs(scenario.topology, seed=5 + n)[0]) for n in range(3)]
    assert list(samples) == expected and len({tuple(j.submit_at for j in s) for s in samples}) == 3
    assert samples == samples_for(scenario, 3, seed=5)  # seeded: the same samples every run


def test_sweep_takes_the_guarantee_policy_tune_takes(known: Path, tmp_path: Path):
    """The two commands share their axis options: a transfer over a share with a guarantee is valid in a sweep
    once the policy lets the guarantee follow or drop, as in tune."""
    data = yaml.safe_load(KNOWN_OPTIMUM)
    data["topology"]["guarantees"] = [{"share": "q/B", "min_capacity": {GPU: 5}}]
    path = tmp_path / "promised.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    args = ["sweep", str(path), "--vary", f"{TRANSFER}=0..2", "--workers", "1", "--quiet", "--format", "json"]

    def statuses(*extra: str) -> dict:
        result = invoke(*args, *extra)
        assert result.exit_code in (0, 1), result.output
        return {r["values"][TRANSFER]: r["status"] for r in json.loads(result.stdout)["runs"]}

    assert statuses() == {0: "ok", 1: "invalid", 2: "invalid"}
    assert statuses("--guarantee-policy", "follow") == {0: "ok", 1: "ok", 2: "ok"}
    assert statuses("--guarantee-policy", "drop") == {0: "ok", 1: "ok", 2: "ok"}
    for command in ("sweep", "tune"):
        assert "--guarantee-policy [keep|follow|drop]" in invoke(command, "--help").output
