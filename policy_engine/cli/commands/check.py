"""``batch-quota check [TOPOLOGY] [--format text|json|sarif|markdown] [--strict]``: run every rule and report.

The formats and their renderers are ``reports.registry.CHECK_FORMATS``.

Exit 0 when no rule finds an unsuppressed error (warnings allowed, unless ``--strict``), 1 when one
does, 2 when the input cannot be loaded or the command is misused (see ``policy_engine.cli.app``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from policy_engine.analysis.checks import check_topology
from policy_engine.cli.commands.shared import (
    EXIT_FINDINGS,
    EXIT_OK,
    SafePath,
    fail_input,
    python_topologies,
    topology_or_exit,
)
from policy_engine.inputs.examples import EXAMPLE_YAML
from policy_engine.inputs.loading import LoadError, load_topology
from policy_engine.reports.kit.subjects import CheckLoadFailure, CheckOutput
from policy_engine.reports.registry import CHECK_FORMATS


@python_topologies()
@click.command("check")
@click.argument("topology", required=False, type=SafePath(dir_okay=False, allow_dash=True))
@CHECK_FORMATS.option()
@click.option("--sarif-root", type=SafePath(file_okay=False), default=None, metavar="DIR",
              help="SARIF uris are relative to DIR (default: the working directory; the repository root in CI).")
@click.option("--strict", is_flag=True, help="Exit 1 on unsuppressed warnings too (suppress accepted ones in the "
              "topology's suppress: list, with a reason).")
def command(topology: str | None, output_format: str, sarif_root: str | None, strict: bool) -> None:
    """Check TOPOLOGY (YAML, JSON or Python; '-' reads YAML/JSON from stdin; default: the embedded example)."""
    file = Path(topology) if topology else EXAMPLE_YAML
    root = Path(sarif_root) if sarif_root else None
    renderer = CHECK_FORMATS.renderer(output_format)
    if renderer.load_failure is not None and topology is not None:
        try:
            loaded = load_topology(topology)
        except LoadError as error:
            # CI reads whatever stdout holds: a document that says the file did not load, then the usual lines, exit 2.
            renderer.load_failure(CheckLoadFailure(error, source=topology, file=file, root=root), sys.stdout)
            fail_input(error.problems)
    else:
        loaded = topology_or_exit(topology)
    report = check_topology(loaded)
    source = "(stdin)" if topology == "-" else topology or "(embedded example)"
    if loaded.named_at_deploy:
        source += f" ({len(loaded.named_at_deploy)} object(s) named at deploy: their names are logical IDs)"
    renderer.render(CheckOutput(report, loaded, source=source, file=file, strict=strict, root=root), sys.stdout)
    raise SystemExit(EXIT_OK if report.passes(strict) else EXIT_FINDINGS)
