#!/usr/bin/env python3
"""The CDK app: a batch-quota topology -> checked CloudFormation stack(s).

Context (``cdk synth -c KEY=VALUE``):
  topology    YAML/JSON file or Python module (default: the embedded AWS example)
  stack_name  stack name, or prefix of the per-queue stacks (default ``BatchQuota``)
  account, region   target environment (default: CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION)
  split       auto | single | per-queue (default auto: one stack when it fits)

Bad input prints one line per problem and exits 2; a topology that breaks a guarantee or
an AWS limit fails synthesis listing every finding and exits 1. Neither prints a traceback.
(``cdk synth`` reports any failing app as exit 1; these codes are the app's own.)
"""

from __future__ import annotations

import os
import sys
from typing import TypeGuard, get_args

from policy_engine.inputs.examples import example_topology
from policy_engine.inputs.loading import LoadError, load_topology
from policy_engine.reports.kit.safe_text import visible

EXIT_FINDINGS, EXIT_BAD_INPUT = 1, 2

_MISSING_CDK = ("the CDK app needs aws-cdk-lib and constructs, which are not installed: "
                "pip install 'batch-quota[cdk]' (check, simulate and graph work without them)")

try:  # quota_constructs first: it quiets jsii's Node banner before aws_cdk starts the jsii kernel
    from quota_constructs import TopologyStacks
    from quota_constructs.topology_stack import Split
except ImportError as error:  # the engine-only install: one line, not a traceback
    if not ((isinstance(error, ModuleNotFoundError) and error.name in ("aws_cdk", "constructs"))
            or "batch-quota[cdk]" in str(error)):
        raise
    print(f"error: {_MISSING_CDK}", file=sys.stderr)
    sys.exit(EXIT_BAD_INPUT)

from aws_cdk import App, Environment  # noqa: E402 (after quota_constructs, see above)


def _shown(error: Exception) -> str:
    """An error's lines with control characters escaped (a name in a finding is the user's text)."""
    return "\n".join(visible(line) for line in str(error).splitlines())


def _context(app: App, key: str) -> str | None:
    value = app.node.try_get_context(key)
    return str(value) if value not in (None, "") else None


def _is_split(value: str) -> TypeGuard[Split]:
    return value in get_args(Split)


def _split(app: App) -> Split:
    """The ``split`` context value (default ``auto``); one ``TopologyStacks`` does not know is bad input."""
    value = _context(app, "split") or "auto"
    if not _is_split(value):
        raise ValueError(f"TopologyStacks: split = {value!r} is invalid; expected one of {', '.join(get_args(Split))}")
    return value


def main(app: App | None = None) -> None:
    """Synthesize; ``app`` lets tests pass context and an output directory in-process."""
    app = app or App()
    path = _context(app, "topology")
    account = _context(app, "account") or os.environ.get("CDK_DEFAULT_ACCOUNT")
    region = _context(app, "region") or os.environ.get("CDK_DEFAULT_REGION")
    try:
        topology = load_topology(path) if path else example_topology()
        TopologyStacks(
            app,
            topology,
            stack_name=_context(app, "stack_name") or "BatchQuota",
            env=Environment(account=account, region=region) if account or region else None,
            split=_split(app),
        )
    except LoadError as error:
        for problem in error.problems:
            print(f"error: {visible(problem)}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    except ValueError as error:
        print(f"error: {_shown(error)}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    try:
        app.synth()
    except RuntimeError as error:  # jsii surfaces CDK's synthesis errors (our validations included) as RuntimeError
        print(f"error: {_shown(error)}", file=sys.stderr)
        sys.exit(EXIT_FINDINGS)


if __name__ == "__main__":
    main()
