"""An eight-team company on two instance types: what the profile tests draw for and fit from."""

from __future__ import annotations

from pathlib import Path

import pytest

from policy_engine.inputs.loading import load_topology

COMPANY = """\
service_environments:
  - name: gpu
    capacity: {ml.p4d.24xlarge: 16, ml.g5.12xlarge: 48}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: vision, capacity: {ml.p4d.24xlarge: 6, ml.g5.12xlarge: 8}, strategy: LEND_AND_BORROW}
      - {name: language, capacity: {ml.p4d.24xlarge: 6}, strategy: LEND_AND_BORROW, borrow_limit: 100}
      - {name: speech, capacity: {ml.g5.12xlarge: 8}, strategy: LEND}
      - {name: ranking, capacity: {ml.g5.12xlarge: 8}, strategy: LEND_AND_BORROW}
      - {name: ads, capacity: {ml.g5.12xlarge: 6}, strategy: RESERVE}
      - {name: safety, capacity: {ml.p4d.24xlarge: 2, ml.g5.12xlarge: 4}, strategy: LEND}
      - {name: research, capacity: {ml.p4d.24xlarge: 2, ml.g5.12xlarge: 10}, strategy: LEND_AND_BORROW}
      - {name: platform, capacity: {ml.g5.12xlarge: 4}, strategy: LEND}
"""


@pytest.fixture
def company(tmp_path: Path) -> Path:
    path = tmp_path / "company.yaml"
    path.write_text(COMPANY, encoding="utf-8")
    return path


@pytest.fixture
def company_topology(company: Path):
    return load_topology(company)
