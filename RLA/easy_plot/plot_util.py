"""The original ``RLA.easy_plot.plot_util`` loaders and smoothing, over pandas and RLA's resampling.

``load_results`` reads ``progress.json``/``progress.csv`` of every run folder below the
given roots. It never writes the original's ``progress-[...].csv`` cache into the
database (the original did on every load); existing cache files are ignored.
"""

from __future__ import annotations

import json
import os
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from RLA.easy_plot.result_cls import CsvResult
from RLA.plot.draw import COLORS, PRETTY_COLORS
from RLA.plot.resample import ema

PRETTY_MARKERS = ["o", "v", "d", "P", "p"]
XBound = Union[None, Tuple[str, Union[None, float, Tuple[float, float]]], Sequence[Any]]


def word_replace(string: str) -> str:
    """The original's file-name encoding of column lists (``/`` -> ``--``, ``'`` -> ``||``)."""
    return string.replace("/", "--").replace("'", "||")


def smooth(y: Sequence[float], radius: int, mode: str = "two_sided", valid_only: bool = False) -> np.ndarray:
    """Moving average over ``2*radius+1`` points (``two_sided``) or the last ``radius+1`` (``causal``)."""
    values = np.asarray(y, dtype=float)
    if mode not in ("two_sided", "causal"):
        raise ValueError("mode must be 'two_sided' or 'causal'")
    if len(values) < 2 * radius + 1:
        return np.ones_like(values) * values.mean()
    width = 2 * radius + 1 if mode == "two_sided" else radius + 1
    kernel = np.ones(width)
    counts = np.convolve(np.ones_like(values), kernel, mode="full")
    sums = np.convolve(values, kernel, mode="full")
    start = radius if mode == "two_sided" else 0
    out = sums[start : start + len(values)] / counts[start : start + len(values)]
    if valid_only:
        out[:radius] = np.nan
        if mode == "two_sided":
            out[-radius:] = np.nan
    return out


def one_sided_ema(
    xolds: Sequence[float],
    yolds: Sequence[float],
    low: Optional[float] = None,
    high: Optional[float] = None,
    n: int = 512,
    decay_steps: float = 1.0,
    low_counts_threshold: float = 1e-8,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Resample ``(x, y)`` on ``n`` points of ``[low, high]`` with an EMA; ``(x, y, counts)``."""
    x, y = np.asarray(xolds, dtype=float), np.asarray(yolds, dtype=float)
    lo = x[0] if low is None else low
    hi = x[-1] if high is None else high
    grid = np.linspace(lo, hi, n)
    values = np.interp(grid, x, y)
    counts = np.array([np.sum(x <= g) for g in grid], dtype=float)
    out = ema(values, decay_steps)
    out[counts < low_counts_threshold] = np.nan
    return grid, out, counts


def symmetric_ema(
    xolds: Sequence[float],
    yolds: Sequence[float],
    low: Optional[float] = None,
    high: Optional[float] = None,
    n: int = 512,
    decay_steps: float = 1.0,
    low_counts_threshold: float = 1e-8,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """EMA forwards and backwards, averaged (no lag); ``(x, y, counts)``."""
    grid, forward, counts = one_sided_ema(xolds, yolds, low, high, n, decay_steps, low_counts_threshold)
    backward = ema(np.interp(grid, np.asarray(xolds, float), np.asarray(yolds, float))[::-1], decay_steps)[
        ::-1
    ]
    return grid, (forward + backward) / 2, counts


def _bounded(frame: Any, x_bound: XBound) -> Any:
    if not x_bound or x_bound[1] is None or x_bound[0] not in frame.columns:
        return frame
    key, bound = x_bound[0], x_bound[1]
    if isinstance(bound, tuple):
        return frame[(frame[key] > bound[0]) & (frame[key] < bound[1])]
    return frame[frame[key] < bound]


def load_results(
    root_dir_or_dirs: Union[str, Sequence[str]],
    names: Sequence[str],
    x_bound: XBound,
    enable_progress: bool = True,
    use_buf: bool = False,
    verbose: bool = False,
) -> List[CsvResult]:
    """One :class:`CsvResult` per folder holding ``progress.json``/``progress.csv`` (columns ``names``)."""
    import pandas as pd

    del use_buf  # the cache is never written nor read: results always come from the log itself
    roots = [root_dir_or_dirs] if isinstance(root_dir_or_dirs, str) else list(root_dir_or_dirs)
    results = []
    for root in roots:
        for dirname, _, files in os.walk(os.path.expanduser(root)):
            if "-proc" in dirname or not enable_progress:
                continue
            if "progress.json" in files:
                with open(os.path.join(dirname, "progress.json")) as handle:
                    frame = pd.DataFrame([json.loads(line) for line in handle if line.strip()])
            elif "progress.csv" in files:
                try:
                    frame = pd.read_csv(os.path.join(dirname, "progress.csv"), index_col=False, comment="#")
                except pd.errors.EmptyDataError:
                    continue
            else:
                continue
            present = [n for n in names if n in frame.columns]
            if verbose and len(present) < len(names):
                print(f"[error keys]: {sorted(set(names) - set(present))} in experiment: {dirname}")
            if not present:
                continue
            results.append(CsvResult(progress=_bounded(frame[present], x_bound), dirname=dirname))
    if verbose:
        print(f"loaded {len(results)} results")
    return results


__all__ = [
    "COLORS",
    "PRETTY_COLORS",
    "PRETTY_MARKERS",
    "word_replace",
    "smooth",
    "one_sided_ema",
    "symmetric_ema",
    "load_results",
]
