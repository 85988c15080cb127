"""What a plot returns: ``(legends, stats)`` like the original's pair, with the files and notes."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple


class PlotResult(tuple):
    """``(legends, stats)`` like the original's ``(g2lf, score_results)``, plus attributes.

    Attributes:
        legends: ``{legend: number of runs}``.
        stats: ``{metric: {legend: {n, mean, median, iqm, std, stderr, ci_low, ci_high}}}``
            over the final window.
        files: paths written (figures, ``.csv``, ``-final.csv``).
        figure: the matplotlib Figure.
        notes: messages about truncated runs or skipped metrics.
        skipped: ``(index, reason)`` of every damaged run left out (each also a
            :class:`RLA.query.BrokenRunWarning`).
        g2lf, score_results: the original plot_func's return values (see
            :mod:`RLA.plot.original_shape`).
    """

    legends: Dict[str, int]
    stats: Dict[str, Any]
    files: List[Path]
    figure: Any
    notes: List[str]
    skipped: List[Tuple[str, str]]
    g2lf: Dict[str, Any]
    score_results: Dict[str, Any]

    def __new__(
        cls,
        legends: Dict[str, int],
        stats: Dict[str, Any],
        files: List[Path],
        figure: Any,
        notes: List[str],
        skipped: Optional[List[Tuple[str, str]]] = None,
    ) -> "PlotResult":
        obj = super().__new__(cls, (legends, stats))
        obj.legends, obj.stats, obj.files, obj.figure, obj.notes = legends, stats, files, figure, notes
        obj.skipped = list(skipped or [])
        obj.g2lf, obj.score_results = {}, {}
        return obj
