"""``compare``: designs side by side on one workload, in every format, on a real Dask LocalCluster, with the
refusals of bad input (one line each, exit 2) and ``--fail-on-target``."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli import main
from tests import gfm
from tests.chromium import headless_chromium, needs_browser, open_page

DESIGN_A = """service_environments:
  - name: gpu
    capacity: {ml.p4d.24xlarge: 4, ml.g5.12xlarge: 4}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: vision, capacity: {ml.p4d.24xlarge: 2, ml.g5.12xlarge: 2}, strategy: LEND_AND_BORROW}
      - {name: language, capacity: {ml.p4d.24xlarge: 2}, strategy: LEND_AND_BORROW}
      - {name: speech, capacity: {ml.g5.12xlarge: 2}, strategy: LEND}
targets:
  - {share: vision, instance_type: ml.p4d.24xlarge, wait_p95: 1h}
  - {share: language, wait_p50: 10m, max_preemptions_per_job: 0}
"""
#: B moves a p4d from language to vision and makes speech keep its instances
DESIGN_B = (DESIGN_A.replace("{name: vision, capacity: {ml.p4d.24xlarge: 2,", "{name: vision, capacity: "
                                                                             "{ml.p4d.24xlarge: 3,")
            .replace("{name: language, capacity: {ml.p4d.24xlarge: 2}", "{name: language, capacity: "
                                                                        "{ml.p4d.24xlarge: 1}")
            .replace("strategy: LEND}", "strategy: RESERVE}"))


def _jobs() -> str:
    rows = []
    for index in range(30):
        share = ("vision", "language", "speech")[index % 3]
        kind = "ml.g5.12xlarge" if share == "speech" or index % 2 else "ml.p4d.24xlarge"
        if share == "language":
            kind = "ml.p4d.24xlarge"
        rows.append(f"  - {{name: j{index}, share: {share}, instance_type: {kind}, instances: {1 + index % 2}, "
                    f"submit_at: {index * 120}, duration: {7200 + 600 * (index % 4)}}}")
    return "jobs:\n" + "\n".join(rows) + "\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {"A": tmp_path / "A.yaml", "B": tmp_path / "B.yaml", "scenario": tmp_path / "month.yaml"}
    out["A"].write_text(DESIGN_A)
    out["B"].write_text(DESIGN_B)
    out["scenario"].write_text("topology: A.yaml\n" + _jobs())
    return out


def run(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["compare", *map(str, args)])
    return result.exit_code, result.output


def designs(files: dict[str, Path], *names: str) -> list[str]:
    return [str(files["scenario"]), *(item for name in names for item in ("--topology", str(files[name])))]


def test_json_gives_each_design_and_each_difference_as_a_number(files):
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--format", "json")
    assert code == 0, out
    data = json.loads(out)
    assert [run["label"] for run in data["runs"]] == ["A", "B"] and data["baseline"] == "A"
    assert data["jobs"] == 30
    rows = {(row["share"], row["instance_type"]): row for row in data["shares"]}
    assert set(rows) == {("training/vision", "ml.p4d.24xlarge"), ("training/vision", "ml.g5.12xlarge"),
                         ("training/language", "ml.p4d.24xlarge"), ("training/speech", "ml.g5.12xlarge")}
    for row in data["shares"]:
        for key, value in row["differences"]["B"].items():
            assert isinstance(value, int | float)
            assert value == pytest.approx(row["runs"]["B"][key] - row["runs"]["A"][key])
    # the runs' own figures are simulate's: per type utilisation never summed, targets judged
    assert set(data["runs"][0]["utilisation"]) == {"ml.p4d.24xlarge", "ml.g5.12xlarge"}
    assert {t["criterion"] for t in data["targets"]} == {"wait_p95", "wait_p50", "max_preemptions_per_job"}
    vision = rows[("training/vision", "ml.p4d.24xlarge")]
    assert vision["runs"]["B"]["wait_p95"] <= vision["runs"]["A"]["wait_p95"]  # B gave vision a p4d more


def test_a_design_compared_with_itself_shows_zero_differences_everywhere(files):
    code, out = run(*designs(files, "A", "A"), "--workers", "1", "--format", "json")
    assert code == 0, out
    data = json.loads(out)
    assert [run["label"] for run in data["runs"]] == ["A", "A#2"]
    differences = [value for section in (data["shares"], data["instance_types"], [data["overall"]])
                   for row in section for value in row["differences"]["A#2"].values()]
    assert differences and all(value == 0 for value in differences)
    assert all(row["differences"]["A#2"] == {"actual": 0} for row in data["targets"])
    code, text = run(*designs(files, "A", "A"), "--workers", "1")
    assert "(±0)" in text and not re.search(r"\([+−]", text)


def test_markdown_is_gfm_tables_of_before_and_after_cells(files):
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--format", "markdown")
    assert code == 0, out
    tables = gfm.tables(out)
    # one table per instance type (split where a row would wrap), no type column; a changed figure reads
    # before → after (difference), one alike in both designs once
    shares = [t for t in tables if t[0][0] == "share" and t[0][1] not in ("criterion",)]
    assert shares and all("instance type" not in t[0] for t in shares)
    assert sum(len(t) - 1 for t in shares if t[0][1] == "jobs") == 4
    cells = [cell for t in shares for row in t[1:] for cell in row[1:]]
    assert any("→" in cell for cell in cells)
    assert all(("→" in cell) == ("(" in cell) for cell in cells)
    targets = next(t for t in tables if t[0][:3] == ["share", "criterion", "goal"])
    assert targets[0][3:] == ["A", "B", "B − A"]
    assert "&lt;" not in gfm.html(out) and "<br>" not in out


def test_two_scenarios_of_one_workload_compare_their_topologies(files, tmp_path):
    second = tmp_path / "second.yaml"
    second.write_text("topology: B.yaml\n" + _jobs())
    one = json.loads(run(files["scenario"], second, "--workers", "1", "--format", "json")[1])
    other = json.loads(run(*designs(files, "A", "B"), "--workers", "1", "--format", "json")[1])
    assert [list(row["runs"].values()) for row in one["shares"]] == [list(row["runs"].values())
                                                                     for row in other["shares"]]
    different = tmp_path / "other.yaml"
    different.write_text("topology: B.yaml\n" + _jobs().replace("submit_at: 120,", "submit_at: 121,"))
    code, out = run(files["scenario"], different, "--workers", "1")
    assert code == 2 and "jobs[1] (j1) differs" in out


def test_rename_lines_a_renamed_share_up_with_its_old_name(files, tmp_path):
    renamed = tmp_path / "R.yaml"
    renamed.write_text(DESIGN_A.replace("name: speech", "name: audio"))
    code, out = run(*designs(files, "A"), "--topology", renamed, "--workers", "1", "--format", "json")
    assert code == 2 and "has no quota share training/speech" in out
    # one line for the missing share, however many jobs name it, with the rename it most likely is
    (line,) = [line for line in out.splitlines() if "training/speech" in line]
    assert line.endswith("; if it is called otherwise there, say so: --rename training/speech=training/audio")
    assert "job(s) name it (the first: " in line
    code, out = run(*designs(files, "A"), "--topology", renamed, "--rename", "training/speech=training/audio",
                    "--workers", "1", "--format", "json")
    assert code == 0, out
    (row,) = [row for row in json.loads(out)["shares"] if row["share"] == "training/speech"]
    assert row["names"] == {"A": "training/speech", "R": "training/audio"}
    assert all(value == 0 for value in row["differences"]["R"].values())


@pytest.mark.parametrize(("renames", "expected"), [
    (["training/nope=training/x"], ["--rename training/nope=training/x: design A ({A}) has no quota share "
                                    "training/nope; design B ({B}) has no quota share training/x; design B#2 ({B}) "
                                    "has no quota share training/x"]),
    (["training/visoin=training/vision"], ["--rename training/visoin=training/vision: design A ({A}) has no quota "
                                           "share training/visoin (did you mean training/vision?); design A ({A}) "
                                           "already has a quota share training/vision, so it cannot be the new name "
                                           "of training/visoin"]),
    (["garbage"], ["--rename garbage: write OLD=NEW (QUEUE/SHARE=QUEUE/SHARE for a share, NAME=NAME for a job queue "
                   "or service environment)"]),
    (["=x"], ["--rename =x: write OLD=NEW (QUEUE/SHARE=QUEUE/SHARE for a share, NAME=NAME for a job queue or service "
              "environment)"]),
    (["training/a=b"], ["--rename training/a=b: both sides must be QUEUE/SHARE (a share) or both NAME (a queue or "
                        "environment)"]),
    (["nope=x"], ["--rename nope=x: design A ({A}) has no job queue or service environment nope; design B ({B}) has "
                  "no job queue or service environment x; design B#2 ({B}) has no job queue or service environment x"]),
    (["gpu=gpu2", "training/vision=training/vision"],
     ["--rename gpu=gpu2: design B ({B}) has no service environment gpu2 (did you mean gpu?); design B#2 ({B}) has "
      "no service environment gpu2 (did you mean gpu?)", "--rename training/vision=training/vision: OLD and NEW are "
                                                         "the same"]),
])
def test_each_bad_rename_is_one_line_whatever_is_wrong_with_it_and_exit_2(files, renames, expected):
    """A problem is said once: a design that lacks OLD, and every later design that lacks NEW, on the line of that
    --rename; a malformed value once, not once per later design."""
    result = CliRunner().invoke(main, ["compare", *designs(files, "A", "B", "B"), "--workers", "1",
                                       *(item for rename in renames for item in ("--rename", rename))])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"error: {line.format(A=files['A'], B=files['B'])}" for line in expected]


@pytest.mark.parametrize(("args", "expected"), [
    (("--topology", "A"), "at least two designs"),
    (("--topology", "A", "--topology", "missing"), "missing.yaml"),
    (("extra", "--topology", "A", "--topology", "B"), "--topology runs designs on one scenario's workload"),
    (("--topology", "A", "--topology", "A", "--workers", "1", "--scheduler", "tcp://127.0.0.1:1"),
     "--workers sizes the embedded local cluster"),
])
def test_bad_input_is_one_line_and_exit_2(files, tmp_path, args, expected):
    resolved = [str(files.get(arg, tmp_path / f"{arg}.yaml")) if arg in ("A", "B", "missing", "extra") else arg
                for arg in args]
    if "extra" in args:
        (tmp_path / "extra.yaml").write_text("topology: A.yaml\n" + _jobs())
    code, out = run(files["scenario"], *resolved)
    assert code == 2 and expected in out, out
    assert "Traceback" not in out


def test_fail_on_target_looks_at_the_last_design(files, tmp_path):
    strict = tmp_path / "S.yaml"
    strict.write_text(DESIGN_A.replace("wait_p95: 1h", "wait_p95: 1s"))
    lenient = tmp_path / "L.yaml"
    lenient.write_text(DESIGN_A.replace("wait_p95: 1h", "wait_p95: 30d").replace("wait_p50: 10m", "wait_p50: 30d")
                       .replace("max_preemptions_per_job: 0", "max_preemptions_per_job: 100"))
    assert run(*designs(files, "A"), "--topology", lenient, "--workers", "1", "--fail-on-target")[0] == 0
    code, out = run(*designs(files, "A"), "--topology", strict, "--workers", "1", "--fail-on-target")
    assert code == 1 and "MISSED" in out
    assert f"--fail-on-target: the last design, S ({strict}), " in out and " met; missed: " in out
    assert run(*designs(files, "A"), "--topology", strict, "--workers", "1")[0] == 0  # a report without the flag
    bare = tmp_path / "N.yaml"
    bare.write_text(DESIGN_A[:DESIGN_A.index("targets:")])
    result = CliRunner().invoke(main, ["compare", *designs(files, "A"), "--topology", str(bare), "--workers", "1",
                                       "--fail-on-target"])
    assert result.exit_code == 0 and "declares no targets, so none can be missed" in result.stderr


def test_designs_run_in_parallel_on_a_real_local_cluster_with_the_same_figures(files, tmp_path):
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1") as cluster:
        code, out = run(*designs(files, "A", "B"), "--scheduler", cluster.scheduler_address, "--format", "json",
                        "--report", tmp_path / "report")
        assert code == 0, out
        out = out[out.index("{"):]  # after the "wrote" line
        page = (tmp_path / "report" / "index.html").read_text()
        assert 'id="why-waited-0"' in page and 'id="why-waited-1"' in page  # attributed on the workers
        workers = cluster.scheduler_info["workers"]
        assert len(workers) == 2
    in_process = json.loads(run(*designs(files, "A", "B"), "--workers", "1", "--format", "json")[1])
    assert json.loads(out) == in_process


@needs_browser
def test_the_html_page_draws_every_design_without_network_or_console_errors(files, tmp_path):
    report = tmp_path / "report"
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--report", report, "--prices", prices)
    assert code == 0, out
    page = (report / "index.html").read_text()
    assert "http://" not in page.replace("http://www.w3.org", "") and "eval(" not in page.split("<script>")[0]
    with headless_chromium() as driver:
        ours, remote, _ = open_page(driver, report / "index.html")
        deadline = time.monotonic() + 30
        while driver.execute_script("return document.documentElement.dataset.rendered") == "false" and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        assert driver.execute_script("return document.documentElement.dataset.rendered") == "true"
        marks = dict(driver.execute_script("return Array.from(document.querySelectorAll('.chart'))"
                                           ".map(c => [c.id, c.querySelectorAll('svg path, svg rect').length])"))
        assert set(marks) == {"chart-type-0", "chart-type-1", "chart-waiting", "chart-deltas"}
        assert all(count > 5 for count in marks.values()), marks
        # every nonzero difference is a visible bar, however far the largest is (a symmetric log axis)
        deltas = json.loads(driver.execute_script("return document.getElementById('compare-data').textContent"))
        nonzero = sum(1 for row in deltas["deltas"] if row["hours"])
        widths = driver.execute_script("return Array.from(document.querySelectorAll('#chart-deltas .mark-rect path'))"
                                       ".map(p => p.getBBox().width)")
        assert nonzero and sum(1 for width in widths if width >= 1) == nonzero, (widths, deltas["deltas"])
        # one line per design in each chart over time
        legends = driver.execute_script("return Array.from(document.querySelectorAll('#chart-waiting .role-legend "
                                        "text')).map(t => t.textContent)")
        assert {"A", "B"} <= set(legends)
        # the shares' cost column, and each design's why-waited table whose causes add up to its waits
        headers = driver.execute_script("return Array.from(document.querySelectorAll('#shares th'))"
                                        ".map(t => t.textContent)")
        assert "cost (USD, its bill)" in headers
        # each design's bill and waste, per type and (priced) all types
        costs = driver.execute_script("return Array.from(document.querySelectorAll('#costs tr'))"
                                      ".map(r => Array.from(r.cells).map(c => c.textContent))")
        assert costs[0] == ["instance type", "on-demand", "plan fees", "bill", "waste: preempted attempts",
                            "waste: plan idle"]
        assert [row[0] for row in costs[1:]] == ["ml.p4d.24xlarge", "ml.g5.12xlarge", "all types"]
        assert all(" → " in cell for row in costs[1:] for cell in row[1:])
        for index in (0, 1):
            causes = driver.execute_script(f"return Array.from(document.querySelectorAll('#why-waited-{index} "
                                           "tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent))")
            assert causes and {row[0] for row in causes} <= {"training/vision", "training/language",
                                                            "training/speech"}
            shares = {(row[0], row[1]) for row in causes}
            for share in shares:
                percent = sum(float(row[4].rstrip("%")) for row in causes if (row[0], row[1]) == share)
                assert percent == pytest.approx(100, abs=0.5)
        assert [url for url in ours if not url.startswith(("file:", "data:"))] == [] and remote == []
        assert driver.get_log("browser") == []


PRICES = "currency: USD\nper_instance_hour: {ml.p4d.24xlarge: 30, ml.g5.12xlarge: 7}\n"


def test_a_design_compared_with_itself_costs_the_same(files, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    for chargeback in ("usage", "limit"):
        code, out = run(*designs(files, "A", "A"), "--workers", "1", "--format", "json", "--prices", prices,
                        "--chargeback", chargeback)
        assert code == 0, out
        data = json.loads(out)
        assert (data["cost_unit"], data["chargeback"]) == ("USD", chargeback)
        assert any(row["runs"]["A"]["cost"] != 0 for row in data["shares"])  # priced, not zeros
        assert all(row["differences"]["A#2"]["cost"] == 0 for row in data["shares"])


#: One share, one 2-instance job of 2 h: A's share holds 4 p4d, B's 2. Own use is 4 instance-hours either way; the
#: limit held over the 2 h run is 8 in A, 4 in B.
ONE_SHARE = """service_environments:
  - {name: gpu, capacity: {ml.p4d.24xlarge: 4}}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: solo, capacity: {ml.p4d.24xlarge: LIMIT}, strategy: RESERVE}
