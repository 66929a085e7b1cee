"""``batch-quota explain SHARE [TOPOLOGY]``: what one share can count on, in plain sentences.

``explain TOPOLOGY SHARE`` is accepted too (a file name is told apart from a share by its suffix).
SHARE is ``QUEUE/SHARE``, or ``SHARE`` when the name is unique. An unknown or ambiguous
share is one line on stderr and exit 2. ``--format`` chooses a renderer from
``reports.registry.EXPLAIN_FORMATS``.
"""

from __future__ import annotations

import sys

import click

from policy_engine.checks import check_topology
from policy_engine.commands.shared import EXIT_OK, SafePath, fail_input, topology_or_exit
from policy_engine.model import share_id
from policy_engine.reports.registry import EXPLAIN_FORMATS
from policy_engine.reports.subjects import ExplainOutput

_TOPOLOGY_SUFFIXES = (".yaml", ".yml", ".json", ".py")


def _looks_like_topology(argument: str) -> bool:
    return argument == "-" or argument.lower().endswith(_TOPOLOGY_SUFFIXES)


@click.command("explain")
@click.argument("share")
@click.argument("topology", required=False, type=SafePath(dir_okay=False, allow_dash=True))
@EXPLAIN_FORMATS.option()
def command(share: str, topology: str | None, output_format: str) -> None:
    """Explain SHARE (QUEUE/SHARE or a unique SHARE name) of TOPOLOGY (default: the embedded example).

    'explain TOPOLOGY SHARE', the order other commands put the file in, works too.
    """
    if topology is not None and _looks_like_topology(share) and not _looks_like_topology(topology):
        share, topology = topology, share
    elif topology is None and _looks_like_topology(share):
        fail_input([f"explain takes SHARE [TOPOLOGY]: {share!r} looks like a topology file; "
                    f"name the share too, e.g. batch-quota explain QUEUE/SHARE {share}"])
    loaded = topology_or_exit(topology)
    match = loaded.find_share(share)
    node = match.share_id
    if node is None:  # ambiguous: the resolver's words; unknown: also the file and the shares it has
        known = ", ".join(share_id(q, s) for q, s in loaded.shares()[:10]) or "none defined"
        unknown = f"no quota share {share!r} in {topology or 'the embedded example'} (known: {known})"
        fail_input([match.error if match.candidates and match.error else unknown])
    output = ExplainOutput(loaded, node, check_topology(loaded))
    EXPLAIN_FORMATS.renderer(output_format)(output, sys.stdout)
    raise SystemExit(EXIT_OK)
