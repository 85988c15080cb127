"""Query the database: list runs as a DataFrame, select them with typed filters, load curves.

Example::

    from RLA import query
    frame = query.list_runs("./data", task="demo",
                            where="algo in ['sac', 'td3'] and lr >= 1e-4 and last('return') > 100")
    curves = query.load_curves(frame, ["return"])   # index, metric, time-step, value

The SQLite catalog ``<data_root>/.rla_index.sqlite`` only caches what the directory tree
holds; it is refreshed on every call (for the scope queried) and rebuilt when missing, old or
corrupt. The filters are compiled to SQL, so a query decodes only the runs it returns.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from RLA.query.catalog import Catalog
from RLA.query.expr import Query, parse_query
from RLA.query.frame import metric_column, rows_to_frame
from RLA.query.selection import RunRow, Selection, parse_when, select_runs
from RLA.query.warm import WARM

if TYPE_CHECKING:  # the real types for checkers; loaded lazily at run time (see __getattr__)
    from RLA.query.curves import BrokenRunWarning, load_curves

#: Names loaded on first use (:mod:`RLA.query.curves` needs numpy; a listing does not).
_LAZY = {"BrokenRunWarning": "RLA.query.curves", "load_curves": "RLA.query.curves"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def warn_skipped(selection: Selection) -> None:
    """Emit one :class:`BrokenRunWarning` per run left out of ``selection``."""
    from RLA.query.curves import warn_skipped as _warn

    _warn(selection.skipped, stacklevel=4)


def list_runs(
    data_root: Union[str, os.PathLike],
    task: Optional[str] = None,
    regex: Union[str, Sequence[str], None] = None,
    where: Optional[str] = None,
    since: Any = None,
    until: Any = None,
    status: Union[str, Sequence[str], None] = None,
    archived: Optional[bool] = False,
    include_broken: bool = False,
    stats: Sequence[str] = ("last", "min", "max"),
    verify: bool = False,
    columns: Optional[Sequence[str]] = None,
    limit: Optional[int] = None,
    offset: int = 0,
) -> Any:
    """List runs as a DataFrame: one row per run.

    Columns: ``index, task, status, start_time, end_time, host, ip, archived, time_step,
    n_rows, param_source, name, log_dir``, then each hyper-parameter (typed; dotted names for
    nested ones), then ``last(m)``, ``min(m)``, ``max(m)`` for each scalar ``m``. The list
    of skipped broken runs is in ``frame.attrs['skipped']`` (and emitted as warnings).
    The frame is a :class:`RLA.query.display.RunFrame`: a ``pandas.DataFrame`` whose notebook
    view puts the index, status, start time, varying hyper-parameters and ``last(m)`` first,
    shows times to the second and leaves out columns empty for every run.

    Runs created, deleted, archived or moved always show at once, and so do a running run's
    new rows. A run whose ``run.json`` says it ended and whose files have not changed for a
    minute is "settled": its files are checked again at most an hour after the last check
    (by any process; :data:`RLA.query.warm.RECHECK_S`), or at once with
    ``verify=True``. See :mod:`RLA.query.warm`.

    Args:
        columns: only these columns (names of the full frame; unknown ones are left out).
        limit, offset: the page of runs (in index order) to return; only its rows are decoded.

    See :func:`select_runs` for the filters and the errors raised.
    """
    selection = select_runs(
        data_root,
        task=task,
        regex=regex,
        where=where,
        since=since,
        until=until,
        status=status,
        archived=archived,
        include_broken=include_broken,
        verify=verify,
        limit=limit,
        offset=offset,
    )
    warn_skipped(selection)
    from RLA.query.display import as_run_frame  # a DataFrame whose notebook view reads well

    frame = as_run_frame(rows_to_frame(selection.runs, stats, columns))
    frame.attrs["skipped"] = list(selection.skipped)
    return frame


__all__ = [
    "WARM",
    "BrokenRunWarning",
    "Catalog",
    "Query",
    "RunRow",
    "Selection",
    "list_runs",
    "load_curves",
    "metric_column",
    "parse_query",
    "parse_when",
    "rows_to_frame",
    "select_runs",
    "warn_skipped",
]
