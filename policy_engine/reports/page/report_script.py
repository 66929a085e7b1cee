"""What the report page runs and how it looks: its style sheet and the script that draws the charts.

The script reads the page's embedded JSON (``html_report.page_data``), builds one Vega-Lite spec
per chart, compiles it and renders it with Vega's CSP-safe expression interpreter (no ``eval``),
wires the share picker and the sortable, filterable worst-waiting table, and marks the page
``data-rendered="true"`` (with ``data-rendered-ms``) once every chart is drawn, or ``"error"``.
A new chart is a spec function here plus a ``draw(...)`` call next to the others.
"""

from __future__ import annotations

STYLE = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 1280px;
       color: #222; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
.muted { color: #666; } .chart { margin: 0.6rem 0 1.2rem; min-height: 60px; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f4f6f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.sortable th { cursor: pointer; user-select: none; } table.sortable th:hover { background: #e6ebf0; }
tr.preempted td { background: #fff3f0; } input, select { font-size: 0.95rem; padding: 0.2rem 0.4rem; }
.error { color: #b00020; font-weight: bold; } code { background: #f4f6f8; padding: 0 0.2rem; }
.table-scroll { max-width: 100%; overflow-x: auto; } .table-scroll > table { margin: 0.4rem 0; }
td.num.brk { white-space: normal; padding: 0.3rem 0.45rem; } .nb, td.nm { white-space: nowrap; }
"""

#: A page's answer to a chart that fails to draw (the last argument of its ``Promise.all(...).then``): the page
#: is marked ``data-rendered="error"`` and its ``#render-error`` note shows why. The compare page uses it too.
RENDER_FAILED = r"""function (error) {
    document.documentElement.dataset.rendered = 'error';
    const note = document.getElementById('render-error');
    note.textContent = 'A chart could not be drawn: ' + error;
    note.hidden = false;
    console.error(error);
  }"""

SCRIPT = r"""
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  // held for plan: quota a SCHEDULED plan job holds while it waits for its plan's window (usage[4]), not own use
  const KINDS = ['own use', 'held for plan', 'borrowed', 'lent to others', 'idle'];
  const COLORS = ['#4c72b0', '#c5b0d5', '#dd8452', '#55a868', '#d9d9d9'];
  const SERIES = [0, 4, 1, 2, 3];  // where each kind is in a series' usage
  const unit = data.unit;
  const x = {field: 't', type: 'quantitative', title: 'simulated time (' + unit + ')', scale: {nice: false}};
  const zoom = [{name: 'zoom', select: {type: 'interval', encodings: ['x']}, bind: 'scales'}];

  function usageRows(s) {
    const rows = [];
    const n = data.edges.length - 1;
    for (let i = 0; i <= n; i++) {
      const b = Math.min(i, n - 1);
      for (let k = 0; k < KINDS.length; k++) {
        const values = s.usage[SERIES[k]];
        if (values) rows.push({t: data.edges[i], kind: KINDS[k], order: k, value: values[b]});
      }
    }
    return rows;
  }
  function binRows(values) {
    const rows = [];
    const last = values.length - 1;
    for (let i = 0; i <= values.length; i++) rows.push({t: data.edges[i], value: values[Math.min(i, last)]});
    return rows;
  }
  function floor(values) {  // an all-zero series still gets an axis from 0 to 1
    return values.some(function (v) { return v > 0; }) ? {} : {domain: [0, 1]};
  }
  function windowLayer(windows) {  // training plan windows behind the usage: paid from start to end
    return {data: {name: 'windows', values: windows}, mark: {type: 'rect', color: '#9467bd', opacity: 0.15},
            encoding: {x: {field: 'start', type: 'quantitative'}, x2: {field: 'end'},
                       tooltip: [{field: 'label', title: 'training plan window'},
                                 {field: 'instances', title: 'reserved instances'},
                                 {field: 'start', title: 'from (' + unit + ')', format: '.2f'},
                                 {field: 'cutoff', title: 'instances terminated from (' + unit + ')', format: '.2f'},
                                 {field: 'end', title: 'to (' + unit + ')', format: '.2f'}]}};
  }
  function withWindows(panel, type) {  // an instance type's chart: only that type's windows
    const windows = (data.plan_windows || []).filter(function (w) { return !type || w.instance_type === type; });
    if (!windows.length) return panel;
    const usage = Object.assign({}, panel);
    delete usage.width; delete usage.height;
    return {width: panel.width, height: panel.height, layer: [windowLayer(windows), usage]};
  }
  function overTime(title, s) {
    return {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json', title: title,
      vconcat: [
        withWindows({width: 1100, height: 220, data: {name: 'usage', values: usageRows(s)}, params: zoom,
         mark: {type: 'area', interpolate: 'step-after'},
         encoding: {x: x, y: {field: 'value', type: 'quantitative', stack: 'zero', title: 'instances (bin mean)',
                       axis: {format: '~s'}},
                    color: {field: 'kind', type: 'nominal', sort: KINDS, scale: {domain: KINDS, range: COLORS},
                            title: null, legend: {labelLimit: 200}},
                    order: {field: 'order'},
                    tooltip: [{field: 't', title: 'from (' + unit + ')', format: '.2f'}, {field: 'kind'},
                              {field: 'value', title: 'instances', format: '.2f'}]}}, s.instance_type),
        {width: 1100, height: 90, data: {name: 'depth', values: binRows(s.depth)},
         mark: {type: 'area', interpolate: 'step-after', color: '#8172b3'},
         encoding: {x: x, y: {field: 'value', type: 'quantitative', title: 'waiting jobs', axis: {format: '~s'},
                              scale: floor(s.depth)},
                    tooltip: [{field: 't', title: 'from (' + unit + ')', format: '.2f'},
                              {field: 'value', title: 'waiting jobs (mean)', format: '.1f'}]}},
        {width: 1100, height: 70, data: {name: 'preemptions', values: binRows(s.preemptions)},
         mark: {type: 'area', interpolate: 'step-after', color: '#d62728'},
         encoding: {x: x, y: {field: 'value', type: 'quantitative', title: 'preemptions', axis: {format: '~s'},
                       scale: floor(s.preemptions)},
                    tooltip: [{field: 't', title: 'from (' + unit + ')', format: '.2f'},
                              {field: 'value', title: 'preemptions'}]}}
      ],
      resolve: {scale: {x: 'shared'}}
    };
  }
  // a duration as units.duration_text writes it: 45s, 4m 10s, 3h 05m, 22d 2h (two largest units)
  const DURATION = "datum.value < 60 ? format(datum.value, '~r') + 's' : datum.value < 3600 ? " +
    "floor(datum.value / 60) + 'm ' + (datum.value % 60 < 10 ? '0' : '') + floor(datum.value % 60) + 's' : " +
    "datum.value < 86400 ? floor(datum.value / 3600) + 'h ' + (floor(datum.value / 60) % 60 < 10 ? '0' : '') + " +
    "(floor(datum.value / 60) % 60) + 'm' : floor(datum.value / 86400) + 'd ' + (floor(datum.value / 3600) % 24) + 'h'";
  const TICKS = [0, 1, 10, 60, 600, 3600, 36000, 86400, 864000, 8640000];
  function waitSpec() {
    const y = {field: 'share', type: 'nominal', sort: null, title: null};
    const scale = {type: 'symlog', constant: 1};
    const tip = [{field: 'share'}, {field: 'jobs'}, {field: 'min_text', title: 'min'},
                 {field: 'p25_text', title: 'p25'}, {field: 'p50_text', title: 'median'},
                 {field: 'p75_text', title: 'p75'}, {field: 'p95_text', title: 'p95'},
                 {field: 'max_text', title: 'max'}];
    const high = Math.max(1, ...data.waits.map(function (w) { return w.max; }));
    return {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: 'Wait (time RUNNABLE, requeues included) per share (log scale): min-max, quartiles, median, p95',
      width: 900, data: {values: data.waits},
      layer: [
        {params: zoom, mark: {type: 'rule', color: '#777'},
         encoding: {y: y, x: {field: 'min', type: 'quantitative', scale: scale, title: 'wait',
                              axis: {values: TICKS.filter(function (t) { return t <= high * 10; }),
                                     labelExpr: DURATION}},
                    x2: {field: 'max'}, tooltip: tip}},
        {mark: {type: 'bar', color: '#4c72b0', height: 10}, encoding: {y: y, x: {field: 'p25', type: 'quantitative'},
          x2: {field: 'p75'}, tooltip: tip}},
        {mark: {type: 'tick', color: 'white', thickness: 2, size: 10}, encoding: {y: y,
          x: {field: 'p50', type: 'quantitative'}, tooltip: tip}},
        {mark: {type: 'point', color: '#d62728', shape: 'diamond', filled: true}, encoding: {y: y,
          x: {field: 'p95', type: 'quantitative'}, tooltip: tip}}
      ]
    };
  }
  function laneSpec(lanes) {
    const states = ['waiting', 'held for plan', 'own', 'borrowed'];
    return {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json', title: lanes.title,
      width: 1000, height: {step: 14}, data: {values: lanes.rows}, params: zoom,
      mark: {type: 'bar'},
      encoding: {
        y: {field: 'job', type: 'nominal', sort: {field: 'order'}, title: null},
        x: {field: 'start', type: 'quantitative', title: 'simulated time (' + unit + ')'}, x2: {field: 'end'},
        color: {field: 'state', type: 'nominal',
                scale: {domain: states, range: ['#cfcfcf', '#c5b0d5', '#4c72b0', '#dd8452']},
                title: 'state'},
        tooltip: [{field: 'job'}, {field: 'state'}, {field: 'outcome'}, {field: 'start', format: '.3f'},
                  {field: 'end', format: '.3f'}, {field: 'reason'}]
      }
    };
  }
  function causeSpec(causes) {  // each share's waiting hours stacked by cause (``why_waited.chart_data``)
    const tip = [{field: 'share'}, {field: 'cause'}, {field: 'time', title: 'time waited'},
                 {field: 'hours', title: 'hours', format: '.2f'}, {field: 'percent', title: '% of the share'}];
    return {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: 'Why jobs waited: each share\'s waiting hours by cause (attribution ' + causes.order + ')',
      width: 640, height: {step: 18}, data: {values: causes.values}, mark: {type: 'bar'},
      encoding: {
        y: {field: 'share', type: 'nominal', sort: null, title: null, axis: {labelLimit: 400}},
        x: {field: 'hours', type: 'quantitative', stack: 'normalize', title: 'share of its waiting hours',
            axis: {format: '%'}},
        color: {field: 'cause', type: 'nominal', scale: {domain: causes.causes, scheme: 'tableau10'},
                title: 'cause', legend: {labelLimit: 300}},
        order: {field: 'order'}, tooltip: tip
      }
    };
  }
  async function draw(id, spec) {
    const compiled = vegaLite.compile(spec).spec;
    const runtime = vega.parse(compiled, null, {ast: true});
    const view = new vega.View(runtime, {expr: vega.expressionInterpreter, renderer: 'svg',
                                         container: document.getElementById(id), hover: true});
    await view.runAsync();
    return view;
  }
  function sortableTable(table, filter) {
    const body = table.tBodies[0];
    let column = -1, ascending = true;
    Array.from(table.tHead.rows[0].cells).forEach(function (th, index) {
      th.addEventListener('click', function () {
        ascending = column === index ? !ascending : th.dataset.num === undefined;
        column = index;
        const numeric = th.dataset.num !== undefined;
        const rows = Array.from(body.rows);
        rows.sort(function (a, b) {
          const p = a.cells[index].dataset.value || a.cells[index].textContent;
          const q = b.cells[index].dataset.value || b.cells[index].textContent;
          // numbers as shown: thousands separators and a trailing unit (%) are not part of the value
          const c = numeric ? parseFloat(p.replace(/,/g, '')) - parseFloat(q.replace(/,/g, '')) : p.localeCompare(q);
          return ascending ? c : -c;
        });
        rows.forEach(function (row) { body.appendChild(row); });
        Array.from(table.tHead.rows[0].cells).forEach(function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
      });
    });
    const cause = document.getElementById('worst-cause');  // the cause a job waited longest for, when given
    function apply() {
      const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      const wanted = cause ? cause.value : '';
      let shown = 0;
      Array.from(body.rows).forEach(function (row) {
        const text = row.textContent.toLowerCase();
        const keep = words.every(function (w) { return text.includes(w); }) &&
          (!wanted || row.dataset.cause === wanted);
        row.hidden = !keep;
        if (keep) shown++;
      });
      document.getElementById('worst-count').textContent = shown + ' of ' + body.rows.length + ' rows';
    }
    filter.addEventListener('input', apply);
    if (cause) cause.addEventListener('change', apply);
  }

  sortableTable(document.getElementById('worst'), document.getElementById('worst-filter'));
  const picker = document.getElementById('share-picker');
  const pending = data.types.map(function (s, i) { return draw('chart-type-' + i, overTime(s.label, s)); });
  pending.push(draw('chart-waits', waitSpec()));
  let shareView = null;
  if (data.series.length) {
    pending.push(draw('chart-share', overTime(data.series[0].label, data.series[0])).then(function (view) {
      shareView = view;
    }));
    picker.addEventListener('change', function () {
      const s = data.series[Number(picker.value)];
      document.documentElement.dataset.rendered = 'false';
      draw('chart-share', overTime(s.label, s)).then(function (view) {
        if (shareView) shareView.finalize();
        shareView = view;
        document.documentElement.dataset.rendered = 'true';
      });
    });
  }
  if (data.lanes) pending.push(draw('chart-lanes', laneSpec(data.lanes)));
  if (data.causes && data.causes.values.length) pending.push(draw('chart-causes', causeSpec(data.causes)));
  Promise.all(pending).then(function () {
    document.documentElement.dataset.renderedMs = Math.round(performance.now());  // since navigation start
    document.documentElement.dataset.rendered = 'true';
  }, """ + RENDER_FAILED + r""");
})();
"""
