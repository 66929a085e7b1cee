"""The pytest entry point for users' repositories: assert a topology passes ``batch-quota check`` in one line.

    from policy_engine.testing import assert_topology_ok

    def test_production_topology():
        assert_topology_ok("topologies/prod.yaml")

Installed as a pytest plugin (entry point ``pytest11``), the same helper is also the
fixture ``assert_topology_ok``. A failure lists every finding, one line each, so the
test output reads like ``batch-quota check``.

The fixture ``batch_endpoint`` runs ``batch-quota serve`` (an empty account, clock at
speed 0: it moves on ``batch_endpoint.advance(seconds)``) on a free port for the test
session and sets ``AWS_ENDPOINT_URL_BATCH`` (and ``AWS_ENDPOINT_URL_SAGEMAKER``, for the served
training plans) in each test that uses it, so unchanged boto3 code talks to it (the account is
shared by the session: ``reset()`` starts over)::

    def test_submit(batch_endpoint):
        batch_endpoint.load_topology("topologies/prod.yaml")
        batch = boto3.client("batch")
        ...

``assert_no_regression(base, head)`` is ``batch-quota diff`` for pytest: it fails when a change
loses a guarantee, weakens or drops a declared one (unless a suppression of BQ501/BQ502 in HEAD
accepts it), adds a finding or has a deploy hazard (``fail_on`` chooses which, as ``--fail-on``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from policy_engine.analysis.checks import CheckReport, check_topology
from policy_engine.changes.report import FAIL_ON
from policy_engine.foundation.model import Suppression, Topology
from policy_engine.inputs.loading import LoadError, load_topology

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.server import RunningEndpoint
    from policy_engine.changes.hazards import Policy
    from policy_engine.changes.report import ChangeReport


def assert_topology_ok(topology: Topology | str | Path, *, allow_warnings: bool = True,
                       suppress: Iterable[Suppression] = ()) -> CheckReport:
    """Load (if a path) and check ``topology``; raise ``AssertionError`` listing every unsuppressed error (and
    warning when ``allow_warnings`` is false, like ``check --strict``). ``suppress`` adds to the topology's own
    suppressions. Returns the report so a test can assert more, e.g. on ``report.summaries``."""
    __tracebackhide__ = True
    if not isinstance(topology, Topology):
        try:
            topology = load_topology(topology)
        except LoadError as error:
            raise AssertionError("topology cannot be loaded:\n" + "\n".join(error.problems)) from None
    report = check_topology(topology, suppress=suppress)
    failing = report.errors + ([] if allow_warnings else report.warnings)
    if failing:
        lines = "\n".join(f"  {finding.line()}" for finding in failing)
        raise AssertionError(f"topology check found {len(failing)} problem(s):\n{lines}")
    return report


def assert_no_regression(base: Topology | str | Path, head: Topology | str | Path, *,
                         fail_on: tuple[str, ...] = FAIL_ON,
                         renames: tuple[str, ...] = ()) -> ChangeReport:
    """Compare two topologies (paths, ``REF:PATH`` from git, ``/dev/null``, or ``Topology`` objects) and raise
    ``AssertionError`` listing every lost guarantee, weakened or dropped declaration, new finding and hazard
    selected by ``fail_on``.
    ``renames`` are ``--rename`` values (``QUEUE/OLD=QUEUE/NEW``). Returns the ``ChangeReport``."""
    __tracebackhide__ = True
    from policy_engine.changes import compare
    from policy_engine.changes.sources import load_side
    from policy_engine.inputs.renames import parse_renames

    sides: list[tuple[Topology, str, dict[str, Policy] | None]] = []
    for side in (base, head):
        if isinstance(side, Topology):
            sides.append((side, "<topology>", None))
            continue
        try:
            loaded = load_side(str(side))
        except LoadError as error:
            raise AssertionError("topology cannot be loaded:\n" + "\n".join(error.problems)) from None
        sides.append((loaded.topology, loaded.label, loaded.policies))
    (before, base_label, base_policies), (after, head_label, head_policies) = sides
    try:
        declared = parse_renames(renames, before, after)
    except LoadError as error:
        raise AssertionError("bad rename:\n" + "\n".join(error.problems)) from None
    policies = (base_policies, head_policies) if base_policies is not None and head_policies is not None else None
    report = compare(before, after, declared, base_label=base_label, head_label=head_label, policies=policies)
    lines = []
    if "guarantee" in fail_on:
        lines += [f"  guarantee lost: {g.share} {g.property}{' ' + g.instance_type if g.instance_type else ''}: "
                  f"{g.message}" for g in report.lost_guarantees]
    for which in ("guarantee-weakened", "guarantee-dropped"):
        if which in fail_on:
            lines += [f"  {which.replace('-', ' ')}: {p.label}: {p.before} -> {p.after} (accept with a suppression "
                      f"of {p.kind.rule} on {p.share} in HEAD)" for p in report.failing_promises(which)]
    if "finding" in fail_on:
        lines += [f"  new finding: {finding.line()}" for finding in report.new_findings]
    if "hazard" in fail_on:
        lines += [f"  hazard: {hazard.kind} {hazard.resource_type} {hazard.name}: {hazard.message}"
                  for hazard in report.hazards]
    if lines:
        raise AssertionError(f"{base_label} -> {head_label}: {len(lines)} regression(s):\n" + "\n".join(lines))
    return report


try:  # the fixture needs pytest, which is only a development dependency
    import pytest
except ImportError:  # pragma: no cover - exercised only without pytest installed
    pass
else:

    @pytest.fixture(scope="session")
    def batch_endpoint_server() -> Iterator[RunningEndpoint]:
        """``batch-quota serve`` on a free port for the whole session (empty account, clock at speed 0)."""
        from policy_engine.adapters.endpoint.server import start_in_thread
        from policy_engine.adapters.endpoint.service import Options, Service

        endpoint = start_in_thread(Service(Options(speed=0)))
        try:
            yield endpoint
        finally:
            endpoint.stop()

    @pytest.fixture
    def batch_endpoint(batch_endpoint_server: RunningEndpoint, monkeypatch: pytest.MonkeyPatch) -> RunningEndpoint:
        """The session's local AWS Batch endpoint, with ``AWS_ENDPOINT_URL_BATCH`` and ``AWS_ENDPOINT_URL_SAGEMAKER``
        (and dummy credentials and Region, where none are set) pointing every boto3 client at it during the test
        (SageMaker: its training plans; other SageMaker calls are refused). A ``RunningEndpoint``:
        ``load_topology``, ``advance``, ``reset``, ``export``, ``url``."""
        import os

        monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", batch_endpoint_server.url)
        monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", batch_endpoint_server.url)
        for name, dummy in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
            if not os.environ.get(name):
                monkeypatch.setenv(name, dummy)
        if not (os.environ.get("AWS_DEFAULT_REGION") or os.environ.get("AWS_REGION")):
            monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        return batch_endpoint_server

    @pytest.fixture(name="assert_topology_ok")
    def _assert_topology_ok_fixture() -> Callable[..., CheckReport]:
        """Fixture form of ``assert_topology_ok`` for tests that prefer fixtures over imports."""
        return assert_topology_ok
