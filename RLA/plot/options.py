"""The options of a plot, typed and checked: what to compute, how to draw, where to save.

:func:`RLA.plot.plot_func` keeps the original's flat signature; it checks its arguments here
(in the original's order of checks) and hands the stages these small values instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from RLA.errors import RLAError
from RLA.plot.resample import check_points
from RLA.plot.stats import AGGREGATES, BANDS

#: The original plot_func's positional parameters, in order (the rest are keyword-only).
POSITIONAL = (
    "data_root",
    "task_table_name",
    "regs",
    "split_keys",
    "metrics",
    "use_buf",
    "verbose",
    "xlim",
    "xlabel",
    "ylabel",
    "scale_dict",
    "regs2legends",
    "key_to_legend_fn",
    "split_by_metrics",
    "save_name",
)
#: The original's plot_results options that are accepted and have no effect here.
IGNORED_LEGACY = ("shaded_range", "average_group")
DEFAULT_MARKERS = ("o", "v", "d", "P", "p", "s")

XBound = Union[None, float, Tuple[float, float]]
ValueFilterFn = Callable[[np.ndarray, np.ndarray], Tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class StatOptions:
    """How each group's runs become one curve and its final statistics."""

    points: int = 512
    smooth_step: float = 1.0
    agg: str = "mean"
    band_kind: str = "stderr"
    vary_len: bool = False
    final_window: float = 0.1
    bootstrap_samples: int = 1000
    seed: int = 0
    rescale_idx: Optional[float] = None


@dataclass(frozen=True)
class FigureOptions:
    """How the curves are drawn (see :func:`RLA.plot.draw.draw`)."""

    xlabel: str = "time-step"
    ylabel: Union[None, str, Sequence[str]] = None
    title: Optional[str] = None
    pretty: bool = False
    colors: Optional[Sequence[str]] = None
    tiling: str = "symmetric"
    figsize: Optional[Tuple[float, float]] = None
    xlim: XBound = None
    ylim: Optional[Tuple[float, float]] = None
    log: bool = False
    show_number: bool = True
    bound_line: Optional[Sequence[Tuple[float, str, str, str]]] = None
    show: bool = False
    style: Dict[str, Any] = field(default_factory=dict)

    def ylabels(self, titles: Sequence[str]) -> List[str]:
        """One y label per panel (a string for all, a list, or each panel's title)."""
        if isinstance(self.ylabel, str):
            return [self.ylabel] * len(titles)
        return list(self.ylabel or titles)

    def xrange(self) -> Optional[Tuple[float, float]]:
        """The x axis range: ``(0, xlim)`` for a number, the pair itself, or None."""
        if isinstance(self.xlim, (int, float)):
            return (0.0, float(self.xlim))
        if self.xlim is None:
            return None
        low, high = self.xlim
        return (low, high)


@dataclass(frozen=True)
class SaveOptions:
    """Where the figure and its CSVs go (see :func:`RLA.plot.save.save_plot`)."""

    save_name: Optional[str] = None
    save_dir: Union[None, str, os.PathLike] = None
    formats: Optional[Sequence[str]] = None
    pretty: bool = False


def refuse_positional(extra: Sequence[Any]) -> None:
    """Refuse positional arguments beyond the original's fifteen.

    The original passed ``*args`` on to ``plot_util.plot_results``, whose options are
    keyword-only, so any extra positional argument failed there with a ``TypeError``; they
    are refused here with the same cause named, never silently dropped.

    Raises:
        RLAError: ``extra`` is not empty.
    """
    if not extra:
        return
    shown = ", ".join(repr(value) for value in list(extra)[:5]) + (" ..." if len(extra) > 5 else "")
    raise RLAError(
        f"plot_func got {len(POSITIONAL) + len(extra)} positional arguments",
        expected=f"at most {len(POSITIONAL)} ({', '.join(POSITIONAL)}); every other option by name",
        found=f"{len(extra)} more after save_name: {shown}",
        fix="pass those options by keyword, e.g. plot_func(..., save_name, resample=512, smooth_step=1.0) "
        "(the original's plot_results took them by keyword only as well)",
    )


def legacy_band(kwargs: Dict[str, Any], band_kind: Optional[str]) -> str:
    """The band from the original's ``shaded_std``/``shaded_err`` flags (popped from ``kwargs``)."""
    default = band_kind or "stderr"
    if kwargs.pop("shaded_std", False):
        return "std"
    if kwargs.pop("shaded_err", False):
        return "stderr"
    return default


def refuse_unknown(kwargs: Dict[str, Any]) -> None:
    """Refuse keywords plot_func does not know (the original's ignored ones are dropped first).

    Raises:
        RLAError: an unknown keyword.
    """
    for name in IGNORED_LEGACY:
        kwargs.pop(name, None)
    if kwargs:
        raise RLAError(
            f"Unknown plot_func option {sorted(kwargs)[0]!r}",
            expected="a documented keyword",
            found=", ".join(sorted(kwargs)),
            fix="see help(RLA.plot_func)",
        )


def check_stat_options(agg: str, band_kind: str) -> None:
    """Refuse an unknown aggregate or band.

    Raises:
        RLAError: ``agg`` or ``band_kind`` is not one of the listed values.
    """
    if agg not in AGGREGATES or band_kind not in BANDS:
        raise RLAError(
            "Bad agg/band option",
            expected=f"agg in {AGGREGATES}, band in {BANDS}",
            found=f"agg={agg!r}, band={band_kind!r}",
            fix="pick listed values",
        )


def metric_list(metrics: Union[str, Sequence[str]]) -> List[str]:
    """``metrics`` as a non-empty list (a single name is one metric).

    Raises:
        RLAError: no metric.
    """
    out = [metrics] if isinstance(metrics, str) else list(metrics)
    if not out:
        raise RLAError(
            "No metric to plot", expected="metrics=['return', ...]", found="[]", fix="name a metric"
        )
    return out


def style_of(
    legend_outside: bool,
    use_marker: bool,
    markers: Optional[Sequence[str]],
    legend_ncol: Optional[int],
    skip_legend: bool,
) -> Dict[str, Any]:
    """The original's legend and marker options as :func:`RLA.plot.draw.draw`'s ``style``."""
    return {
        "legend_outside": legend_outside,
        "markers": list(markers or DEFAULT_MARKERS) if use_marker else None,
        "legend_ncol": legend_ncol,
        "skip_legend": skip_legend,
    }


__all__ = [
    "FigureOptions",
    "POSITIONAL",
    "SaveOptions",
    "StatOptions",
    "check_points",
    "check_stat_options",
    "legacy_band",
    "metric_list",
    "refuse_positional",
    "refuse_unknown",
    "style_of",
]
