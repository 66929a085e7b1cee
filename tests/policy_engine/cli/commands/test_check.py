"""``batch-quota check``: exit codes 0/1/2, one line per bad-input problem, and the three formats."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.analysis.rules import REGISTRY
from policy_engine.cli.app import main
from policy_engine.inputs.examples import EXAMPLE_YAML
from tests.policy_engine.cli.commands.test_input_robustness import one_line, run

GOOD = EXAMPLE_YAML.read_text(encoding="utf-8")

OVERSUBSCRIBED = """\
service_environments:
  - name: gpu-env
    capacity: {ml.g5.xlarge: 1}
job_queues:
  - name: training
    service_environment: gpu-env
    shares:
      - name: QS1
        capacity: {ml.g5.xlarge: 1}
        strategy: LEND
      - name: QS2
        capacity: {ml.g5.xlarge: 1}
        strategy: LEND_AND_BORROW
guarantees:
  - share: QS2
    min_capacity: {ml.g5.xlarge: 1}
"""


def check(*args: str):
    return CliRunner().invoke(main, ["check", *args])


def test_embedded_example_passes():
    result = check()
    assert result.exit_code == 0, result.output
    assert "passed: 0 error(s), 1 warning(s), 3 quota share(s)" in result.stdout
    assert "training/QS1" in result.stdout and "BQ302" in result.stdout


def test_example_file_passes_without_colour(write_file):
    result = check(str(write_file("example.yaml", GOOD)))
    assert result.exit_code == 0
    assert "\x1b[" not in result.stdout  # not a terminal: no ANSI colour


def test_error_finding_exits_1_and_is_shown_as_an_error(write_file):
    result = check(str(write_file("over.yaml", OVERSUBSCRIBED)))
    assert result.exit_code == 1
    errors_part = result.stdout.split("Warnings")[0]
    assert "Errors (2)" in errors_part and "BQ201" in errors_part and "BQ401" in errors_part
    assert "FAILED: 2 error(s)" in result.stdout


BAD_INPUTS = {
    "unknown key": (GOOD.replace("strategy: LEND\n", "stratgy: LEND\n"),
                    "job_queues[training].shares[QS2].stratgy: unknown key 'stratgy' (did you mean 'strategy'?)"),
    "wrong type": (GOOD.replace("capacity: {ml.g5.xlarge: 3}", "capacity: {ml.g5.xlarge: three}"),
                   "service_environments[gpu-env].capacity.ml.g5.xlarge"),
    "yaml syntax": (GOOD.replace("capacity: {ml.g5.xlarge: 3}", "capacity: {ml.g5.xlarge: 3"), "YAML syntax error"),
    "duplicate name": (GOOD.replace("name: QS3", "name: QS2").replace("share: training/QS3", "share: training/QS1"),
                       "job_queues[training].shares[2]: duplicate name 'QS2'"),
    "dangling reference": (GOOD.replace("service_environment: gpu-env", "service_environment: gpu-envv"),
                           "no service environment named 'gpu-envv'"),
    "dangling guarantee": (GOOD.replace("share: training/QS3", "share: training/QS9"), "no quota share 'training/QS9'"),
}


@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
def test_bad_input_exits_2_with_one_line_naming_file_and_object(kind, write_file):
    text, expected = BAD_INPUTS[kind]
    path = write_file("bad.yaml", text)
    result = check(str(path))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {path}")
    assert expected in lines[0]
    assert "Traceback" not in result.output and result.stdout == ""


def test_every_problem_is_reported_at_once(write_file):
    text = GOOD.replace("strategy: LEND\n", "stratgy: LEND\n").replace("in_share_preemption: true",
                                                                         "in_share_preemption: yes please")
    result = check(str(write_file("bad.yaml", text)))
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 2


def test_missing_file_and_misuse_exit_2(tmp_path):
    missing = check(str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2 and "cannot read file" in missing.stderr
    assert check("--format", "xml").exit_code == 2
    assert check("a.yaml", "b.yaml").exit_code == 2


def test_json_format(write_file):
    result = check("--format", "json", str(write_file("over.yaml", OVERSUBSCRIBED)))
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False and data["errors"] == 2
    first = data["findings"][0]
    assert set(first) >= {"rule", "severity", "object", "message", "hint", "counterexample"}
    assert (first["rule"], first["severity"], first["object"]) == ("BQ201", "error", "service_environments[gpu-env]")
    refuted = next(f for f in data["findings"] if f["rule"] == "BQ401")
    assert refuted["counterexample"] == {"training/QS1": {"ml.g5.xlarge": 1}, "training/QS2": {"ml.g5.xlarge": 0}}
    assert data["summaries"]["training/QS2"]["guaranteed"] == {"ml.g5.xlarge": 0}
    # The single instance is QS2's own limit: there is no room to borrow into, so QS1 never reclaims from it.
    assert data["summaries"]["training/QS2"]["preempted_by"] == []


def test_sarif_format_is_structurally_valid(write_file, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    write_file("over.yaml", OVERSUBSCRIBED)
    result = check("--format", "sarif", "over.yaml")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "batch-quota"
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert sorted(rule_ids) == sorted(REGISTRY)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    # BQ304, a note: QS2 borrows without a stated borrow_limit
    assert {r["ruleId"]: r["level"] for r in run["results"]} == {"BQ201": "error", "BQ401": "error", "BQ304": "note"}
    for result_ in run["results"]:
        assert result_["ruleId"] in rule_ids
        assert rule_ids[result_["ruleIndex"]] == result_["ruleId"]
        assert result_["level"] in ("error", "warning", "note")
        assert result_["message"]["text"]
        (location,) = result_["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"] == "over.yaml"
    lines = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in run["results"]}
    assert lines == {"BQ201": 2, "BQ401": 15, "BQ304": 11}  # the environment's, the guarantee's, QS2's list items


def test_sarif_for_the_embedded_example_points_at_its_yaml():
    log = json.loads(check("--format", "sarif").stdout)
    (result,) = log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("example.yaml")
    assert location["region"]["startLine"] == 9  # the list item of QS1 in policy_engine/data/example.yaml


def test_python_module_topology(write_file):
    module = "from policy_engine.inputs.examples import example_topology\nTOPOLOGY = example_topology()\n"
    path = write_file("topology.py", module)
    result = check("--format", "sarif", str(path))
    assert result.exit_code == 0
    (finding,) = json.loads(result.stdout)["runs"][0]["results"]
    assert "region" not in finding["locations"][0]["physicalLocation"]  # no line table for Python


BAD = """\
service_environments:
  - name: gpu-env
    capacity: {ml.g5.xlarge: 3}
    colour: red
