"""``batch-quota check [TOPOLOGY]``: load a topology and report what the rules find."""

from __future__ import annotations

import click

from policy_engine.cli import topology_or_exit


@click.command("check")
@click.argument("topology", required=False, type=click.Path(dir_okay=False))
def command(topology: str | None) -> None:
    """Check TOPOLOGY (YAML, JSON or Python; default: the embedded example) before deploy."""
    loaded = topology_or_exit(topology)
    shares = sum(len(q.shares) for q in loaded.job_queues)
    click.echo(f"loaded {len(loaded.job_queues)} job queue(s), {shares} quota share(s)")
