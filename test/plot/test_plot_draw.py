"""The draw stage alone: curves, bands, markers, bound lines, legends and axes of computed panels."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_hex

from RLA.plot.draw import COLORS, PRETTY_COLORS, Look, add_legend, draw, draw_curve, new_figure, tile


def curve(legend: str, n: int = 2, shift: float = 0.0, **extra):
    x = np.array([0.0, 1.0, 2.0])
    return dict(legend=legend, n=n, x=x, center=x + shift, low=x + shift - 1, high=x + shift + 1, **extra)


def one_panel(*curves):
    return [{"title": "return", "curves": list(curves)}]


def test_each_curve_is_a_line_and_a_band_in_its_palette_color():
    fig = draw(one_panel(curve("a"), curve("b", shift=1)), "step", ["R"])
    ax = fig.axes[0]
    assert [to_hex(line.get_color()) for line in ax.get_lines()] == COLORS[:2]
    assert [line.get_label() for line in ax.get_lines()] == ["a (2)", "b (2)"]
    band = ax.collections[0].get_paths()[0].vertices
    assert band[:, 1].min() == -1.0 and band[:, 1].max() == 3.0
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("return", "step", "R")


def test_color_index_picks_color_and_marker():
    look = Look(["red", "blue"], 10, markers=["o", "v", "s"], show_number=False)
    ax = new_figure((4, 3), False).add_subplot(1, 1, 1)
    line, label = draw_curve(ax, curve("a", color_index=3), 0, look)
    assert to_hex(line.get_color()) == to_hex("blue") and line.get_marker() == "o" and label == "a"


def test_pretty_uses_the_pretty_palette_and_bigger_fonts():
    ax = draw(one_panel(curve("a")), "x", ["y"], pretty=True).axes[0]
    assert to_hex(ax.get_lines()[0].get_color()) == to_hex(PRETTY_COLORS[0])
    assert ax.title.get_fontsize() == 16


def test_bound_lines_are_drawn_and_named_last_in_the_legend():
    panels = [{"title": m, "curves": [curve("a")]} for m in ("r", "s")]
    fig = draw(panels, "x", ["r", "s"], bound_line=[(5.0, "black", "--", "goal")])
    for ax in fig.axes:
        bound = [line for line in ax.get_lines() if line.get_label() == "goal"]
        assert len(bound) == 1 and bound[0].get_linestyle() == "--" and bound[0].get_ydata()[0] == 5.0
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a (2)", "goal"]


def test_axes_limits_and_log_scale():
    ax = draw(one_panel(curve("a", shift=1)), "x", ["y"], xlim=(0.0, 1.5), ylim=(0.5, 9.0), log=True).axes[0]
    assert ax.get_xlim() == (0.0, 1.5) and ax.get_ylim() == pytest.approx((0.5, 9.0))
    assert ax.get_yscale() == "log"


@pytest.mark.parametrize(
    "panels, style, where",
    [
        (1, {}, "axes"),
        (1, {"legend_outside": True}, "outside"),
        (2, {}, "figure"),
        (1, {"skip_legend": True}, None),
        (2, {"skip_legend": True}, None),
    ],
)
def test_one_legend_placed_by_style(panels, style, where):
    fig = draw([{"title": str(i), "curves": [curve("a")]} for i in range(panels)], "x", [], style=style)
    legend = fig.axes[0].get_legend()
    if where is None:
        assert legend is None and not fig.legends
    elif where == "figure":
        assert legend is None and len(fig.legends) == 1
    else:
        assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["a (2)"]
        anchor, box = legend.get_bbox_to_anchor(), fig.axes[0].bbox  # outside: anchored at the right edge
        assert anchor.x0 == pytest.approx(box.x1 if where == "outside" else box.x0)


def test_legend_ncol_and_one_entry_per_label():
    fig = new_figure((4, 3), False)
    ax = fig.add_subplot(1, 1, 1)
    (line,) = ax.plot([0, 1], [0, 1])
    add_legend(fig, {"a": line, "b": line, "c": line}, 1, {"legend_ncol": 3}, 10)
    assert ax.get_legend()._ncols == 3  # noqa: SLF001 - matplotlib has no public getter


def test_a_title_is_the_figures_and_tiling_shapes_the_grid():
    fig = draw(
        [{"title": str(i), "curves": [curve("a")]} for i in range(3)], "x", [], title="T", tiling="vertical"
    )
    assert fig._suptitle.get_text() == "T"  # noqa: SLF001 - no public getter
    assert [ax.get_subplotspec().rowspan.start for ax in fig.axes] == [0, 1, 2]
    assert tile(5) == (2, 3) and tile(3, "horizontal") == (1, 3)