"""


@pytest.mark.parametrize(("chargeback", "unit", "bill"), [
    ("usage", "instance-hours", 4.0), ("limit", "instance-hours", 4.0), ("usage", "USD", 40.0), ("limit", "USD", 40.0),
])
def test_the_per_share_cost_is_what_the_share_pays_and_a_bigger_limit_costs_nothing(tmp_path, chargeback, unit, bill):
    """The job's 2 instances x 2 h RUNNING are billed whatever the limit (4 or 2): limits are caps, not capacity."""
    (tmp_path / "A.yaml").write_text(ONE_SHARE.replace("LIMIT", "4"))
    (tmp_path / "B.yaml").write_text(ONE_SHARE.replace("LIMIT", "2"))
    (tmp_path / "s.yaml").write_text("topology: A.yaml\njobs:\n  - {name: j, share: solo, instance_type: "
                                     "ml.p4d.24xlarge, instances: 2, submit_at: 0, duration: 7200}\n")
    (tmp_path / "prices.yaml").write_text("currency: USD\nper_instance_hour: {ml.p4d.24xlarge: 10}\n")
    priced = ("--prices", tmp_path / "prices.yaml") if unit == "USD" else ()
    args = (tmp_path / "s.yaml", "--topology", tmp_path / "A.yaml", "--topology", tmp_path / "B.yaml",
            "--workers", "1", "--chargeback", chargeback, *priced)
    code, out = run(*args, "--format", "json")
    assert code == 0, out
    data = json.loads(out)
    (row,) = data["shares"]
    assert row["runs"]["A"]["cost"] == pytest.approx(bill) and row["runs"]["B"]["cost"] == pytest.approx(bill)
    assert row["differences"]["B"]["cost"] == 0
    # each run carries simulate's whole costs object
    assert [run_["costs"]["bill"]["total"] for run_ in data["runs"]] == ([bill, bill] if unit == "USD" else [None] * 2)
    assert data["period"] == {"start": None, "end": None}
    header = f"cost ({unit}, its bill)"
    shares = next(t for t in gfm.tables(run(*args, "--format", "markdown")[1]) if header in t[0])
    column = shares[0].index(header)
    assert shares[1][column] == f"{bill:.2f}"  # alike in both designs: shown once


