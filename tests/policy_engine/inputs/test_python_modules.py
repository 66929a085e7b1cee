"""Python topology modules run code: their exits are reported, their prints kept off stdout, and a scenario
may name one only with ``--allow-python``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs.examples import EXAMPLE_YAML
from policy_engine.inputs.loading import LoadError, load_topology

MODULE = """\
from policy_engine.inputs.examples import example_topology
BODY
TOPOLOGY = example_topology()
"""


def _module(write_file, body: str, name: str = "topo.py"):
    return write_file(name, MODULE.replace("BODY", body))


@pytest.mark.parametrize("body, how", [
    ("import sys; sys.exit(0)", "sys.exit(0)"),
    ("raise SystemExit(3)", "sys.exit(3)"),
    ("exit()", "sys.exit(None)"),
    ("import os; os._exit(0)", "os._exit(0)"),
    ("from os import _exit; _exit(0)", "os._exit(0)"),
])
def test_a_module_that_exits_is_reported_not_a_silent_pass(write_file, body, how):
    path = _module(write_file, body)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {path}: topology module exited while importing the module ({how}); "
        "a topology module must define TOPOLOGY, not end the process"]


def test_exiting_inside_a_topology_function_is_reported(write_file):
    path = write_file("f.py", "import sys\ndef TOPOLOGY():\n    sys.exit(0)\n")
    with pytest.raises(LoadError, match="topology module exited while calling TOPOLOGY"):
        load_topology(path)


def test_a_modules_prints_go_to_stderr_so_json_stays_valid(write_file):
    path = _module(write_file, "print('hello from the module')")
    result = CliRunner().invoke(main, ["check", str(path), "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["ok"] is True
    assert "hello from the module" in result.stderr


def test_not_utf8_module_is_one_line(tmp_path):
    path = tmp_path / "t.py"
    path.write_bytes(b"# caf\xe9\n")
    with pytest.raises(LoadError) as error:
        load_topology(path)
    assert error.value.problems == [f"{path}: not UTF-8 text (byte 0xE9 at line 1)"]


def test_scenario_naming_a_python_topology_needs_allow_python(write_file, tmp_path):
    _module(write_file, "print('ran')")
    write_file("jobs.csv", "name,share,duration\nj1,QS1,60\n")
    scenario = write_file("scenario.yaml", "topology: topo.py\njobs: jobs.csv\n")
    refused = CliRunner().invoke(main, ["simulate", str(scenario)])
    assert refused.exit_code == 2 and "--allow-python" in refused.stderr and "ran" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    allowed = CliRunner().invoke(main, ["simulate", str(scenario), "--allow-python", "--format", "json"])
    assert allowed.exit_code == 0, allowed.stderr
    assert json.loads(allowed.stdout)["summary"]["jobs"] == 1 and "ran" in allowed.stderr


def test_a_yaml_scenario_topology_never_needs_the_flag(write_file):
    write_file("topo.yaml", EXAMPLE_YAML.read_text(encoding="utf-8"))
    write_file("jobs.csv", "name,share,duration\nj1,QS1,60\n")
    scenario = write_file("scenario.yaml", "topology: topo.yaml\njobs: jobs.csv\n")
    assert CliRunner().invoke(main, ["simulate", str(scenario)]).exit_code == 0


def test_readme_says_loading_a_module_runs_code():
    from pathlib import Path

    readme = " ".join((Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8").split())
    assert "A Python topology module runs code when it is loaded" in readme and "--allow-python" in readme


def test_a_modules_raw_writes_and_child_processes_do_not_reach_stdout(write_file):
    import subprocess
    import sys

    path = _module(write_file, "import os, subprocess, sys\nos.write(1, b'raw write\\n')\n"
                               "subprocess.run([sys.executable, '-c', 'print(\"child process\")'])")
    result = subprocess.run([sys.executable, "-c", "from policy_engine.cli.app import main; main()", "check", str(path),
                             "--format", "json"], capture_output=True, timeout=120)
    assert result.returncode == 0
    assert json.loads(result.stdout)["ok"] is True
    assert b"raw write" in result.stderr and b"child process" in result.stderr


@pytest.mark.parametrize("body", ["class Odd(BaseException): pass\nraise Odd('odd')", "raise GeneratorExit"])
def test_a_module_raising_a_base_exception_is_reported(write_file, body):
    path = _module(write_file, body)
    with pytest.raises(LoadError) as error:
        load_topology(path)
    assert len(error.value.problems) == 1 and "importing the module failed" in error.value.problems[0]


def test_a_topology_object_that_refuses_truthiness_is_reported(write_file):
    path = write_file("t.py", "class T:\n    def __bool__(self):\n        raise ValueError('no')\nTOPOLOGY = T()\n")
    with pytest.raises(LoadError, match="must define TOPOLOGY"):
        load_topology(path)


CONSTRUCTED = """\
from policy_engine.foundation.model import JobQueue, QuotaShare, ServiceEnvironment, Topology

TOPOLOGY = Topology.model_construct(
    service_environments=(ServiceEnvironment.model_construct(name="env", capacity={"ml.g5.xlarge": "lots"}),),
    job_queues=(JobQueue.model_construct(name="q", service_environment="env", shares=(
        QuotaShare.model_construct(name=7, capacity=[1, 2], strategy="RESERVE"),)),),
)
"""


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_module_that_skips_validation_is_validated_like_a_file(write_file, output_format):
    """``model_construct`` skips pydantic's checks: the loader makes them, one line per problem, exit 2."""
    path = write_file("constructed.py", CONSTRUCTED)
    result = CliRunner().invoke(main, ["check", str(path), "--format", output_format])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.strip().splitlines() == [
        f"error: {path}: service_environments[env].capacity.ml.g5.xlarge: input should be a valid integer, got 'lots'",
        f"error: {path}: job_queues[q].shares[0].name: input should be a valid string, got 7",
        f"error: {path}: job_queues[q].shares[0].capacity: input should be a valid dictionary, got a list"]
    if output_format == "json":
        assert json.loads(result.stdout)["loaded"] is False


def test_a_module_topology_that_contains_itself_is_one_problem(write_file):
    path = write_file("loop.py", "from policy_engine.model import Topology\nshares = []\nshares.append(shares)\n"
                                 "TOPOLOGY = Topology.model_construct(service_environments=shares, job_queues=())\n")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: {path}: the topology contains itself (a list inside its own fields)")


def test_a_valid_module_loads_as_the_same_topology(write_file):
    from policy_engine.inputs.examples import example_topology

    assert load_topology(_module(write_file, "")) == example_topology()
