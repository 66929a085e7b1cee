"""``simulate --format json`` and ``--events``: numbers are integers whenever integral."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.app import main

TOPOLOGY = Path(__file__).parents[3] / "topologies" / "example.yaml"


def test_json_numbers_are_integers_when_integral_whatever_path_made_them(tmp_path):
    topo = tmp_path / "topology.yaml"
    topo.write_text(TOPOLOGY.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "s.yaml").write_text("topology: topology.yaml\njobs:\n"
                                     "  - {name: a, share: QS1, duration: 10}\n"
                                     "  - {name: b, share: QS2, submit_at: 0.5, duration: 9.5}\n", encoding="utf-8")
    for until in ("49", "50"):
        events = tmp_path / f"e{until}.jsonl"
        out = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml"), "--until", until, "--format", "json",
                                        "--events", str(events)])
        assert out.exit_code == 0, out.output
        data = json.loads(out.output)
        assert repr(data["time"]) == until
        assert [(j["finished_at"], j["wait_seconds"]) for j in data["jobs"]] == [(10, 0), (10, 0)]
        assert all(type(j["finished_at"]) is int for j in data["jobs"])
        assert [json.loads(line)["time"] for line in events.read_text().splitlines()][-1] == 10
        assert '"time": 10,' in events.read_text() and "10.0" not in events.read_text()
        assert ".0," not in out.output and ".0}" not in out.output
