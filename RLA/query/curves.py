"""Load the learning curves of selected runs as one long DataFrame.

A run whose ``progress.csv`` cannot be read safely (not a regular file, too big, binary,
malformed, an oversized cell: see :mod:`RLA.logger.readers`) is left out and reported: a
:class:`BrokenRunWarning` and a ``(index, reason)`` pair in ``frame.attrs['skipped']``.
"""

from __future__ import annotations

import difflib
import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from RLA.errors import QueryError, RunNotFoundError
from RLA.layout import PROGRESS_CSV
from RLA.logger.readers import read_header, read_progress_csv
from RLA.query.progress_batch import Table, read_tables
from RLA.query.selection import RunRow
from RLA.safe_read import UnreadableFileError
from RLA.terminal import escape


class BrokenRunWarning(UserWarning):
    """A run could not be read (damaged, crafted or non-regular files) and was skipped."""


def warn_skipped(skipped: Iterable[Tuple[str, str]], stacklevel: int = 3) -> None:
    """Emit one :class:`BrokenRunWarning` per ``(index, reason)`` (text escaped)."""
    for index, problem in skipped:
        warnings.warn(
            f"skipped run {escape(index)}: {escape(problem)}", BrokenRunWarning, stacklevel=stacklevel
        )


#: Columns of the frame :func:`load_curves` returns (``x`` is renamed to the x key).
CURVE_COLUMNS = ("index", "metric", "x", "value")


def _sources(runs: Any) -> List[Tuple[str, Path]]:
    """``(index, log_dir)`` pairs from RunRows, a :func:`list_runs` frame or a Selection."""
    if hasattr(runs, "runs"):
        runs = runs.runs
    if hasattr(runs, "columns") and hasattr(runs, "iterrows"):  # a DataFrame
        if "log_dir" not in runs.columns or "index" not in runs.columns:
            raise QueryError(
                "Cannot load curves from this DataFrame",
                expected="the frame of RLA.query.list_runs (columns 'index' and 'log_dir')",
                found=f"columns {list(runs.columns)[:8]}",
                fix="pass list_runs(...) output",
            )
        return [(str(i), Path(d)) for i, d in zip(runs["index"], runs["log_dir"])]
    out = []
    for row in runs:
        if not isinstance(row, RunRow):
            raise QueryError(
                "Cannot load curves from this object",
                expected="RunRow objects, a Selection or a list_runs DataFrame",
                found=type(row).__name__,
                fix="select runs with RLA.query.select_runs or list_runs first",
            )
        out.append((row.index, row.layout.log_dir))
    return out


def read_progress(log_dir: Path, columns: Sequence[str]) -> Any:
    """Read the wanted columns of a run's ``progress.csv`` (missing columns are absent).

    Raises:
        UnreadableFileError: the file cannot be read safely.
    """
    import pandas as pd

    path = Path(log_dir) / PROGRESS_CSV
    wanted = set(columns)
    try:
        return read_progress_csv(path, usecols=lambda c: c in wanted, low_memory=False)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return pd.DataFrame(columns=list(columns))


def _all_columns(sources: Iterable[Tuple[str, Path]]) -> set:

    columns: set = set()
    for _, log_dir in sources:
        try:
            columns.update(read_header(Path(log_dir) / PROGRESS_CSV))
        except (OSError, UnreadableFileError):
            continue
    return columns


#: One run's rows of one metric: ``(index, metric, xs, values)``.
Piece = Tuple[str, str, Any, Any]


def _bounds(x_bound: Optional[Union[float, Tuple[float, float]]]) -> Optional[Tuple[float, float]]:
    """``(low, high)`` of ``x_bound`` (a number is an upper bound), None for no bound."""
    if x_bound is None:
        return None
    if isinstance(x_bound, (tuple, list)):
        low, high = x_bound
        return low, high
    return -float("inf"), x_bound


def _run_pieces(
    index: str, table: Table, x: str, metrics: Sequence[str], bounds: Optional[Tuple[float, float]]
) -> List[Piece]:
    """The rows of each metric of one run whose x and value are finite (and within the bounds)."""
    import numpy as np

    if x not in table:
        return []
    xs = table[x]
    usable = np.isfinite(xs)
    if bounds is not None:
        usable &= (xs >= bounds[0]) & (xs <= bounds[1])
    pieces = []
    for metric in metrics:
        if metric not in table or metric == x:
            continue
        ys = table[metric]
        keep = usable & np.isfinite(ys)
        if keep.any():
            pieces.append((index, metric, xs[keep], ys[keep]))
    return pieces


def _read_all(
    sources: Sequence[Tuple[str, Path]], x: str, metrics: Sequence[str], bounds: Optional[Tuple[float, float]]
) -> Tuple[List[Piece], set, List[Tuple[str, str]]]:
    """Read every run (files with the same header in one parse: see
    :mod:`RLA.query.progress_batch`): ``(pieces, columns seen, skipped (index, reason))``."""
    pieces: List[Piece] = []
    seen: set = set()
    skipped: List[Tuple[str, str]] = []
    columns = list(dict.fromkeys([x, *metrics]))  # each column once
    outcomes = read_tables([Path(log_dir) / PROGRESS_CSV for _, log_dir in sources], columns)
    for (index, _), outcome in zip(sources, outcomes):
        if isinstance(outcome, UnreadableFileError):
            skipped.append((index, f"corrupt progress.csv: {outcome.reason}"))
            continue
        seen.update(outcome)
        pieces.extend(_run_pieces(index, outcome, x, metrics, bounds))
    return pieces, seen, skipped


