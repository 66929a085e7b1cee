"""``diff --scenario snapshot.yaml --at 0``: which running jobs of a live queue a deploy would preempt.

A snapshot is a scenario whose jobs carry ``status`` (RUNNING, SCHEDULED, STARTING), ``started_at`` and
``remaining`` (the account connectors write them).
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from policy_engine.cli.app import main

BASE = """\
service_environments: [{name: gpu-env, capacity: {ml.g5.xlarge: 4}}]
job_queues:
  - name: training
    service_environment: gpu-env
    shares:
      - {name: QS1, capacity: {ml.g5.xlarge: 2}, strategy: LEND_AND_BORROW}
      - {name: QS2, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
      - {name: QS3, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}
"""
# QS1 gives an instance to QS3: QS1's second running job is above its new limit
HEAD = BASE.replace("QS1, capacity: {ml.g5.xlarge: 2}", "QS1, capacity: {ml.g5.xlarge: 1}").replace(
    "QS3, capacity: {ml.g5.xlarge: 1}", "QS3, capacity: {ml.g5.xlarge: 2}")
SNAPSHOT = """\
topology: base.yaml
jobs:
  - {name: r1, share: QS1, duration: 3600, status: RUNNING, started_at: -600, remaining: 3000}
  - {name: r2, share: QS1, duration: 3600, status: RUNNING, started_at: -300, remaining: 3300}
  - {name: r3, share: QS2, duration: 3600, status: RUNNING, started_at: -300, remaining: 3300}
  - {name: r4, share: QS3, duration: 3600, status: RUNNING, started_at: -300, remaining: 3300}
  - {name: w1, share: QS3, duration: 600, submit_at: 10}
"""


def test_a_deploy_at_0_preempts_the_running_job_above_the_lowered_limit_when_capacity_is_needed(write_file):
    base, head = write_file("base.yaml", BASE), write_file("head.yaml", HEAD)
    snapshot = write_file("snapshot.yaml", SNAPSHOT)
    result = CliRunner().invoke(main, ["diff", str(base), str(head), "--scenario", str(snapshot), "--at", "0",
                                       "--format", "json"])
    assert result.exit_code == 1, result.output  # the lowered limit is a hazard
    impact = json.loads(result.output)["impact"]
    assert [(job["name"], job["preemptions_before"], job["preemptions_after"]) for job in impact["preempted"]] == \
        [("r2", 0, 1)]
    waits = {row["share"]: (row["mean_wait_before"], row["mean_wait_after"]) for row in impact["waits"]}
    assert waits["training/QS3"][1] < waits["training/QS3"][0]  # w1 no longer waits for r4