job_queues:
  - name: training
    service_environment: gpu-envv
"""


def test_sarif_for_a_file_that_cannot_load_is_a_failed_run(write_file, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    write_file("bad.yaml", BAD)
    result = check("--format", "sarif", "bad.yaml")
    assert result.exit_code == 2
    problems = result.stderr.splitlines()
    assert len(problems) == 2 and all(line.startswith("error: bad.yaml:") for line in problems)
    (run,) = json.loads(result.stdout)["runs"]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    notifications = invocation["toolExecutionNotifications"]
    assert [n["level"] for n in notifications] == ["error", "error"]
    assert [r["ruleId"] for r in run["results"]] == ["BQ000", "BQ000"]
    assert run["tool"]["driver"]["rules"][0]["id"] == "BQ000"
    located = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r["message"]["text"]
               for r in run["results"]}
    assert located == {4: "service_environments[gpu-env].colour: unknown key 'colour'",
                       7: "job_queues[training].service_environment: no service environment named 'gpu-envv' "
                          "(known: gpu-env)"}
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]} == {"bad.yaml"}


def test_json_for_a_file_that_cannot_load_says_so_on_stdout(write_file, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    write_file("bad.yaml", BAD)
    result = check("--format", "json", "bad.yaml")
    assert result.exit_code == 2
    problems = [line.removeprefix("error: ") for line in result.stderr.splitlines()]
    assert len(problems) == 2
    data = json.loads(result.stdout)
    assert data["ok"] is False and data["loaded"] is False
    assert data["load_errors"] == problems and data["findings"] == [] and data["source"] == "bad.yaml"


def test_json_for_a_file_that_loads_says_loaded(write_file):
    data = json.loads(check("--format", "json", str(write_file("good.yaml", GOOD))).stdout)
    assert data["loaded"] is True and data["load_errors"] == []


def test_markdown_for_a_file_that_cannot_load_lists_the_problems(write_file, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    write_file("bad.yaml", BAD)
    result = check("--format", "markdown", "bad.yaml")
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 2
    assert result.stdout.startswith("### ❌ batch-quota check could not load: `bad.yaml`")
    assert "- bad.yaml:4: service_environments[gpu-env].colour: unknown key 'colour'" in result.stdout
    assert "no service environment named 'gpu-envv'" in result.stdout


def test_sarif_names_a_symlink_as_given_not_its_target(write_file, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    write_file("data/real.yaml", GOOD)
    (tmp_path / "topologies").mkdir()
    (tmp_path / "topologies" / "example.yaml").symlink_to("../data/real.yaml")
    (result,) = json.loads(check("--format", "sarif", "topologies/example.yaml").stdout)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "topologies/example.yaml"


def test_sarif_uri_outside_the_working_directory(write_file, monkeypatch, tmp_path):
    write_file("shared.yaml", GOOD)
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")

    def uri(*options: str) -> str:
        log = json.loads(check("--format", "sarif", "../shared.yaml", *options).stdout)
        return log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]

    assert uri() == (tmp_path / "shared.yaml").as_uri()  # no relative path exists: absolute, as documented
    assert uri("--sarif-root", "..") == "shared.yaml"


def test_check_command_markdown_keeps_exit_codes(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(main, ["check", "--format", "markdown"])
    assert ok.exit_code == 0 and ok.output.startswith("### ✅ batch-quota check passed")
    bad = tmp_path / "bad.yaml"
    bad.write_text("service_environments: [{name: e, capacity: {ml.g5.xlarge: 1}}]\n"
                   "job_queues: [{name: q, service_environment: e, shares: "
                   "[{name: A, capacity: {ml.g5.xlarge: 2}, strategy: RESERVE}]}]\n")
    failed = runner.invoke(main, ["check", str(bad), "--format", "markdown"])
    assert failed.exit_code == 1 and "| error | BQ201 |" in failed.output


def test_check_dash_reads_the_topology_from_stdin():
    result = run("check", "-", stdin=GOOD.encode())
    assert result.exit_code == 0 and "batch-quota check (stdin)" in result.stdout
    assert run("check", "-", "--format", "json", stdin=json.dumps(
        {"service_environments": [], "job_queues": []}).encode()).exit_code in (0, 1)
    one_line(run("check", "-", stdin=b"a: caf\xe9"), "<stdin>: not UTF-8 text")
