"""``compare --report DIR``: one self-contained page, every design over time and the per-share differences.

Charts are Vega-Lite specs drawn by the inlined Vega libraries with the CSP-safe interpreter, as the simulation
report draws them (``reports.kit.vega``; no fetch, no ``eval``): per instance type, the share of its instances in use
over time for each design (never summed across types); waiting jobs over time; and, per later design, its wait
p95 difference from the first per share and instance type, on a symmetric log axis (a −300 h bar would squeeze
a +47 m one to nothing on a linear axis; docs/sweep.md says the same of sweep's charts). The tables are the text
report's cells (``reports.tables.share_comparison``), then each design's "why jobs waited" table
(``reports.tables.why_waited``, the attribution run on the worker).
The page marks ``data-rendered="true"`` when every chart is drawn.
"""

from __future__ import annotations

import json
from pathlib import Path

from policy_engine.foundation.output_files import write_files
from policy_engine.reports.compare.view import (
    WHOLE_RUN,
    CompareOutput,
    costs_head,
    costs_legend,
    costs_rows,
    costs_title,
    legend,
    page_data,
    samples_lines,
)
from policy_engine.reports.kit import vega
from policy_engine.reports.page import report_script
from policy_engine.reports.page.html_report import escape
from policy_engine.reports.tables import share_comparison as sc
from policy_engine.reports.tables import why_waited

PAGE = "index.html"
_CSP = "default-src 'none'; script-src 'unsafe-inline'; img-src data:; style-src 'unsafe-inline'"

SCRIPT = r"""
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('compare-data').textContent);
  const x = {field: 't', type: 'quantitative', title: 'simulated time (' + data.unit + ')', scale: {nice: false}};
  const color = {field: 'design', type: 'nominal', title: 'design', scale: {domain: data.designs}};
  const zoom = [{name: 'zoom', select: {type: 'interval', encodings: ['x']}, bind: 'scales'}];
  function lines(title, rows, y) {
    return {$schema: 'https://vega.github.io/schema/vega-lite/v6.json', title: title, width: 1100, height: 200,
            data: {values: rows}, params: zoom, mark: {type: 'line', interpolate: 'step-after'},
            encoding: {x: x, y: y, color: color,
                       tooltip: [{field: 'design'}, {field: 't', title: data.unit}, {field: 'value', format: '.3~f'}]}};
  }
  function powers(rows) {  // ticks of the symmetric log axis: 0 and ±1, ±10, ±100 ... h up to the largest
    const top = Math.max(1, ...rows.map(function (r) { return Math.abs(r.hours); }));
    const out = [0];
    for (let p = 1; p < top * 10; p *= 10) out.push(-p, p);
    return out;
  }
  function deltas(rows) {
    return {$schema: 'https://vega.github.io/schema/vega-lite/v6.json',
            title: 'wait p95: each later design minus the first, per share and instance type (negative is better)',
            width: 900, height: {step: 18}, data: {values: rows}, mark: 'bar',
            encoding: {y: {field: 'row', type: 'nominal', sort: null, title: null},
                       x: {field: 'hours', type: 'quantitative', scale: {type: 'symlog', constant: 1},
                           axis: {values: powers(rows)},
                           title: 'difference of wait p95 (hours, symmetric log scale)'},
                       color: color, yOffset: {field: 'design'},
                       tooltip: [{field: 'row', title: 'share'}, {field: 'design'},
                                 {field: 'text', title: 'difference'}]}};
  }
  async function draw(id, spec) {
    const runtime = vega.parse(vegaLite.compile(spec).spec, null, {ast: true});
    const view = new vega.View(runtime, {expr: vega.expressionInterpreter, renderer: 'svg',
                                         container: document.getElementById(id), hover: true});
    await view.runAsync();
    return view;
  }
  const pending = [];
  data.types.forEach(function (type, i) {
    pending.push(draw('chart-type-' + i, lines(type.title, type.rows,
      {field: 'value', type: 'quantitative', title: 'share of instances in use', axis: {format: '%'},
       scale: {domain: [0, 1]}})));
  });
  pending.push(draw('chart-waiting', lines('waiting jobs (bin mean)', data.waiting,
    {field: 'value', type: 'quantitative', title: 'waiting jobs'})));
  if (data.deltas.length) pending.push(draw('chart-deltas', deltas(data.deltas)));
  Promise.all(pending).then(function () {
    document.documentElement.dataset.rendered = 'true';
  }, """ + report_script.RENDER_FAILED + r""");
})();
"""


