"""SARIF 2.1.0 output of ``batch-quota check --format sarif``, for code-scanning annotations on pull requests.

``tool.driver.rules`` comes from the rule registry, so every ``ruleId`` in the results resolves;
each result points at the topology file, at the line of the object when the file is YAML.
A file that cannot be loaded still gets a log (``load_failure_to_dict``): an upload step in CI
then shows the load problems instead of failing on an empty file. The log is read from the domain by the
view (``reports.check.view.sarif_log``); this module writes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TextIO

import click

from policy_engine.reports.check.view import (
    LOAD_RULE,
    SCHEMA,
    CheckLoadFailure,
    CheckOutput,
    CheckReport,
    Topology,
    sarif_load_failure_log,
    sarif_log,
)

__all__ = ["LOAD_RULE", "SCHEMA", "load_failure_to_dict", "render", "to_dict", "write", "write_load_failure"]

to_dict = sarif_log
load_failure_to_dict = sarif_load_failure_log


def render(report: CheckReport, *, uri: str, topology: Topology | None = None,
           lines: Mapping[tuple[str | int, ...], int] | None = None) -> str:
    return json.dumps(to_dict(report, uri=uri, topology=topology, lines=lines), indent=2, allow_nan=False)


def write(output: CheckOutput, stream: TextIO) -> None:
    click.echo(render(output.report, uri=output.uri(), topology=output.topology, lines=output.lines()), file=stream)


def write_load_failure(failure: CheckLoadFailure, stream: TextIO) -> None:
    log = load_failure_to_dict(failure.error.located, uri=failure.uri(), source=failure.source)
    click.echo(json.dumps(log, indent=2, allow_nan=False), file=stream)
