"""``diff --scenario S --at T``: the jobs a deploy preempts, the waits it changes, the hours it loses."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.changes.impact import replay
from policy_engine.cli.app import main
from policy_engine.inputs.loading import LoadError
from policy_engine.inputs.renames import Renames, parse_renames
from policy_engine.simulation.scenarios.workload import Scenario
from tests.builders import GPU, job, share
from tests.builders import simulated_topology as topology

BASE = topology(3, share("S1", 2, "RESERVE"), share("S2", 1, "LEND"))
HEAD = topology(3, share("S1", 1, "RESERVE"), share("S2", 2, "LEND"))
JOBS = [job("a", "S1", duration=100), job("b", "S1", duration=100), job("x", "S2", duration=100),
        job("y", "S2", at=30, duration=10)]


def test_lowered_limit_preempts_the_job_above_it_when_the_lender_needs_its_capacity():
    impact = replay(Scenario(BASE, JOBS), BASE, HEAD, Renames(), at=10)
    assert [(p["name"], p["preemptions_before"], p["preemptions_after"]) for p in impact.preempted] == [("b", 0, 1)]
    # b ran 30 s of its first attempt for nothing (no checkpoints): 30 instance-seconds
    assert impact.instance_hours_lost == pytest.approx(30 / 3600)
    waits = {(w["share"], w["instance_type"]): (w["mean_wait_before"], w["mean_wait_after"]) for w in impact.waits}
    assert waits[("q/S2", GPU)] == (35.0, 0.0)  # y no longer waits for x to end


def test_deploying_after_the_work_is_done_changes_nothing():
    impact = replay(Scenario(BASE, JOBS), BASE, HEAD, Renames(), at=1000)
    assert impact.preempted == [] and impact.waits == [] and impact.instance_hours_lost == 0


def test_removed_or_renamed_share_rejects_later_jobs_and_says_so():
    head = topology(3, share("S1", 2, "RESERVE"), share("S3", 1, "LEND"))
    impact = replay(Scenario(BASE, JOBS), BASE, head, parse_renames(["q/S2=q/S3"], BASE, head), at=10)
    assert impact.never_finish == ["y"]
    assert [(r["status"], r["cause"], r["deleted_share"]) for r in impact.never_finish_reasons] == \
        [("FAILED", "rejected-by-disabled-share", True)]
    assert any("rejected: submitted after the deploy to a share it deletes or replaces (1 job(s))" in note
               for note in impact.notes)
    # deployed after y was submitted (at 30), y waits in S2's line and never starts there
    impact = replay(Scenario(BASE, JOBS), BASE, head, parse_renames(["q/S2=q/S3"], BASE, head), at=50)
    assert [(r["status"], r["cause"], r["deleted_share"]) for r in impact.never_finish_reasons] == \
        [("RUNNABLE", None, True)]
    assert any("never started: queued on a share the deploy deletes or replaces" in note for note in impact.notes)


def test_a_scenario_naming_shares_base_lacks_is_bad_input():
    other = topology(3, share("Z", 3, "RESERVE"))
    with pytest.raises(LoadError, match="BASE has no quota share q/S1"):
        replay(Scenario(BASE, JOBS), other, HEAD, Renames(), at=0)


def test_cli_replay_in_every_format(write_file):
    dump = lambda t: yaml.safe_dump(t.model_dump(mode="json"))  # noqa: E731
    base, head = write_file("base.yaml", dump(BASE)), write_file("head.yaml", dump(HEAD))
    rows = [{"name": j.name, "share": j.share, "submit_at": j.submit_at, "duration": j.duration} for j in JOBS]
    scenario = write_file("s.yaml", yaml.safe_dump({"topology": "base.yaml", "jobs": rows}))
    runner = CliRunner()
    result = runner.invoke(main, ["diff", str(base), str(head), "--scenario", str(scenario), "--at", "10",
                                  "--format", "json"])
    assert result.exit_code == 1  # a lowered limit is a hazard
    data = json.loads(result.output)["impact"]
    assert data["at"] == 10 and [p["name"] for p in data["preempted"]] == ["b"]
    text = runner.invoke(main, ["diff", str(base), str(head), "--scenario", str(scenario), "--at", "10"]).output
    assert "b (q/S1, 1 ml.g5.xlarge)" in text
    # y no longer waits for x: S2's p95 wait 70 s -> 0; b's preemption shows on S1 (compare's table, one row each)
    rows = {cells[0]: cells for cells in _text_rows(text)}
    assert rows["q/S2"][:6] == ["q/S2", "ml.g5.xlarge", "2 → 2 (±0)", "0s → 0s (±0)", "1m 10s → 0s (−1m 10s)",
                                "0 → 0 (±0)"]
    assert rows["q/S1"][5] == "0 → 1 (+1)"
    # b, preempted when y arrives at 30, is RUNNABLE again until a ends at 100: 70 s of wait (time RUNNABLE)
    assert rows["q/S1"][4] == "0s → 1m 10s (+1m 10s)"
    markdown = runner.invoke(main, ["diff", str(base), str(head), "--scenario", str(scenario), "--at", "10",
                                    "--format", "markdown"]).output
    assert "jobs preempted because of the change: **1 more often, 0 less often (net +1)**" in markdown
    # the harm first: the headline names the most harmed share and its figure, in text and markdown (b's requeue
    # wait now counts, and worsens S1 more than its one preemption)
    one = "Most harmed in 1 sample of the workload (--samples N shows the spread): "
    assert f"**{one}q/S1: ml.g5.xlarge wait p95 0s -&gt; 1m 10s, 2.2x**" in markdown
    assert f"{one}q/S1: ml.g5.xlarge wait p95 0s -> 1m 10s, 2.2x" in text
    assert "jobs preempted because of the change: 1 more often, 0 less often (net +1)" in text


def test_the_replay_judges_each_side_against_its_own_targets_in_compares_cells(write_file):
    """BASE's targets on the replay without the change, HEAD's with it, lined up and rendered as compare does."""
    from policy_engine.foundation.model import Target
    from tests import gfm

    target = (Target(share="q/S2", wait_p95="1m"),)
    dump = lambda t: yaml.safe_dump(t.model_dump(mode="json"))  # noqa: E731
    base = write_file("base.yaml", dump(BASE.model_copy(update={"targets": target})))
    head = write_file("head.yaml", dump(HEAD.model_copy(update={"targets": target})))
    rows = [{"name": j.name, "share": j.share, "submit_at": j.submit_at, "duration": j.duration} for j in JOBS]
    scenario = write_file("s.yaml", yaml.safe_dump({"topology": "base.yaml", "jobs": rows}))
    args = ["diff", str(base), str(head), "--scenario", str(scenario), "--at", "10"]
    data = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)["impact"]["targets"]
    # S2's p95 wait is 70 s without the change (missed by 10 s) and 0 with it
    assert [(t["actual"], t["met"], t["margin"]) for t in data["before"]] == [(70, False, -10)]
    assert [(t["actual"], t["met"], t["margin"]) for t in data["after"]] == [(0, True, 60)]
    markdown = CliRunner().invoke(main, [*args, "--format", "markdown"]).output
    table = next(t for t in gfm.tables(markdown) if t[0][:3] == ["share", "criterion", "goal"])
    assert table[1] == ["q/S2", "wait p95", "≤ 1m 00s", "1m 10s: MISSED, missed by 10s",
                        "0s: met, 1m 00s to spare", "−1m 10s"]
    assert f"<summary>Impact per share on {GPU}" in markdown  # one table per instance type: no type column
    shares = [t for t in gfm.tables(markdown) if t[0][:2] == ["share", "jobs"]]
    # what each share pays, in instance-hours without --prices (compare's header), in the type's last part
    assert [t for t in gfm.tables(markdown) if t[0][0] == "share"][-2][0][-1] == "cost (instance-hours, its bill)"
    # a figure alike in both runs once, a changed one before → after (difference)
    assert ["q/S2", "2", "0s", "1m 10s → 0s (−1m 10s)", "0"] in [row[:5] for row in shares[0]]


def _text_rows(text: str) -> list[list[str]]:
    """The cells of each one-line row of the rich tables in a text report (``│ a │ b │``)."""
    return [[cell.strip() for cell in line.strip().strip("│").split("│")]
            for line in text.splitlines() if line.lstrip().startswith("│")]


def test_the_per_share_impact_has_compares_columns_in_text_and_markdown(write_file):
    """diff --scenario's per-share table is compare's: the same header (figures, units, the cost's convention)
    and cells, in markdown and in text; the legend under it is one whole sentence."""
    from tests import gfm

    dump = lambda t: yaml.safe_dump(t.model_dump(mode="json"))  # noqa: E731
    base, head = write_file("base.yaml", dump(BASE)), write_file("head.yaml", dump(HEAD))
    rows = [{"name": j.name, "share": j.share, "submit_at": j.submit_at, "duration": j.duration} for j in JOBS]
    scenario = write_file("s.yaml", yaml.safe_dump({"topology": "base.yaml", "jobs": rows}))
    diff = ["diff", str(base), str(head), "--scenario", str(scenario), "--at", "10"]
    compare = ["compare", str(scenario), "--topology", str(base), "--topology", str(head), "--workers", "1"]
    runner = CliRunner()

    def shares(markdown: str) -> list[list[list[str]]]:
        """The per-share tables: one per instance type, split where a row would wrap."""
        return [t for t in gfm.tables(markdown) if t[0][0] == "share" and t[0][1] not in ("criterion",)]

    compared = shares(runner.invoke(main, [*compare, "--format", "markdown"]).output)
    replayed_markdown = runner.invoke(main, [*diff, "--format", "markdown"]).output
    replayed = shares(replayed_markdown)
    # the same figures in the same order (where a type's table splits depends on its cells' widths)
    figures = ["jobs", "wait p50", "wait p95", "preemptions", "own utilisation (%)", "instance-hours lost",
               "cost (instance-hours, its bill)"]
    assert [h for t in compared for h in t[0][1:]] == [h for t in replayed for h in t[0][1:]] == figures
    # the same alignment as compare's: names left, figures right
    separator = next(line for line in replayed_markdown.splitlines() if line.startswith("| --- | ---:"))
    assert separator.count("---:") == len(replayed[0][0]) - 1
    # both run BASE's jobs on BASE first: q/S1's first cells agree (compare: from 0; diff: the replay without)
    assert sorted(row[:2] for row in replayed[0][1:]) == sorted(row[:2] for row in compared[0][1:])
    page = gfm.html(replayed_markdown)
    legend = page[page.index("<em>runs: the replay without the change"):]
    legend = legend[:legend.index("</em>")]
    assert legend.endswith("over the billing period (docs/costs.md). A single value: the same in every run.")
    assert "then in parentheses each later run minus the first" in legend and "preempted at or after" in legend
    text = runner.invoke(main, diff).output
    header = next(line for line in text.splitlines() if "share" in line and "instance type" in line
                  and line.lstrip().startswith("┃"))
    for column in ("jobs", "wait p50", "wait p95", "preemptions", "own utilisation (%)", "instance-hours lost"):
        assert f" {column} " in header, header
    assert "mean wait" not in text
    assert "over the billing period (docs/costs.md)." in " ".join(
        line.strip() for line in text.splitlines())


def test_text_lists_the_worst_20_preempted_jobs_and_counts_the_rest(write_file):
    """29 jobs are preempted because of the change: text and markdown show the worst 20, JSON all 29."""
    base = topology(31, share("S1", 30, "RESERVE"), share("S2", 1, "LEND"))
    head = topology(31, share("S1", 1, "RESERVE"), share("S2", 30, "LEND"))
    jobs = ([job(f"s1-{i:02d}", "S1", duration=100) for i in range(30)]
            + [job(f"s2-{i:02d}", "S2", at=30, duration=10) for i in range(30)])
    dump = lambda t: yaml.safe_dump(t.model_dump(mode="json"))  # noqa: E731
    files = write_file("base.yaml", dump(base)), write_file("head.yaml", dump(head))
    rows = [{"name": j.name, "share": j.share, "submit_at": j.submit_at, "duration": j.duration} for j in jobs]
    scenario = write_file("s.yaml", yaml.safe_dump({"topology": "base.yaml", "jobs": rows}))
    args = ["diff", *map(str, files), "--scenario", str(scenario), "--at", "10"]
    data = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)["impact"]
    assert len(data["preempted"]) == 29
    text = CliRunner().invoke(main, args).output
    listed = [line for line in text.splitlines() if "preempted 0 -> 1 time(s)" in line]
    assert [line.split()[0] for line in listed] == [job["name"] for job in data["preempted"][:20]]
    assert "    ... and 9 more (the 20 worst shown; --format json lists them all)" in text.splitlines()


def test_a_job_lost_to_its_preemption_retries_is_said_so_not_blamed_on_a_deleted_share(write_file):
    """b may be preempted 0 times (preemptionRetriesBeforeTermination 0): the lowered limit preempts it once, so
    it FAILS; the reason is the simulator's cause, never "a deleted or replaced share" (no share is deleted)."""
    jobs = [job("a", "S1", duration=100), job("b", "S1", duration=100, preemption_retries=0),
            job("x", "S2", duration=100), job("y", "S2", at=30, duration=10)]
    impact = replay(Scenario(BASE, jobs), BASE, HEAD, Renames(), at=10)
    assert impact.never_finish == ["b"]
    (reason,) = impact.never_finish_reasons
    assert (reason["status"], reason["cause"], reason["detail"], reason["deleted_share"], reason["jobs"]) == \
        ("FAILED", "preemption-retries-exhausted", 0, False, 1)
    # the job that fails ends the replay with HEAD sooner: the other note says the utilisation window
    (note,) = [note for note in impact.notes if "succeed without the change" in note]
    assert [n for n in impact.notes if n != note] == [
        "utilisation is time-weighted over 0 to 1m 50s, the longer replay (without the change it ends at 1m 50s, "
        "with HEAD at 1m 40s): idle time after a replay's end counts as idle"]
    assert "preemptionRetriesBeforeTermination (0) exceeded (1 job(s))" in note
    assert "deleted" not in note and "replaced" not in note
    dump = lambda t: yaml.safe_dump(t.model_dump(mode="json"))  # noqa: E731
    base, head = write_file("base.yaml", dump(BASE)), write_file("head.yaml", dump(HEAD))
    rows = [{"name": j.name, "share": j.share, "submit_at": j.submit_at, "duration": j.duration,
             **({"preemption_retries": j.preemption_retries} if j.preemption_retries is not None else {})}
            for j in jobs]
    scenario = write_file("s.yaml", yaml.safe_dump({"topology": "base.yaml", "jobs": rows}))
    args = ["diff", str(base), str(head), "--scenario", str(scenario), "--at", "10"]
    for output in ("text", "markdown"):
        text = CliRunner().invoke(main, [*args, "--format", output]).output
        assert "PREEMPTED: preemptionRetriesBeforeTermination (0) exceeded (1 job(s))" in text, output
        assert "deleted or replaced" not in text, output
    data = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)["impact"]
    assert data["never_finish"] == ["b"] and data["never_finish_reasons"][0]["cause"] == "preemption-retries-exhausted"
