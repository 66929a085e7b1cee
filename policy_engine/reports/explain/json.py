"""``explain --format json``: the share, its sentences as ``{"topic", "text"}`` and its figures (the per-share
summary ``check --format json`` writes), the training plans' windows and ``advice`` (each knob replayed,
``sweep.advice``), for scripts and bots."""

from __future__ import annotations

import json
from typing import Any, TextIO

import click

from policy_engine.analysis.checks import borrow_graph
from policy_engine.reports.explain.view import advice_figures, plan_figures, sentences
from policy_engine.reports.kit.subjects import ExplainOutput


def to_dict(output: ExplainOutput) -> dict[str, Any]:
    said = sentences(output)
    return {"share": output.share,
            "sentences": [{"topic": topic, "text": text} for topic, text in said],
            "summary": output.report.summaries[output.share].to_dict(),
            "training_plans": plan_figures(output.topology, borrow_graph(output.topology, output.report),
                                           output.share),
            # every knob the advice considers, replayed (``advice_tested``: false without a scenario)
            "advice": advice_figures(output.advice),
            "advice_tested": output.advice is not None,
            "helps_rule": ({"fraction": output.helps.fraction, "seconds": output.helps.seconds}
                           if output.helps is not None else None)}


def write(output: ExplainOutput, stream: TextIO) -> None:
    click.echo(json.dumps(to_dict(output), indent=2, allow_nan=False), file=stream)
