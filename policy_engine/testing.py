"""The pytest entry point for users' repositories: assert a topology passes ``batch-quota check`` in one line.

    from policy_engine.testing import assert_topology_ok

    def test_production_topology():
        assert_topology_ok("topologies/prod.yaml")

Installed as a pytest plugin (entry point ``pytest11``), the same helper is also the
fixture ``assert_topology_ok``. A failure lists every finding, one line each, so the
test output reads like ``batch-quota check``.

The fixture ``batch_endpoint`` runs ``batch-quota serve`` (an empty account, clock at
speed 0: it moves on ``batch_endpoint.advance(seconds)``) on a free port for the test
session and sets ``AWS_ENDPOINT_URL_BATCH``, so unchanged boto3 code talks to it::

    def test_submit(batch_endpoint):
        batch_endpoint.load_topology("topologies/prod.yaml")
        batch = boto3.client("batch")
        ...
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from policy_engine.checks import CheckReport, check_topology
from policy_engine.loading import LoadError, load_topology
from policy_engine.model import Suppression, Topology


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


try:  # the fixture needs pytest, which is only a development dependency
    import pytest
except ImportError:  # pragma: no cover - exercised only without pytest installed
    pass
else:

    @pytest.fixture(scope="session")
    def batch_endpoint():
        """A local AWS Batch endpoint for the session; ``AWS_ENDPOINT_URL_BATCH`` (and dummy credentials and
        Region, when none are set) point every boto3 client at it. Yields a ``RunningEndpoint``."""
        import os

        from policy_engine.endpoint.server import start_in_thread
        from policy_engine.endpoint.service import Options, Service

        endpoint = start_in_thread(Service(Options(speed=0)))
        settings = {"AWS_ENDPOINT_URL_BATCH": endpoint.url}
        for name, dummy in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                            ("AWS_DEFAULT_REGION", "us-east-1")):
            if not os.environ.get(name) and not (name == "AWS_DEFAULT_REGION" and os.environ.get("AWS_REGION")):
                settings[name] = dummy
        saved = {name: os.environ.get(name) for name in settings}
        os.environ.update(settings)
        try:
            yield endpoint
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            endpoint.stop()

    @pytest.fixture(name="assert_topology_ok")
    def _assert_topology_ok_fixture():
        """Fixture form of ``assert_topology_ok`` for tests that prefer fixtures over imports."""
        return assert_topology_ok
