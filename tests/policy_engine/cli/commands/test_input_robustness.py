"""Every command with odd or hostile input: one line per problem naming the file, exit 2, never a traceback or hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs import input_files
from policy_engine.inputs.examples import EXAMPLE_YAML

ROOT = Path(__file__).parents[4]
GOOD = EXAMPLE_YAML.read_text(encoding="utf-8")
GOOD_DATA = yaml.safe_load(GOOD)
SCENARIO = "topology: topology.yaml\njobs: jobs.csv\n"
JOBS = "name,share,duration\nj1,QS1,60\nj2,QS2,60\n"


def run(*args: str, stdin: bytes | None = None):
    result = CliRunner().invoke(main, list(args), input=stdin)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exc_info
    return result


def one_line(result, *fragments: str) -> str:
    """The command exited 2 with exactly one ``error:`` line holding every fragment."""
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert all(fragment in lines[0] for fragment in fragments), (fragments, lines[0])
    return lines[0]


@pytest.fixture
def scenario_dir(tmp_path, write_file):
    write_file("topology.yaml", GOOD)
    write_file("jobs.csv", JOBS)
    write_file("scenario.yaml", SCENARIO)
    return tmp_path


# --- not UTF-8 --------------------------------------------------------------------------------------------------


NOT_UTF8 = {
    "latin1": (GOOD.replace("gpu-env", "caf\u00e9", 1).encode("latin-1"), "byte 0xE9 at line"),
    "utf16": (GOOD.encode("utf-16"), "byte 0xFF at line 1"),
    "binary": (bytes(range(256)) * 4, "byte 0x80 at line 2"),
}


@pytest.mark.parametrize("kind", NOT_UTF8)
def test_not_utf8_topology_is_one_line_in_every_command(tmp_path, kind):
    data, where = NOT_UTF8[kind]
    path = tmp_path / "t.yaml"
    path.write_bytes(data)
    for args in (["check", str(path)], ["explain", "QS1", str(path)], ["graph", str(path)],
                 ["generate", str(path), "-o", str(tmp_path / "j.csv")]):
        one_line(run(*args), f"{path}: not UTF-8 text", where)


def test_not_utf8_line_number_is_the_line_of_the_byte(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_bytes(b"a: 1\nb: 2\nc: caf\xe9\n")
    one_line(run("check", str(path)), f"{path}: not UTF-8 text (byte 0xE9 at line 3)")


@pytest.mark.parametrize("name", ["t.yaml", "t.json"])
def test_a_utf8_byte_order_mark_is_one_line(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + (GOOD if name.endswith(".yaml") else json.dumps(GOOD_DATA)).encode())
    for args in (["check", str(path)], ["explain", "QS1", str(path)], ["graph", str(path)]):
        one_line(run(*args), f"{path}: not UTF-8 text (byte 0xEF at line 1): a UTF-8 byte-order mark")
    for output_format in ("json", "sarif", "markdown"):
        result = run("check", str(path), "--format", output_format)
        one_line(result, "byte-order mark")
        assert result.stdout  # the could-not-load document is still printed


@pytest.mark.parametrize("output_format", ["json", "sarif", "markdown"])
def test_not_utf8_still_prints_the_could_not_load_document(tmp_path, output_format):
    path = tmp_path / "t.yaml"
    path.write_bytes(NOT_UTF8["latin1"][0])
    result = run("check", str(path), "--format", output_format)
    one_line(result, "not UTF-8 text")
    if output_format == "json":
        assert json.loads(result.stdout)["loaded"] is False
    elif output_format == "sarif":
        assert json.loads(result.stdout)["runs"][0]["invocations"][0]["executionSuccessful"] is False
    else:
        assert "could not load" in result.stdout and "not UTF-8 text" in result.stdout


def test_not_utf8_scenario_and_job_file(scenario_dir):
    (scenario_dir / "jobs.csv").write_bytes(JOBS.encode() + b"j3,QS1,6\xff0\n")
    one_line(run("simulate", str(scenario_dir / "scenario.yaml")),
             f"{scenario_dir / 'jobs.csv'}: not UTF-8 text (byte 0xFF at line 4)")
    (scenario_dir / "scenario.yaml").write_bytes(b"topology: topology.yaml\njobs: j\xe9bs.csv\n")
    one_line(run("simulate", str(scenario_dir / "scenario.yaml")), "not UTF-8 text (byte 0xE9 at line 2)")


# --- regular files only, size caps, NUL bytes -----------------------------------------------------------------


def test_fifo_device_and_directory_are_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    one_line(run("check", str(fifo)), "FIFO")
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")
    one_line(run("check", str(zero)), "character device")
    (tmp_path / "dir.yaml").mkdir()
    assert run("check", str(tmp_path / "dir.yaml")).exit_code == 2
    (tmp_path / "jobs.csv").unlink(missing_ok=True)
    os.mkfifo(tmp_path / "jobs.csv")
    (tmp_path / "topology.yaml").write_text(GOOD)
    (tmp_path / "s.yaml").write_text(SCENARIO)
    one_line(run("simulate", str(tmp_path / "s.yaml")), "jobs.csv", "FIFO")


def test_size_caps_per_kind_are_documented_and_enforced(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for kind in input_files.KINDS:
        assert input_files._size(kind.max_bytes) in readme
    assert input_files.JOBS.max_bytes >= 10_000_000 * 64  # 10 M rows of "jobNNNNNNN,QS1,3600,..." fit
    monkeypatch.setattr(input_files, "TOPOLOGY", input_files.FileKind("topology", 100))
    path = tmp_path / "t.yaml"
    path.write_text(GOOD)
    one_line(run("check", str(path)), "too large", "a topology file may be at most 100 bytes")


def test_nul_byte_in_a_path_is_one_line(tmp_path, scenario_dir):
    for args in (["check", "a\0b.yaml"], ["graph", "-o", "a\0b.dot"], ["generate", "-o", "a\0b.csv"],
                 ["simulate", "a\0b.yaml"], ["drift", "a\0b.yaml"], ["history", "--queue", "q", "-o", "a\0b.csv"],
                 ["import", "--from-template", "a\0b.json"], ["snapshot", "--queue", "q", "-o", "a\0b.yaml"]):
        result = run(*args)
        assert result.exit_code == 2 and "NUL byte" in result.stderr and "Traceback" not in result.stderr, args
    (scenario_dir / "scenario.yaml").write_text('topology: topology.yaml\njobs: "jobs\\0.csv"\n')
    one_line(run("simulate", str(scenario_dir / "scenario.yaml")), "NUL byte")


# --- CSV and JSON Lines job files --------------------------------------------------------------------------------


def test_csv_field_over_the_csv_limit_is_one_line(scenario_dir):
    (scenario_dir / "jobs.csv").write_text(JOBS + "j3,QS1," + "9" * 200_000 + "\n")
    one_line(run("simulate", str(scenario_dir / "scenario.yaml")), "jobs.csv:4", "field larger than field limit")


@pytest.mark.parametrize("header, expected", [
    ("\ufeffname,share,duration", "byte-order mark"),
    ("NAME,SHARE,DURATION", "lower case"),
    ("name;share;duration", "separated by ';'"),
    ("nmae,share,duration", "'nmae' are not job fields (did you mean 'name'?)"),
    ("name,share,share,duration", "'share' more than once"),
    ("name,share,priority", "lacks the required column(s) 'duration'"),
])
def test_a_bad_csv_header_is_one_line_about_the_header(scenario_dir, header, expected):
    rows = "\n".join(f"j{i},QS1,60".replace(",", ";" if ";" in header else ",") for i in range(50))
    (scenario_dir / "jobs.csv").write_text(f"{header}\n{rows}\n", encoding="utf-8")
    one_line(run("simulate", str(scenario_dir / "scenario.yaml")), "jobs.csv:1", expected)


@pytest.mark.parametrize("cell, expected", [
    ("nan", "must be a number"), ("inf", "must be a number"), ("1e999", "must be a number"),
    ("9" * 5000, "must be a number"), ("99999999999999999", "must be at most"),
])
def test_non_finite_huge_and_overlong_job_numbers(scenario_dir, cell, expected):
    (scenario_dir / "jobs.csv").write_text(f"name,share,duration\nj1,QS1,{cell}\n")
    one_line(run("simulate", str(scenario_dir / "scenario.yaml")), "j1", "duration", expected)
    (scenario_dir / "jobs.jsonl").write_text(f'{{"name": "j1", "share": "QS1", "duration": {cell}}}\n')
    (scenario_dir / "scenario.yaml").write_text("topology: topology.yaml\njobs: jobs.jsonl\n")
    result = run("simulate", str(scenario_dir / "scenario.yaml"))
    one_line(result, "jobs.jsonl:1")


def test_jsonl_nan_and_deep_nesting(scenario_dir):
    (scenario_dir / "jobs.jsonl").write_text('{"name": "j1", "share": "QS1", "duration": NaN}\n'
                                             + '{"name": "j2", "share": "QS1", "duration": ' + "[" * 5000 + "\n")
    (scenario_dir / "scenario.yaml").write_text("topology: topology.yaml\njobs: jobs.jsonl\n")
    result = run("simulate", str(scenario_dir / "scenario.yaml"))
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 2
    assert "NaN is not a number JSON allows" in result.stderr and "jobs.jsonl:2" in result.stderr


# --- NaN / inf in options, JSON output -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_until_refuses_non_finite(scenario_dir, value):
    result = run("simulate", str(scenario_dir / "scenario.yaml"), "--until", value)
    assert result.exit_code == 2 and "--until" in result.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "1e999", "1e300"])
def test_diff_at_refuses_non_finite_and_runaway_times(value):
    """``--at nan`` once replayed forever: a time that is not a finite workload time is a usage error."""
    example = str(EXAMPLE_YAML)
    scenario = str(Path(__file__).parents[4] / "scenarios" / "walkthrough.yaml")
    result = run("diff", example, example, "--scenario", scenario, "--at", value)
    assert result.exit_code == 2 and "--at" in result.stderr, result.stderr


@pytest.mark.parametrize("option, value", [
    ("--rate", "nan"), ("--rate", "inf"), ("--rate", "1e-308"),
    ("--duration-mean", "nan"), ("--duration-mean", "inf"), ("--jobs", "100000000000"),
    ("--duration-shape", "nan"), ("--duration-max", "inf"), ("--burst-mean", "inf"), ("--burst-mean", "1e300"),
    ("--burst-spread", "nan"), ("--burst-spread", "inf"),
])
def test_generate_refuses_non_finite_and_runaway_options(tmp_path, option, value):
    result = run("generate", "-o", str(tmp_path / "j.csv"), option, value)
    assert result.exit_code == 2 and option in result.stderr, result.stderr
    assert not (tmp_path / "j.csv").exists()


def test_json_output_is_strict_json(scenario_dir):
    result = run("simulate", str(scenario_dir / "scenario.yaml"), "--format", "json")

    def refuse(token):
        raise AssertionError(f"{token} in JSON output")

    assert result.exit_code == 0
    json.loads(result.stdout, parse_constant=refuse)
    json.loads(run("check", "--format", "json").stdout, parse_constant=refuse)


# --- outputs ------------------------------------------------------------------------------------------------------


def test_an_output_that_is_an_input_is_refused(scenario_dir):
    scenario = scenario_dir / "scenario.yaml"
    before = {p.name: p.read_bytes() for p in scenario_dir.iterdir()}
    one_line(run("simulate", str(scenario), "--events", str(scenario)), "--events", "is also an input")
    one_line(run("simulate", str(scenario), "--events", str(scenario_dir / "jobs.csv")), "--events", "jobs.csv")
    result = run("generate", "-o", str(scenario_dir / "j.csv"), "--scenario", str(scenario_dir / "j.csv"))
    assert result.exit_code == 2 and "same file as --output" in result.stderr
    topology = scenario_dir / "topology.yaml"
    assert run("generate", str(topology), "-o", str(scenario_dir / "x.csv"), "--scenario",
               str(topology)).exit_code == 2
    assert {p.name: p.read_bytes() for p in scenario_dir.iterdir() if p.name in before} == before


def test_report_does_not_follow_a_symlink_it_did_not_create(scenario_dir, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    victim = elsewhere / "victim.txt"
    victim.write_text("keep me")
    report = scenario_dir / "report"
    report.symlink_to(elsewhere, target_is_directory=True)
    one_line(run("simulate", str(scenario_dir / "scenario.yaml"), "--report", str(report)), "symbolic link")
    report.unlink()
    report.mkdir()
    (report / "index.html").symlink_to(victim)
    one_line(run("simulate", str(scenario_dir / "scenario.yaml"), "--report", str(report)), "symbolic link")
    assert victim.read_text() == "keep me" and sorted(os.listdir(elsewhere)) == ["victim.txt"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_one_line():
    with open("/dev/full", "wb") as full:
        result = subprocess.run([sys.executable, "-c", "from policy_engine.cli.app import main; main()", "check"],
                                stdout=full, stderr=subprocess.PIPE, timeout=120)
    assert result.returncode == 2
    assert result.stderr.decode().strip().splitlines() == [
        "error: cannot write the output: No space left on device"]


@pytest.mark.parametrize("command", ["check", "walkthrough"])  # click.echo, and rich (which would exit 1)
def test_a_closed_pipe_is_one_line(command):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone, as after ``| head -1``
    try:
        result = subprocess.run([sys.executable, "-c", "from policy_engine.cli.app import main; main()", command],
                                stdout=write_end, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(write_end)
    assert result.returncode == 2
    assert result.stderr.decode().strip().splitlines() == ["error: cannot write the output: Broken pipe"]


# --- check -, explain's argument order, simulate given a topology --------------------------------------------


def test_simulate_given_a_topology_says_so(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(GOOD)
    one_line(run("simulate", str(path)), "this is a topology; a scenario needs topology:")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_an_events_file_on_a_full_disk_is_one_line_naming_it(scenario_dir):
    rows = "".join(f"j{i},QS1,60\n" for i in range(3000))
    (scenario_dir / "jobs.csv").write_text("name,share,duration\n" + rows)
    one_line(run("simulate", str(scenario_dir / "scenario.yaml"), "--events", "/dev/full"),
             "/dev/full: cannot write events file: No space left on device")


def test_many_bad_rows_are_counted_not_kept(scenario_dir):
    from policy_engine.simulation.scenarios import workload

    rows = "".join(f"j{i},QS1,-{i + 1}\n" for i in range(5000))
    (scenario_dir / "jobs.csv").write_text("name,share,duration\n" + rows)
    with pytest.raises(workload.LoadError) as error:
        workload.load_scenario(scenario_dir / "scenario.yaml")
    problems = error.value.problems
    assert len(problems) == workload.MAX_PROBLEMS + 1
    assert problems[-1] == f"... and {5000 - workload.MAX_PROBLEMS} more problem(s) not shown"


def test_closed_stdout_and_stdin_are_one_line():
    command = f'"{sys.executable}" -c "from policy_engine.cli.app import main; main()"'
    closed_out = subprocess.run(["sh", "-c", f"{command} walkthrough >&-"], capture_output=False,
                                stderr=subprocess.PIPE, timeout=120)
    assert closed_out.returncode == 2
    assert closed_out.stderr.decode().strip().splitlines() == [
        "error: standard output is closed; redirect it to a file or /dev/null instead"]
    closed_in = subprocess.run(["sh", "-c", f"{command} check - <&-"], capture_output=True, timeout=120)
    assert closed_in.returncode == 2
    assert closed_in.stderr.decode().strip().splitlines() == [
        "error: <stdin>: standard input is closed; pipe the topology in or name a file"]


def test_lone_surrogates_are_refused_or_escaped_never_a_crash(tmp_path, scenario_dir):
    path = tmp_path / "t.json"
    path.write_text('{"service_environments": [{"name": "e\\ud800", "capacity": {"ml.g5.xlarge": 1}}], '
                    '"job_queues": []}')
    one_line(run("check", str(path)), "service_environments[e\\ud800].name", "lone UTF-16 surrogate")
    (scenario_dir / "jobs.jsonl").write_text('{"name": "a\\udfff", "share": "QS1", "duration": 5}\n')
    (scenario_dir / "scenario.yaml").write_text("topology: topology.yaml\njobs: jobs.jsonl\n")
    one_line(run("simulate", str(scenario_dir / "scenario.yaml")), "jobs.jsonl:1", "lone UTF-16 surrogate")
    # a file name that is not UTF-8 reaches Python as a lone surrogate: shown escaped, never a crash
    name = os.fsdecode(b"caf\xe9.yaml")
    (tmp_path / name).write_text(GOOD)
    process = subprocess.run([sys.executable, "-c", "from policy_engine.cli.app import main; main()", "check",
                              str(tmp_path / name)], capture_output=True, timeout=120)
    assert process.returncode == 0 and b"caf\\udce9.yaml" in process.stdout and not process.stderr


def test_a_python_topology_with_a_lone_surrogate_is_refused(write_file):
    path = write_file("t.py", "from policy_engine.inputs.examples import example_topology\n"
                              "t = example_topology()\n"
                              "env = t.service_environments[0].model_copy(update={'name': 'x\\ud800'})\n"
                              "TOPOLOGY = t.model_copy(update={'service_environments': (env,), 'job_queues': (),"
                              " 'guarantees': ()})\n")
    result = run("check", str(path))
    assert result.exit_code == 2 and "lone surrogate" in result.stderr


def test_a_topology_far_past_awss_limits_is_refused_before_any_analysis(tmp_path):
    from policy_engine.inputs import loading
    from policy_engine.inputs.examples import large_topology

    path = tmp_path / "huge.json"
    path.write_text(json.dumps(large_topology(queues=1, shares_per_queue=loading.MAX_SHARES_PER_QUEUE + 1,
                                              instance_types=1).model_dump(mode="json")))
    for command in ("check", "graph"):
        one_line(run(command, str(path)), "job_queues[queue-00].shares", "quota shares in one job queue",
                 f"at most {loading.MAX_SHARES_PER_QUEUE}")
    at_aws_limits = tmp_path / "limits.json"
    at_aws_limits.write_text(json.dumps(large_topology().model_dump(mode="json")))
    assert run("check", str(at_aws_limits), "--format", "json").exit_code in (0, 1)


def test_a_checkpoint_interval_too_small_to_divide_by_is_refused(scenario_dir):
    (scenario_dir / "jobs.csv").write_text("name,share,duration,checkpoint_interval\nj1,QS1,60,4.9e-324\n")
    one_line(run("simulate", str(scenario_dir / "scenario.yaml")), "jobs[j1].checkpoint_interval",
             "must be at least 0.001")


def test_a_job_file_ending_inside_a_character_names_the_byte(scenario_dir):
    (scenario_dir / "jobs.csv").write_bytes(JOBS.encode() + b"j3,QS1,6\xe2\x82")
    one_line(run("simulate", str(scenario_dir / "scenario.yaml")), "jobs.csv: not UTF-8 text (byte 0xE2 at line 4)")


def test_check_given_a_scenario_says_so(scenario_dir):
    one_line(run("check", str(scenario_dir / "scenario.yaml")), "this is a scenario", "batch-quota simulate")


@pytest.mark.parametrize(("args", "expected"), [
    (["simulate", "x.yaml", "--format", "html"],
     "error: Invalid value for '--format': 'html' is not one of 'text', 'json', 'markdown'. "
     "(see batch-quota simulate --help)"),
    (["tune", "x.yaml"], "error: Missing option '--budget'. (see batch-quota tune --help)"),
    (["nosuch"], "error: No such command 'nosuch'. (see batch-quota --help)"),
])
def test_a_usage_error_is_one_line_and_exit_2_as_a_process_sees_it(args, expected):
    script = Path(sys.executable).parent / "batch-quota"  # the installed command, as a user runs it
    run = subprocess.run([str(script), *args], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stdout, run.stderr) == (2, "", expected + "\n")