def _check_missing(missing: List[str], sources: Sequence[Tuple[str, Path]]) -> None:
    """Raise the QueryError naming the first column no run logged (with a close match)."""
    columns = sorted(_all_columns(sources[:20]))
    close = difflib.get_close_matches(missing[0], columns, n=1)
    raise QueryError(
        f"No selected run logged {missing[0]!r}",
        expected=f"a progress.csv column of the selected runs ({', '.join(columns[:12]) or 'none'})",
        found=f"{len(sources)} runs without {', '.join(missing)}",
        fix=f"did you mean {close[0]!r}" if close else "check the metric names",
    )


def _frame(pieces: List[Piece], x: str) -> Any:
    """The long frame of the pieces, in their order (one frame built once, not one per piece)."""
    import numpy as np
    import pandas as pd

    if not pieces:
        return pd.DataFrame(
            {
                "index": pd.Series(dtype=object),
                "metric": pd.Series(dtype=object),
                x: pd.Series(dtype=float),
                "value": pd.Series(dtype=float),
            }
        )
    rows = np.repeat(np.arange(len(pieces)), [len(p[2]) for p in pieces])
    # One text value per piece, converted once (pandas' own str/object choice), then repeated.
    indices = pd.Series(np.array([p[0] for p in pieces], dtype=object)).array.take(rows)
    names = pd.Series(np.array([p[1] for p in pieces], dtype=object)).array.take(rows)
    xs = np.concatenate([p[2] for p in pieces])
    ys = np.concatenate([p[3] for p in pieces])
    return pd.DataFrame({"index": indices, "metric": names, x: xs, "value": ys})


def load_pieces(
    runs: Any,
    metrics: Union[str, Sequence[str]],
    x: str = "time-step",
    x_bound: Optional[Union[float, Tuple[float, float]]] = None,
    strict: bool = True,
) -> Tuple[List[Piece], List[Tuple[str, str]]]:
    """What :func:`load_curves` puts in its frame, without building it: ``(pieces, skipped)``,
    each piece ``(index, metric, xs, values)`` (float64 arrays) in the frame's row order.

    Raises:
        RunNotFoundError: no runs were given.
        QueryError: a metric (or the x column) that none of the runs logged.
    """
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    sources = _sources(runs)
    if not sources:
        raise RunNotFoundError(
            "No runs to load curves from",
            expected="at least one selected run",
            found="an empty selection",
            fix="widen the task/regex/where filters",
        )
    pieces, seen, skipped = _read_all(sources, x, metrics, _bounds(x_bound))
    warn_skipped(skipped, stacklevel=4)
    missing = [m for m in [x] + metrics if m not in seen]
    if missing and strict:
        _check_missing(missing, sources)
    return pieces, skipped


def runs_of(pieces: Sequence[Piece], metric: str) -> List[Tuple[str, Any, Any]]:
    """``[(index, xs, values)]`` of one metric, one per run in order of first appearance (a run's
    pieces joined): what ``RLA.plot.resample.split_xy`` gives on the frame's rows of ``metric``."""
    import numpy as np

    per_run: Dict[str, List[Piece]] = {}
    for piece in pieces:
        if piece[1] == metric:
            per_run.setdefault(piece[0], []).append(piece)
    return [
        (index, np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]))
        for index, parts in per_run.items()
    ]


def load_curves(
    runs: Any,
    metrics: Union[str, Sequence[str]],
    x: str = "time-step",
    x_bound: Optional[Union[float, Tuple[float, float]]] = None,
    strict: bool = True,
) -> Any:
    """Load ``metrics`` of ``runs`` as a long DataFrame ``index, metric, <x>, value``.

    Rows whose x or value is missing are dropped; each run's rows keep their file order.

    Args:
        runs: a :class:`Selection`, a list of :class:`RunRow`, or the frame of ``list_runs``.
        metrics: column names of ``progress.csv``.
        x: the x column (``time-step`` by default; ``timestamp`` or any metric works).
        x_bound: keep ``x <= bound`` (a number) or ``low <= x <= high`` (a pair).
        strict: raise when a metric is in no run (else return what exists).

    Returns:
        The frame; ``frame.attrs['skipped']`` lists ``(index, reason)`` of the runs whose
        ``progress.csv`` could not be read (each also a :class:`BrokenRunWarning`).

    Raises:
        RunNotFoundError: no runs were given.
        QueryError: a metric (or the x column) that none of the runs logged.
    """
    pieces, skipped = load_pieces(runs, metrics, x, x_bound, strict)
    result = _frame(pieces, x)
    result.attrs["skipped"] = skipped
    return result
