"""``tune -o`` edits the author's topology file: only the changed values differ (comments, key order and numbers
kept); JSON keeps its key order; a ``.py`` output is refused with one line and exit 2."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from tests.builders import GPU

TRANSFER = "transfer(q/B,q/A).capacity.ml.g5.xlarge"
TOPOLOGY = f"""# The team's quota shares: reviewed by the platform team
service_environments:
  - {{name: env, capacity: {{{GPU}: 6}}}}   # six g5 in all
job_queues:
  - name: q
    service_environment: env
    shares:
      # A trains the small models
      - {{name: A, capacity: {{{GPU}: 1}}, strategy: RESERVE}}
      - {{name: B, capacity: {{{GPU}: 5}}, strategy: RESERVE}}
targets:
  - {{share: q/B, wait_p95: 604800}}   # a week, in seconds
"""
JOBS = "".join(f"  - {{name: {share.lower()}{i}, share: {share}, submit_at: 0, duration: 3600}}\n"
               for share in "AB" for i in range(1, 4))


def _tune(tmp_path: Path, out: str, topology_name: str = "topology.yaml") -> tuple[int, str, Path]:
    (tmp_path / "scenario.yaml").write_text(f"topology: {topology_name}\njobs:\n{JOBS}", encoding="utf-8")
    result = CliRunner().invoke(main, ["tune", str(tmp_path / "scenario.yaml"), "--vary", f"{TRANSFER}=0..2",
                                       "--budget", "3", "--workers", "1", "--quiet", "-o", str(tmp_path / out)])
    return result.exit_code, result.output, tmp_path / out


def test_yaml_is_edited_in_place_so_only_the_changed_values_differ(tmp_path: Path):
    (tmp_path / "topology.yaml").write_text(TOPOLOGY, encoding="utf-8")
    code, output, out = _tune(tmp_path, "recommended.yaml")
    assert code == 0, output
    written = out.read_text(encoding="utf-8")
    changed = [line for line in difflib.unified_diff(TOPOLOGY.splitlines(), written.splitlines(), lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    # the transfer moved 2 g5 from B to A: those two lines, and the queue's priority every written file states
    # (``file_data``), nothing else (comments, order, 604800 kept)
    assert changed == [f"-      - {{name: A, capacity: {{{GPU}: 1}}, strategy: RESERVE}}",
                       f"-      - {{name: B, capacity: {{{GPU}: 5}}, strategy: RESERVE}}",
                       f"+      - {{name: A, capacity: {{{GPU}: 3}}, strategy: RESERVE}}",
                       f"+      - {{name: B, capacity: {{{GPU}: 3}}, strategy: RESERVE}}",
                       "+    priority: 1"]
    assert "wait_p95: 604800}" in written
    check = CliRunner().invoke(main, ["check", str(out)])
    assert check.exit_code == 0, check.output


def test_json_keeps_its_key_order(tmp_path: Path):
    data = yaml.safe_load(TOPOLOGY)
    data = {"job_queues": data["job_queues"], "targets": data["targets"],
            "service_environments": data["service_environments"]}  # not the model's order
    (tmp_path / "topology.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    code, output, out = _tune(tmp_path, "recommended.json", "topology.json")
    assert code == 0, output
    written = json.loads(out.read_text(encoding="utf-8"))
    assert list(written) == ["job_queues", "targets", "service_environments"]
    assert [s["capacity"][GPU] for s in written["job_queues"][0]["shares"]] == [3, 3]
    assert written["targets"] == [{"share": "q/B", "wait_p95": 604800}]


@pytest.mark.parametrize("out", ["topology.py", "recommended.PY"])
def test_a_python_output_is_refused_with_one_line_and_exit_2(tmp_path: Path, out: str):
    (tmp_path / "topology.yaml").write_text(TOPOLOGY, encoding="utf-8")
    code, output, path = _tune(tmp_path, out)
    assert code == 2 and not path.exists()
    [line] = [line for line in output.splitlines() if line.strip()]
    assert "not as a Python module" in line and f"-o {path.with_suffix('.yaml')}" in line


def test_priorities_and_borrow_limits_are_written_explicitly(tmp_path: Path):
    """A queue's priority and every LEND_AND_BORROW share's borrow limit are stated in the recommendation even where
    the author left them out (unset borrow limit: -1, AWS's default), never a borrow limit on another share."""
    source = TOPOLOGY.replace(f"{GPU}: 1}}, strategy: RESERVE", f"{GPU}: 1}}, strategy: LEND_AND_BORROW")
    (tmp_path / "topology.yaml").write_text(source, encoding="utf-8")  # B lends nothing: A still waits
    code, output, out = _tune(tmp_path, "recommended.yaml")
    assert code == 0 and out.exists(), output
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    queue = written["job_queues"][0]
    assert queue["priority"] == 1
    assert [(s["name"], s["strategy"], s.get("borrow_limit")) for s in queue["shares"]] == [
        ("A", "LEND_AND_BORROW", -1), ("B", "RESERVE", None)]
