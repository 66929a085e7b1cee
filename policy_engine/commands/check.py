"""``batch-quota check [TOPOLOGY] [--format text|json|sarif|markdown] [--strict]``: run every rule and report.

Exit 0 when no rule finds an unsuppressed error (warnings allowed, unless ``--strict``), 1 when one
does, 2 when the input cannot be loaded or the command is misused (see ``policy_engine.cli``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import click

from policy_engine.checks import check_topology
from policy_engine.cli import EXIT_FINDINGS, EXIT_OK, SafePath, fail_input, topology_or_exit
from policy_engine.examples import EXAMPLE_YAML
from policy_engine.loading import LoadError, load_topology, read_data
from policy_engine.reports import check_json, check_sarif, check_text


def _uri(path: Path, root: Path | None = None) -> str:
    """The file as SARIF wants it: relative to ``root`` (default: the working directory, the repository root
    in CI), as the user named it, so a symlink in the repository is reported as itself and not as its target.
    Outside ``root`` the uri is an absolute ``file://`` one, which code scanning cannot place on a diff."""
    base = Path(os.path.abspath(root or Path.cwd()))
    absolute = Path(os.path.abspath(path))  # normalises ``..`` without resolving symlinks
    if absolute.is_relative_to(base):
        return absolute.relative_to(base).as_posix()
    if absolute.resolve().is_relative_to(base.resolve()):  # e.g. the working directory is reached via a symlink
        return absolute.resolve().relative_to(base.resolve()).as_posix()
    return absolute.as_uri()


def _lines(path: Path) -> dict:
    """Line numbers per object path (YAML only); a file that loaded once reads again without problems."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        return {}
    try:
        return dict(read_data(path)[1])
    except LoadError:
        return {}


def _use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


@click.command("check")
@click.argument("topology", required=False, type=SafePath(dir_okay=False, allow_dash=True))
@click.option("--format", "output_format", type=click.Choice(["text", "json", "sarif", "markdown"]), default="text",
              show_default=True, help="text: tables for people; json: findings and summary; sarif: code scanning; "
              "markdown: a pull-request comment or CI job summary.")
@click.option("--sarif-root", type=SafePath(file_okay=False), default=None, metavar="DIR",
              help="SARIF uris are relative to DIR (default: the working directory; the repository root in CI).")
@click.option("--strict", is_flag=True, help="Exit 1 on unsuppressed warnings too (suppress accepted ones in the "
              "topology's suppress: list, with a reason).")
def command(topology: str | None, output_format: str, sarif_root: str | None, strict: bool) -> None:
    """Check TOPOLOGY (YAML, JSON or Python; ``-`` reads YAML/JSON from stdin; default: the embedded example)."""
    file = Path(topology) if topology else EXAMPLE_YAML
    root = Path(sarif_root) if sarif_root else None
    if output_format != "text" and topology is not None:
        try:
            loaded = load_topology(topology)
        except LoadError as error:
            # CI reads whatever stdout holds: a document that says the file did not load, then the usual lines, exit 2.
            if output_format == "sarif":
                log = check_sarif.load_failure_to_dict(error.located, uri=_uri(file, root), source=topology)
                click.echo(json.dumps(log, indent=2, allow_nan=False))
            elif output_format == "json":
                click.echo(check_json.render_load_failure(error.problems, source=topology))
            else:
                from policy_engine.reports import markdown

                click.echo(markdown.render_load_failure(error.problems, source=topology), nl=False)
            fail_input(error.problems)
    else:
        loaded = topology_or_exit(topology)
    report = check_topology(loaded)
    source = "(stdin)" if topology == "-" else topology or "(embedded example)"
    if output_format == "json":
        click.echo(check_json.render(report, source=source, strict=strict))
    elif output_format == "markdown":
        # Only here: markdown shares the simulator's number formatting, which plain ``check`` never loads.
        from policy_engine.reports import markdown

        click.echo(markdown.render_check(report, source=source, strict=strict), nl=False)
    elif output_format == "sarif":
        click.echo(check_sarif.render(report, uri=_uri(file, root), topology=loaded, lines=_lines(file)))
    else:
        width = shutil.get_terminal_size((200, 24)).columns if sys.stdout.isatty() else 200
        click.echo(check_text.render(report, source=source, color=_use_color(), width=width, strict=strict), nl=False)
    raise SystemExit(EXIT_OK if report.passes(strict) else EXIT_FINDINGS)
