"""``batch-quota graph [TOPOLOGY] -o FILE``: draw the borrow graph as SVG, PNG or DOT.

The picture is drawn even when the check finds errors (that is when one needs it most):
flagged shares are highlighted instead. Exit 0 when the file is written, 2 when the input
cannot be loaded, the format is unknown or Graphviz's ``dot`` is missing for SVG/PNG. The file's
suffix chooses the format from ``reports.registry.GRAPH_FORMATS``.
"""

from __future__ import annotations

from pathlib import Path

import click

from policy_engine.analysis.checks import check_topology
from policy_engine.cli.commands.shared import EXIT_OK, SafePath, fail_input, python_topologies, topology_or_exit
from policy_engine.inputs.input_files import refuse_overwriting_inputs
from policy_engine.reports.graph import borrow_graph as borrow_graph_render
from policy_engine.reports.registry import GRAPH_FORMATS


@python_topologies()
@click.command("graph")
@click.argument("topology", required=False, type=SafePath(dir_okay=False))
@click.option("-o", "--output", "output", type=SafePath(dir_okay=False), default=None,
              help=f"File to write: {GRAPH_FORMATS.suffix_list()} (default: DOT on standard output).")
@click.option("--queue", "queues", multiple=True, metavar="NAME",
              help="Draw only this job queue (repeatable); for large topologies.")
@click.option("--edges", "edge_mode", type=click.Choice([m.value for m in borrow_graph_render.EdgeMode]),
              default=borrow_graph_render.EdgeMode.POOL.value, show_default=True,
              help="pool: lenders feed a pool per queue and instance type that borrowers draw from (at most two "
                   "edges per share and type); pairwise: one edge per lender, borrower and type.")
@click.option("--instance-type", "instance_types", multiple=True, metavar="TYPE",
              help="Draw only this instance type's borrowing (repeatable).")
def command(topology: str | None, output: str | None, queues: tuple[str, ...], edge_mode: str,
            instance_types: tuple[str, ...]) -> None:
    """Draw the borrow graph of TOPOLOGY (default: the embedded example): who can lend what to whom."""
    overwritten = refuse_overwriting_inputs({"--output": output}, [topology if topology != "-" else None])
    if overwritten:
        fail_input(overwritten)
    loaded = topology_or_exit(topology)
    unknown = [name for name in queues if loaded.queue(name) is None]
    if unknown:
        known = ", ".join(q.name for q in loaded.job_queues[:10]) or "none defined"
        fail_input([f"--queue {name}: no job queue {name!r} in the topology (known: {known})" for name in unknown])
    types = {t for s in (s for _, s in loaded.shares()) for t in s.capacity}
    wrong = [t for t in instance_types if t not in types]
    if wrong:
        known = ", ".join(sorted(types)) or "none"
        fail_input([f"--instance-type {t}: no share of the topology has a limit for it (types: {known})"
                    for t in wrong])
    try:
        picture = borrow_graph_render.build_dot(loaded, check_topology(loaded), queues,
                                                borrow_graph_render.EdgeMode(edge_mode), instance_types)
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