@pytest.mark.parametrize(("prices", "expected"), [
    ("currency: USD\nper_instance_hour: {ml.p4d.24xlarge: -3, ml.g5.12xlarge: 7}\n", "must be 0 or more, got -3"),
    ("currency: USD\nper_instance_hour: {ml.p4d.24xlarge: 30, ml.g5.12xlarge: 7, ml.p5.48xlarg: 9}\n",
     "per_instance_hour.ml.p5.48xlarg: the topology has no ml.p5.48xlarg, and it is no SageMaker instance type: a "
     "price for it would never apply (did you mean 'ml.p5.48xlarge'?)"),
    ("currency: USD\nper_instance_hour: {ml.p4d.24xlarge: 30}\n", "no price for ml.g5.12xlarge"),
    ("[1, 2\n", "YAML syntax error"),
    ("currency: USD\nper_instance_hour: {ml.p4d.24xlarge: .inf, ml.g5.12xlarge: 7}\n", "finite"),
    ("currency: dollars\nper_instance_hour: {ml.p4d.24xlarge: 30, ml.g5.12xlarge: 7}\n", "three-letter currency"),
])
def test_a_hostile_prices_file_is_one_line_and_exit_2(files, tmp_path, prices, expected):
    path = tmp_path / "prices.yaml"
    path.write_text(prices)
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--prices", path)
    assert code == 2 and "Traceback" not in out
    (line,) = out.splitlines()
    assert line.startswith("error: ") and "prices.yaml" in line and expected in line, out


