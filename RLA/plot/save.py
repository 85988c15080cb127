"""Save stage of a plot: the figure in each format, ``<stem>.csv`` of the curves, ``<stem>-final.csv``."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from RLA.errors import RLAError
from RLA.fs import atomic_write_text, plain
from RLA.plot.aggregate import GroupCurve
from RLA.plot.options import SaveOptions

FORMATS = ("png", "pdf", "svg")
CURVES_HEADER = "metric,legend,n_runs,x,center,low,high,n_at_x"
FINAL_HEADER = "metric,legend,n,mean,median,iqm,std,stderr,ci_low,ci_high,window_start"
FINAL_KEYS = ("n", "mean", "median", "iqm", "std", "stderr", "ci_low", "ci_high")


def number(value: Any) -> str:
    """A CSV cell of a number, plain (``0.34``, never ``np.float64(0.34)``; integers stay integers)."""
    value = plain(value)
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def cell(text: str) -> str:
    """A CSV cell (quoted when needed)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([text])
    return buffer.getvalue()


def curve_rows(metric: str, curve: GroupCurve) -> List[str]:
    """The lines of ``<stem>.csv`` for one curve: one per x."""
    head = [cell(metric), cell(curve.legend), str(curve.n)]
    columns = (curve.x, curve.center, curve.low, curve.high, curve.n_at_x)
    return [",".join(head + [number(c[i]) for c in columns]) for i in range(curve.x.size)]


def final_row(metric: str, legend: str, final: Dict[str, Any]) -> str:
    """The line of ``<stem>-final.csv`` for one group."""
    values = [number(final[k]) for k in FINAL_KEYS] + [number(final["window_start"])]
    return ",".join([cell(metric), cell(legend)] + values)


def stem_and_formats(data_root: Path, options: SaveOptions, default: str) -> Tuple[Path, List[str]]:
    """The files' common path without suffix, and the figure formats.

    ``save_name`` (else ``default``) is taken under ``save_dir`` (else
    ``<data_root>/results/easy_plot``) unless absolute; its ``.png``/``.pdf``/``.svg``
    suffix picks the format unless ``formats`` is given; ``pretty`` defaults to PNG+PDF.

    Raises:
        RLAError: an unknown format.
    """
    name = options.save_name or default
    base = Path(options.save_dir) if options.save_dir is not None else data_root / "results" / "easy_plot"
    stem = Path(name) if Path(name).is_absolute() else base / name
    suffix = stem.suffix.lstrip(".").lower()
    formats = options.formats
    if suffix in FORMATS:
        stem = stem.with_suffix("")
        chosen = [suffix] if formats is None else list(formats)
    else:
        chosen = list(formats) if formats is not None else (["png", "pdf"] if options.pretty else ["png"])
    for fmt in chosen:
        if fmt not in FORMATS:
            raise RLAError(
                f"Unknown figure format {fmt!r}",
                expected=f"one of {', '.join(FORMATS)}",
                found=repr(fmt),
                fix="pass formats=('png',) or ('png', 'pdf')",
            )
    return stem, chosen


def save_figure(fig: Any, stem: Path, formats: Sequence[str]) -> List[Path]:
    """Write ``fig`` as ``<stem>.<fmt>`` for each format (each atomically: temp file + rename)."""
    paths = []
    stem.parent.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        path = stem.with_name(f"{stem.name}.{fmt}")
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fig.savefig(tmp, dpi=150, bbox_inches="tight", format=fmt)
        os.replace(tmp, path)
        paths.append(path)
    return paths


def save_plot(
    fig: Any,
    data_root: Path,
    options: SaveOptions,
    default: str,
    curves: Sequence[str],
    finals: Sequence[str],
) -> List[Path]:
    """Write the figure, then ``<stem>.csv`` (``curves`` lines) and ``<stem>-final.csv`` (``finals``).

    Returns:
        The paths written, figures first.

    Raises:
        RLAError: an unknown format (nothing is written then).
    """
    stem, chosen = stem_and_formats(data_root, options, default)
    files = save_figure(fig, stem, chosen)
    for suffix, header, rows in ((".csv", CURVES_HEADER, curves), ("-final.csv", FINAL_HEADER, finals)):
        path = stem.with_name(stem.name + suffix)
        atomic_write_text(path, "\n".join([header, *rows]) + "\n", durable=False)
        files.append(path)
    return files


def default_stem(task: Optional[str], metrics: Sequence[str]) -> str:
    """``<task>-<metric>-<metric>...`` (``all`` without a task; ``/`` of nested tasks as ``-``)."""
    return f"{(task or 'all').replace('/', '-')}-{'-'.join(metrics)}"
