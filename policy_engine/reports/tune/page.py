"""``tune --report DIR``: the page of ``reports.page.sweep_report`` with the answer, the evidence and (with
several objectives) the Pareto front and its chart."""

from __future__ import annotations

from pathlib import Path

from policy_engine.reports.page.sweep_report import html_table, pareto_chart, write_tune_report
from policy_engine.reports.tune.view import answer_lines, detail_lines, evidence_column, evidence_rows, front_rows
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.subjects import TuneOutput
from policy_engine.sweep.tune import feasible


def write_page(output: TuneOutput, directory: Path, source: str) -> Path:
    """Write ``directory/index.html`` (and its charts); the page's path. ``OSError`` when it cannot be written."""
    result, axes, objectives = output.result, output.axes, output.objectives
    evidence_html = html_table(("", "current", evidence_column(output)), evidence_rows(output), numeric={1, 2})
    front_html = ""
    charts = []
    if len(objectives) > 1:
        points_on_front = front_rows(output)
        front_html = html_table(("#", *(a.path for a in axes), *(o.heading for o in objectives)), points_on_front,
                                numeric={0, *range(len(axes) + 1, len(axes) + 1 + len(objectives))}) \
            if points_on_front else '<p class="muted">No candidate meets every constraint: the front is empty.</p>'
        on_front = {id(r) for r in result.front}
        points = [(objectives[0].expression(r), objectives[1].expression(r), id(r) in on_front,
                   feasible(r, output.constraints)) for r in result.runs if r.status == RunStatus.OK]
        charts.append(pareto_chart(points, (objectives[0], objectives[1])))
    return write_tune_report(evidence_html, front_html, charts, result.runs, axes, objectives[0].expression,
                             directory, source, output.costs, [*answer_lines(output), *detail_lines(output)],
                             output.constraints)