def render_page(output: CompareOutput) -> str:
    data = json.dumps(page_data(output), separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    types = list(dict.fromkeys(t for run in output.runs for t in run.utilisation))
    labels = " vs ".join(output.labels)
    parts = [
        "<!DOCTYPE html>", '<html lang="en" data-rendered="false"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>batch-quota compare: {escape(labels)}</title>",
        f"<style>{report_script.STYLE}</style></head><body>",
        f"<h1>batch-quota compare: {escape(labels)}</h1>",
        f'<p class="muted">{escape(output.scenario)} · {output.jobs:,} job(s), each design run {escape(output.span)} · '
        f"{escape(sc.runs_line(output.shares, output.marked_sources))}</p>",
        *([f'<p class="sample-one">{escape(output.page_sample_line())}</p>'] if output.samples > 1 else []),
        *(f'<p class="samples">{escape(line)}</p>' for line in samples_lines(output)),
        *(f'<p class="error check-error">{escape(line)}</p>' for line in output.check_lines()),
        '<p id="render-error" class="error" hidden></p>',
        "<h2>The whole run</h2>",
        f'<p class="muted">{escape(WHOLE_RUN[0].upper() + WHOLE_RUN[1:])}</p>',
        sc.html_table(sc.share_header(output.overall)[2:], _whole_run(output), names=0),
        *_costs(output),
        "<h2>Per instance type over time</h2>",
        '<p class="muted">Per instance type (never summed across types): the instances in use (own and borrowed) '
        "as a share of the environments' instances, per time bin, one line per design. Drag or scroll to zoom.</p>",
        sc.html_table(("instance type", *sc.share_header(output.types)[2:]),
                      [r[1:] for r in sc.share_rows(output.types, compact=True)], names=1),
        *(f'<div id="chart-type-{i}" class="chart"></div>' for i in range(len(types))),
        '<div id="chart-waiting" class="chart"></div>',
        "<h2>Per share and instance type</h2>",
        '<div id="chart-deltas" class="chart"></div>',
        f'<p class="muted">{escape(legend(output))}</p>',
        sc.html_table(sc.share_header(output.shares), sc.share_rows(output.shares, compact=True), ' id="shares"'),
    ]
    if output.targets.rows:
        parts += [f"<h2>Targets</h2><p class=\"muted\">{escape(sc.targets_met_line(output.targets))}</p>",
                  sc.html_table(sc.target_header(output.targets), sc.target_rows(output.targets), ' id="targets"',
                                names=3)]
    parts += why_waited_sections(output)
    parts.append(f'<script type="application/json" id="compare-data">{data}</script>')
    parts += [f"<script>{script}</script>" for script in vega.scripts()]
    parts += [f"<script>{SCRIPT}</script>", "</body></html>"]
    return "\n".join(parts)


def _costs(output: CompareOutput) -> list[str]:
    """What the capacity cost over each design's run, used, idle, charged to shares and not (``compare_text``'s)."""
    if not output.costs.rows:
        return []
    return [f"<h2>{escape(costs_title(output))}</h2>", f'<p class="muted">{escape(costs_legend(output))}</p>',
            sc.html_table(costs_head(output), costs_rows(output), ' id="costs"', names=1)]


def why_waited_sections(output: CompareOutput) -> list[str]:
    """Per design, its shares' waiting time by cause (the simulation report's table)."""
    parts = ["<h2>Why jobs waited</h2>"]
    for index, run in enumerate(output.runs):
        parts.append(f"<h3>{escape(run.label)}</h3>")
        waits = run.waits
        body = [why_waited.row_cells(row) for row in why_waited.rows(waits)] if waits is not None else []
        if waits is None or not body:
            parts.append('<p class="muted">No job waited.</p>')
            continue
        parts += [f'<p class="muted">{escape(why_waited.caption(waits))}</p>',
                  sc.html_table(why_waited.HEADER, body, f' id="why-waited-{index}"', names=3)]
    return parts


def write_page(output: CompareOutput, directory: Path) -> Path:
    """Write ``DIR/index.html`` (no symlink followed); return its path."""
    write_files(directory, {PAGE: render_page(output).encode("utf-8")})
    return directory / PAGE


def _whole_run(output: CompareOutput) -> list[tuple[str, ...]]:
    """The whole run's one row, its figures alike in every run said once."""
    return [row[2:] for row in sc.share_rows(output.overall, compact=True)]
