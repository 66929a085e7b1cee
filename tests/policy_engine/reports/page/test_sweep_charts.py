"""The sweep's charts read at a glance (issue 35 §6), checked on the figures the report draws: no title or label
overlaps another (matplotlib's renderer: each text's window extent), and each share's line has a panel and a
scale of its own, so one team waiting for days does not flatten every other team's line."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from policy_engine.reports.page import sweep_report
from tests.cli import invoke

WIDE = Path(__file__).resolve().parents[3] / "data" / "wide"


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    drawn = []
    real = sweep_report._png
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sweep_report, "_png", lambda figure: drawn.append(figure) or real(figure))
        result = invoke("sweep", str(WIDE / "week.yaml"), "--vary", "training/vision.capacity.ml.p4d.24xlarge=2,6",
                        "--vary", "training/ads.strategy=RESERVE,LEND", "--workers", "1", "--quiet",
                        "--report", str(tmp_path_factory.mktemp("sweep")))
    assert result.exit_code == 0, result.output
    assert len(drawn) == 3  # a field chart per varied field and the heatmap
    return drawn


def _texts(figure):
    """Every title and axis label of the figure (the colorbar's label included), as drawn."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    texts = [t for t in (figure._suptitle, figure._supxlabel, figure._supylabel) if t is not None]
    for axes in figure.axes:
        if axes.get_visible():
            texts += [axes.title, axes.xaxis.label, axes.yaxis.label]
    return [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_text()]


def test_no_title_or_label_overlaps_another(figures):
    for figure in figures:
        texts = _texts(figure)
        assert len(texts) >= 3
        for (a, box_a), (b, box_b) in combinations(texts, 2):
            assert not box_a.overlaps(box_b), (a, b)
        width, height = figure.canvas.get_width_height()
        for text, box in texts:  # within the picture: nothing cut off
            assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, text


def test_each_share_has_its_own_panel_and_scale(figures):
    field = figures[0]
    panels = [axes for axes in field.axes if axes.get_visible()]
    assert len(panels) == 9  # nine teams
    titles = [axes.get_title() for axes in panels]
    assert any("(days)" in t for t in titles) and any("(hours)" in t for t in titles)  # research waits days
    for axes in panels:
        (line,) = axes.get_lines()
        ys = line.get_ydata()
        low, high = axes.get_ylim()
        if max(ys) > min(ys):  # a line that moves fills most of its own panel, whatever the others wait
            assert (max(ys) - min(ys)) / (high - low) > 0.5, axes.get_title()


def test_the_measure_sees_an_overlap():
    """The heatmap as it was drawn before (a long y label on a short plot, the title on the axes): caught."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2.4, 2.2))
    axes = figure.add_subplot()
    axes.imshow([[1, 2], [3, 4]])
    axes.set_ylabel("training/vision.capacity.ml.p4d.24xlarge")
    axes.set_title("max(wait_p95) by training/vision.capacity.ml.p4d.24xlarge and training/ads.strategy", fontsize=9)
    texts = _texts(figure)
    assert any(a[1].overlaps(b[1]) for a, b in combinations(texts, 2))
