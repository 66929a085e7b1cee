"""``batch-quota graph [TOPOLOGY] -o FILE``: draw the borrow graph as SVG, PNG or DOT.

The picture is drawn even when the check finds errors (that is when one needs it most):
flagged shares are highlighted instead. Exit 0 when the file is written, 2 when the input
cannot be loaded, the format is unknown or Graphviz's ``dot`` is missing for SVG/PNG. The file's
suffix chooses the format from ``reports.registry.GRAPH_FORMATS``.
"""

from __future__ import annotations

from pathlib import Path

import click

from policy_engine.checks import check_topology
from policy_engine.commands.shared import EXIT_OK, SafePath, fail_input, topology_or_exit
from policy_engine.input_files import refuse_overwriting_inputs
from policy_engine.reports import borrow_graph_render
from policy_engine.reports.registry import GRAPH_FORMATS


@click.command("graph")
@click.argument("topology", required=False, type=SafePath(dir_okay=False))
@click.option("-o", "--output", "output", type=SafePath(dir_okay=False), default=None,
              help=f"File to write: {GRAPH_FORMATS.suffix_list()} (default: DOT on standard output).")
@click.option("--queue", "queues", multiple=True, metavar="NAME",
              help="Draw only this job queue (repeatable); for large topologies.")
def command(topology: str | None, output: str | None, queues: tuple[str, ...]) -> None:
    """Draw the borrow graph of TOPOLOGY (default: the embedded example): who can lend what to whom."""
    overwritten = refuse_overwriting_inputs({"--output": output}, [topology if topology != "-" else None])
    if overwritten:
        fail_input(overwritten)
    loaded = topology_or_exit(topology)
    unknown = [name for name in queues if loaded.queue(name) is None]
    if unknown:
        known = ", ".join(q.name for q in loaded.job_queues[:10]) or "none defined"
        fail_input([f"--queue {name}: no job queue {name!r} in the topology (known: {known})" for name in unknown])
    try:
        picture = borrow_graph_render.build_dot(loaded, check_topology(loaded), queues)
    except borrow_graph_render.RenderError as error:
        fail_input([str(error)])
    if output is None:
        click.echo(picture.source, nl=False)
        raise SystemExit(EXIT_OK)
    path = Path(output)
    chosen = GRAPH_FORMATS.for_path(path)
    if chosen is None:
        fail_input([f"{path}: unknown picture format {path.suffix or '(none)'!r}; use {GRAPH_FORMATS.suffix_list()}"])
    try:
        chosen.load()(picture, path)
    except borrow_graph_render.RenderError as error:
        fail_input([str(error)])
    except OSError as error:
        fail_input([f"{output}: cannot write ({error.strerror})"])
    click.echo(f"wrote {output}", err=True)
    raise SystemExit(EXIT_OK)
