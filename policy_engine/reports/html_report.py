"""``simulate --report DIR``: one self-contained HTML page plus a PNG file per chart.

The page embeds every chart as a ``data:`` URI and carries its CSS inline, so it opens from
disk, from an e-mail attachment or a CI artifact with no server and no network; a
Content-Security-Policy forbids the browser from fetching anything else. The PNG files are
the same bytes, for pasting into a ticket or a slide.
"""

from __future__ import annotations

import base64
import errno
import html
import os
import re
from dataclasses import dataclass
from pathlib import Path

from policy_engine.model import Topology
from policy_engine.reports import chart_data, charts
from policy_engine.reports.safe_text import visible
from policy_engine.simulation.numbers import format_seconds

PAGE = "index.html"


def escape(text: object) -> str:
    """Text shown literally in the page: HTML escaped, control characters written as ``\\x1b``."""
    return html.escape(visible(text))


#: Above this many jobs the page lists the first ones and says how many it left out.
MAX_JOB_ROWS = 500
#: Charts are drawn for at most this many shares (about 0.2 s each); the page says when it stopped.
MAX_CHARTED_SHARES = 40

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 1200px;
       color: #222; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
h3 { margin-bottom: 0.3rem; } .muted { color: #666; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.3rem 0.6rem; text-align: left; }
th { background: #f4f6f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.preempted td { background: #fff3f0; }
figure { margin: 0.8rem 0 1.4rem; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #666; font-size: 0.85rem; }
"""


@dataclass(frozen=True)
class Chart:
    """One drawn chart: its file name in the report directory, caption and PNG bytes."""

    file: str
    caption: str
    png: bytes

    def img(self) -> str:
        data = base64.b64encode(self.png).decode("ascii")
        return (f'<figure><img src="data:image/png;base64,{data}" alt="{escape(self.caption)}">'
                f"<figcaption>{escape(self.caption)} ({escape(self.file)})</figcaption></figure>")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def _table(header: tuple[str, ...], rows, numeric: set[int] = frozenset(), row_class=None) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for row in rows:
        cls = f' class="{row_class(row)}"' if row_class and row_class(row) else ""
        cells = "".join(f'<td class="num">{escape(str(v))}</td>' if i in numeric else f"<td>{escape(str(v))}</td>"
                        for i, v in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def build_charts(result, topology: Topology) -> tuple[dict[str, list[Chart]], list[str]]:
    """``share -> charts`` (its timeline, then utilisation per instance type) and the shares left uncharted."""
    lanes = chart_data.timelines(result)
    series = chart_data.utilisation(result, topology)
    shares = list(dict.fromkeys(share for share, _ in series))
    out: dict[str, list[Chart]] = {}
    for share in shares[:MAX_CHARTED_SHARES]:
        drawn = []
        if lanes.get(share):
            drawn.append(Chart(f"timeline-{_slug(share)}.png", f"{share}: one lane per job",
                               charts.timeline_png(share, lanes[share], result.time)))
        for (owner, instance_type), one in series.items():
            if owner == share:
                drawn.append(Chart(f"utilisation-{_slug(share)}-{_slug(instance_type)}.png",
                                   f"{share}: {instance_type} own use, borrowed, lent and idle",
                                   charts.utilisation_png(one, result.time)))
        out[share] = drawn
    return out, shares[MAX_CHARTED_SHARES:]


def render_page(result, topology: Topology, drawn: dict[str, list[Chart]], uncharted: list[str],
                source: str = "") -> str:
    """The HTML page (a string) with every chart embedded."""
    summary = result.summary
    statuses = ", ".join(f"{status} {count}" for status, count in summary["by_status"].items()) or "none"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>batch-quota simulation{escape(': ' + source) if source else ''}</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>batch-quota simulation report</h1>",
        f'<p class="muted">{escape(source)} · simulated time {format_seconds(result.time)} s · '
        f"{summary['jobs']} job(s)</p>",
        "<h2>Summary</h2>",
        _table(("jobs", "by status", "preemptions", "instance-hours lost", "cluster utilisation", "wait p50 (s)",
                "wait p95 (s)", "wait max (s)"),
               [(summary["jobs"], statuses, summary["preemptions"], f"{summary['instance_hours_lost']:.2f}",
                 f"{summary['cluster_utilisation']:.1%}", format_seconds(summary["wait_p50"]),
                 format_seconds(summary["wait_p95"]), format_seconds(summary["wait_max"]))],
               numeric={0, 2, 3, 4, 5, 6, 7}),
        "<h2>Shares</h2>",
        '<p class="muted">Time-weighted over the run: own use as a share of the own limit; mean instances borrowed '
        "above the limit and lent to other shares.</p>",
        _table(("share", "instance type", "strategy", "limit", "jobs", "own use", "mean borrowed", "mean lent",
                "wait p50 (s)", "wait p95 (s)", "preemptions", "instance-hours lost"),
               [(m.share, m.instance_type, m.strategy, m.limit, m.jobs, f"{m.own_utilisation:.1%}",
                 f"{m.mean_borrowed:.2f}", f"{m.mean_lent:.2f}", format_seconds(m.wait_p50),
                 format_seconds(m.wait_p95), m.preemptions,
                 f"{m.instance_hours_lost:.2f}") for m in result.shares], numeric=set(range(3, 12))),
    ]
    strategies = {f"{q.name}/{s.name}": s.strategy for q, s in topology.shares()}
    for share, share_charts in drawn.items():
        parts.append(f'<h2 id="{escape(_slug(share))}">{escape(share)} '
                     f'<span class="muted">({escape(strategies.get(share, ""))})</span></h2>')
        if not any(c.file.startswith("timeline-") for c in share_charts):
            parts.append('<p class="muted">No job was submitted to this share.</p>')
        parts += [chart.img() for chart in share_charts]
    if uncharted:
        parts.append(f'<p class="muted">Charts were drawn for the first {len(drawn)} shares; '
                     f"{len(uncharted)} more are in the tables only: {escape(', '.join(uncharted))}.</p>")
    jobs = result.jobs[:MAX_JOB_ROWS]
    parts.append("<h2>Jobs</h2>")
    if len(result.jobs) > len(jobs):
        parts.append(f'<p class="muted">The first {len(jobs)} of {len(result.jobs)} jobs '
                     "(use <code>--format json</code> for all).</p>")
    parts.append(_table(("job", "share", "type", "instances", "priority", "status", "preemptions", "wait (s)",
                         "reason"),
                        [(j.name, j.share, j.instance_type, j.instances, j.priority, j.status, j.preemptions,
                          format_seconds(j.wait_seconds), j.reason) for j in jobs], numeric={3, 4, 6, 7},
                        row_class=lambda row: "preempted" if row[6] else ""))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(result, topology: Topology, directory: Path, source: str = "") -> list[Path]:
    """Write ``index.html`` and every chart's PNG into ``directory`` (created); return the paths written.

    Symlinks are never followed: neither ``directory`` itself nor a file in it, so a link someone
    else planted there cannot redirect the report over another file (``OSError`` ``ELOOP`` instead).
    """
    drawn, uncharted = build_charts(result, topology)
    files = {chart.file: chart.png for share_charts in drawn.values() for chart in share_charts}
    files[PAGE] = render_page(result, topology, drawn, uncharted, source).encode("utf-8")
    if directory.is_symlink():
        raise OSError(errno.ELOOP, "is a symbolic link; give the real directory", str(directory))
    directory.mkdir(parents=True, exist_ok=True)
    folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    try:
        for name, data in files.items():
            try:
                handle = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o644, dir_fd=folder)
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise OSError(errno.ELOOP, "is a symbolic link; not followed", str(directory / name)) from None
                raise
            with os.fdopen(handle, "wb") as out:
                out.write(data)
    finally:
        os.close(folder)
    return [directory / PAGE, *(directory / name for name in files if name != PAGE)]


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