def test_a_rate_card_with_types_no_design_uses_prices_the_designs_and_says_which_it_ignored(files, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    card = tmp_path / "card.yaml"
    card.write_text(PRICES.rstrip("\n").rstrip("}") + ", ml.p5.48xlarge: 98.32}\n")
    result = CliRunner().invoke(main, ["compare", *designs(files, "A", "B"), "--workers", "1", "--prices", str(card),
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [f"note: {card}: ml.p5.48xlarge priced but not used by either topology: "
                                          "ignored for this run"]
    plain = CliRunner().invoke(main, ["compare", *designs(files, "A", "B"), "--workers", "1", "--prices", str(prices),
                                      "--format", "json"])
    assert plain.exit_code == 0 and plain.stderr == ""
    assert json.loads(result.stdout)["shares"] == json.loads(plain.stdout)["shares"]  # the extra rate changes nothing


def test_prices_are_checked_against_every_design(files, tmp_path):
    wider = tmp_path / "W.yaml"
    wider.write_text(DESIGN_A.replace("ml.g5.12xlarge: 4}", "ml.g5.12xlarge: 4, ml.p5.48xlarge: 1}"))
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    code, out = run(*designs(files, "A"), "--topology", wider, "--workers", "1", "--prices", prices)
    (line,) = out.splitlines()
    assert code == 2 and line.startswith("error: ") and "no price for ml.p5.48xlarge" in line, out


@pytest.mark.parametrize(("chargeback", "priced"), [("usage", False), ("limit", False), ("usage", True),
                                                ("limit", True)])
def test_each_designs_bill_and_waste_with_the_difference(tmp_path, chargeback, priced):
    """ONE_SHARE's 2 h run: 2 p4d x 2 h = 4 instance-hours billed in both designs (the 4 idle ones cost nothing)."""
    (tmp_path / "A.yaml").write_text(ONE_SHARE.replace("LIMIT", "4"))
    (tmp_path / "B.yaml").write_text(ONE_SHARE.replace("LIMIT", "2"))
    (tmp_path / "s.yaml").write_text("topology: A.yaml\njobs:\n  - {name: j, share: solo, instance_type: "
                                     "ml.p4d.24xlarge, instances: 2, submit_at: 0, duration: 7200}\n")
    (tmp_path / "prices.yaml").write_text("currency: USD\nper_instance_hour: {ml.p4d.24xlarge: 10}\n")
    rate = 10 if priced else 1
    args = (tmp_path / "s.yaml", "--topology", tmp_path / "A.yaml", "--topology", tmp_path / "B.yaml",
            "--workers", "1", "--chargeback", chargeback, *(("--prices", tmp_path / "prices.yaml") if priced else ()))
    code, out = run(*args, "--format", "json")
    assert code == 0, out
    costs = json.loads(out)["costs"]
    # a row per instance type; the all-types row only when priced (instance-hours of types are never added up)
    assert [row["instance_type"] for row in costs] == ["ml.p4d.24xlarge", *(["all types"] if priced else [])]
    for row in costs:
        expected = {"on_demand": 4 * rate, "plans": 0, "total": 4 * rate, "preempted_attempts": 0, "plan_idle": 0}
        assert row["runs"]["A"] == pytest.approx(expected) and row["runs"]["B"] == pytest.approx(expected)
        assert row["differences"]["B"] == dict.fromkeys(expected, 0)
    unit = "USD" if priced else "instance-hours"
    markdown = run(*args, "--format", "markdown")[1]
    table = next(t for t in gfm.tables(markdown) if t[0][0] == "instance type" and "bill" in t[0])
    assert table[0] == ["instance type", "on-demand", "plan fees", "bill", "waste: preempted attempts",
                        "waste: plan idle"]
    assert table[1] == ["ml.p4d.24xlarge", *(f"{v:.2f} → {v:.2f} (±0)" for v in (4 * rate, 0, 4 * rate, 0, 0))]
    assert f"**The bill ({unit}" in markdown
    text = run(*args)[1]
    assert f"The bill ({unit}" in text
    assert ("B against A: bill ±0 USD, waste ±0 USD" if priced else
            "B against A: ml.p4d.24xlarge bill ±0 instance-hours, waste ±0 instance-hours") in text


def test_without_prices_instance_hours_of_two_types_are_never_added_up(files, tmp_path):
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--format", "json")
    assert code == 0, out
    costs = json.loads(out)["costs"]
    assert {row["instance_type"] for row in costs} == {"ml.p4d.24xlarge", "ml.g5.12xlarge"}
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    priced = json.loads(run(*designs(files, "A", "B"), "--workers", "1", "--format", "json", "--prices", prices)[1])
    rows = {row["instance_type"]: row for row in priced["costs"]}
    assert set(rows) == {"ml.p4d.24xlarge", "ml.g5.12xlarge", "all types"}
    for key in ("on_demand", "plans", "total", "preempted_attempts", "plan_idle"):
        for label in ("A", "B"):
            assert rows["all types"]["runs"][label][key] == pytest.approx(
                rows["ml.p4d.24xlarge"]["runs"][label][key] + rows["ml.g5.12xlarge"]["runs"][label][key])
        # each type's billed instance-hours priced at its own rate (30 and 7)
        assert rows["ml.p4d.24xlarge"]["runs"]["A"]["on_demand"] == pytest.approx(
            30 * {r["instance_type"]: r for r in costs}["ml.p4d.24xlarge"]["runs"]["A"]["on_demand"])


@needs_browser
def test_wide_tables_scroll_in_their_own_box_and_the_page_never_sideways(files, tmp_path):
    """Three designs priced: the per-share and cost tables fit a 1400-pixel window (their figures wrap between
    their parts), each still in its own scrolling box for a narrower one, the page itself is no wider than the
    window, and nothing is logged to the console."""
    report = tmp_path / "report"
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    code, out = run(*designs(files, "A", "B", "A"), "--workers", "1", "--report", report, "--prices", prices)
    assert code == 0, out
    with headless_chromium() as driver:
        driver.set_window_size(1400, 1000)
        open_page(driver, report / "index.html")
        deadline = time.monotonic() + 30
        while driver.execute_script("return document.documentElement.dataset.rendered") == "false" and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        assert driver.execute_script("return document.documentElement.dataset.rendered") == "true"
        page = driver.execute_script("return [document.documentElement.scrollWidth, "
                                     "document.documentElement.clientWidth]")
        assert page[0] <= page[1], page
        boxes = dict(driver.execute_script(
            "return Array.from(document.querySelectorAll('table')).map(t => [t.id || t.rows[0].cells[0].textContent, "
            "[t.parentElement.className, t.parentElement.scrollWidth > t.parentElement.clientWidth, "
            "Math.round(t.parentElement.getBoundingClientRect().right)]])"))
        assert all(box[0] == "table-scroll" for box in boxes.values()), boxes
        assert not boxes["shares"][1], boxes  # no sideways scroll at 1400 px (issue 35 §6)
        assert all(box[2] <= page[1] for box in boxes.values()), boxes
        assert driver.get_log("browser") == []


def test_a_small_comparison_runs_in_process_unless_told_where(files, monkeypatch):
    """Without --workers or --scheduler, a small workload runs here (a local cluster takes seconds to start); the
    header says so. --workers N still starts a cluster of N, whatever the size; $DASK_SCHEDULER_ADDRESS is used."""
    import policy_engine.comparison.parallel as parallel
    import policy_engine.sweep.executor as executor

    monkeypatch.setattr(executor, "usable_cores", lambda: 2)
    monkeypatch.delenv(executor.SCHEDULER_ENV, raising=False)
    code, out = run(*designs(files, "A", "B"))
    assert code == 0, out
    def header(out: str) -> str:  # the first line, folded at 200 columns
        return " ".join(out[:out.index("runs, in the order of every cell")].split())

    assert header(out).endswith("each from time 0, on 1 sample of the workload (--samples N shows the spread) "
                                "(in-process: a small comparison, done before a local cluster "
                                "would have started; --workers N runs it on one)")
    code, out = run(*designs(files, "A", "B"), "--workers", "2")
    assert code == 0, out
    assert header(out).endswith("(local Dask cluster (2 worker process(es)))")
    monkeypatch.setattr(parallel, "IN_PROCESS_JOB_RUNS", 10)  # 30 jobs are no longer small: a worker per design
    code, out = run(*designs(files, "A", "B"))
    assert code == 0, out
    assert header(out).endswith("(local Dask cluster (2 worker process(es)))")
    monkeypatch.setattr(parallel, "IN_PROCESS_JOB_RUNS", 200_000)
    monkeypatch.setenv(executor.SCHEDULER_ENV, "tcp://127.0.0.1:1")  # nobody listens: the address is used
    code, out = run(*designs(files, "A", "B"))
    assert code == 2 and "cannot reach Dask scheduler tcp://127.0.0.1:1" in out, out


def test_until_reads_a_duration_and_stops_every_design_there(files):
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--format", "json", "--until", "30m")
    assert code == 0, out
    assert [r["time"] for r in json.loads(out)["runs"]] == [1800, 1800]
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--until", "soon")
    assert code == 2 and "'soon' is not a duration (30d, 12h, 90m, 3600s or seconds)" in out


def test_until_is_said_in_the_first_line_of_every_format(files):
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--until", "30m")
    assert code == 0 and "each from time 0 to 30m 00s (--until)" in out.splitlines()[0]
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--until", "30m", "--format", "markdown")
    assert code == 0 and ("each design run from time 0 to 30m 00s (--until), on 1 sample of the workload "
                          "(--samples N shows the spread).") in out


def test_a_design_whose_run_ends_later_bills_the_same_work_the_same(files, tmp_path):
    """Half the p4d in no share's limit: the same jobs drain later; the bills differ by the work preemption threw
    away at most: capacity held longer is no money spent (the old capacity price charged the drain)."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    slow = tmp_path / "slow.yaml"
    slow.write_text(DESIGN_A.replace("{ml.p4d.24xlarge: 2,", "{ml.p4d.24xlarge: 1,")
                    .replace("{ml.p4d.24xlarge: 2}", "{ml.p4d.24xlarge: 1}"))
    args = (*designs(files, "A"), "--topology", slow, "--workers", "1", "--prices", prices)
    data = json.loads(run(*args, "--format", "json")[1])
    times = [r["time"] for r in data["runs"]]
    assert times[1] > times[0] + 1
    waste = [r["costs"]["waste"]["preempted_attempts"] for r in data["runs"]]
    bills = [r["costs"]["bill"]["total"] for r in data["runs"]]
    assert bills[1] - bills[0] == pytest.approx(waste[1] - waste[0])  # only the work preemption threw away differs
    text = run(*args)[1]
    assert any(line.startswith("slow against A: bill ") for line in text.splitlines())
    assert "bill for the whole workload" in text.splitlines()[0]


#: B's shares add up to more p4d than its environment has: check's BQ201, an error (no oversubscription allowed)
FAILING = DESIGN_B.replace("{name: language, capacity: {ml.p4d.24xlarge: 1}", "{name: language, capacity: "
                                                                             "{ml.p4d.24xlarge: 3}")


@pytest.mark.parametrize("output_format", ["text", "markdown", "json", "html"])
def test_a_design_that_fails_check_is_run_and_said_so_in_every_format(files, tmp_path, output_format):
    files["B"].write_text(FAILING)
    args = [*designs(files, "A", "B"), "--workers", "1"]
    if output_format == "html":
        code, _ = run(*args, "--report", tmp_path / "page")
        out = (tmp_path / "page" / "index.html").read_text()
    else:
        code, out = run(*args, "--format", output_format)
    assert code == 0, out
    if output_format == "json":
        data = json.loads(out)
        assert [run["fails_check"] for run in data["runs"]] == [False, True]
        assert {error["rule"] for error in data["runs"][1]["check_errors"]} == {"BQ201"}
        return
    if output_format == "markdown":
        assert gfm.tables(out)  # still GFM tables
    lines = [line for line in out.splitlines() if "fails check" in line]
    assert lines and all("BQ201" in line and "B (" in line for line in lines)
    assert "FAILS CHECK: 1 error(s)" in out  # the design is marked where the runs are named
    assert not any("A (" in line for line in lines)


@needs_browser
def test_a_huge_wait_difference_leaves_every_small_one_a_visible_bar(files, tmp_path):
    """The reviewer's month: foundation −300 h beside manipulation +47 m and perception +2 h 47 m. On a linear axis
    the small bars were under a pixel; on the symmetric log axis each is a visible bar on its side of zero."""
    report = tmp_path / "report"
    code, out = run(*designs(files, "A", "B"), "--workers", "1", "--report", report)
    assert code == 0, out
    page = (report / "index.html").read_text()
    found = re.search(r'(<script type="application/json" id="compare-data">)(.*?)(</script>)', page, re.DOTALL)
    assert found
    data = json.loads(found.group(2))
    data["deltas"] = [{"row": row, "design": "B", "hours": hours, "text": f"{hours:+} h"}
                      for row, hours in (("training/foundation", -300.0), ("training/manipulation", 0.7833),
                                         ("training/perception", 2.7833), ("training/safety", 0.0))]
    (report / "huge.html").write_text(page.replace(found.group(0), found.group(1) + json.dumps(data)
                                                   + found.group(3)))
    with headless_chromium() as driver:
        open_page(driver, report / "huge.html")
        deadline = time.monotonic() + 30
        while driver.execute_script("return document.documentElement.dataset.rendered") != "true" and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        bars = driver.execute_script("return Array.from(document.querySelectorAll('#chart-deltas .mark-rect path'))"
                                     ".map(p => { const b = p.getBoundingClientRect(); return [b.left, b.width]; })")
    assert len(bars) == 4, bars
    widths = sorted(width for _, width in bars)
    assert widths[0] < 1 and all(width >= 8 for width in widths[1:]), bars  # the zero flat, the rest visible


def test_a_cost_verdict_puts_the_unit_after_a_number_never_after_words():
    from policy_engine.reports.compare.view import _with_unit

    assert _with_unit("bill", "+12.00") == "bill +12.00 instance-hours"
    assert _with_unit("waste", "±0") == "waste ±0 instance-hours"
    assert _with_unit("bill", "no significant change") == "bill: no significant change"
