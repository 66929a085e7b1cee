"""``batch-quota explain SHARE [TOPOLOGY]``: what one share can count on, in plain sentences.

SHARE is ``QUEUE/SHARE``, or ``SHARE`` when the name is unique. An unknown or ambiguous
share is one line on stderr and exit 2. Colour only on a terminal without ``NO_COLOR``
(rich decides).
"""

from __future__ import annotations

import click
from rich.text import Text

from policy_engine.checks import check_topology
from policy_engine.cli import EXIT_OK, SafePath, fail_input, topology_or_exit
from policy_engine.model import share_id
from policy_engine.reports import terminal
from policy_engine.reports.explain import explain_share
from policy_engine.reports.safe_text import visible

_TOPIC_STYLE = {"findings": "bold yellow", "what": "bold"}


@click.command("explain")
@click.argument("share")
@click.argument("topology", required=False, type=SafePath(dir_okay=False))
def command(share: str, topology: str | None) -> None:
    """Explain SHARE (QUEUE/SHARE or a unique SHARE name) of TOPOLOGY (default: the embedded example)."""
    loaded = topology_or_exit(topology)
    matches = loaded.resolve_share(share)
    if not matches:
        known = ", ".join(share_id(q, s) for q, s in loaded.shares()[:10]) or "none defined"
        fail_input([f"no quota share {share!r} in {topology or 'the embedded example'} (known: {known})"])
    if len(matches) > 1:
        fail_input([f"share {share!r} is ambiguous ({', '.join(share_id(q, s) for q, s in matches)}); "
                    "write QUEUE/SHARE"])
    node = share_id(*matches[0])
    out = terminal.console(highlight=False, soft_wrap=True)
    for topic, sentence in explain_share(loaded, node, check_topology(loaded)):
        line = Text(f"{topic:>11}  ", style="dim")
        line.append(visible(sentence), style=_TOPIC_STYLE.get(topic, ""))
        out.print(line)
    raise SystemExit(EXIT_OK)
