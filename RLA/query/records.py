"""Read one run from disk into a flat :class:`RunRecord` (hyper-parameters, status, metrics).

Hyper-parameters come from the first source that has them: ``run.json``, then
``code/.../parameter.json``, then the ``archive_tester`` JSON, then ``backup.txt`` lines
(``[BACKUP] 0 : key: lr, value: 0.001``), then the ``&k=v`` part of the run's name. Runs of
the original project (no ``run.json``) and runs synced from another machine (logs only)
are therefore read too. Every file is read through :mod:`RLA.safe_read` (regular files
only, size caps, JSON depth limit) and ``run.json`` is checked field by field
(:mod:`RLA.query.info_schema`). A problem in one run (a damaged, crafted or non-regular
``run.json``, ``parameter.json`` or ``progress.csv``, a field of the wrong type) is
recorded in :attr:`RunRecord.problems`, never raised: the run is skipped and reported.
"""

from __future__ import annotations

import ast
import csv
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from RLA.layout import ARCHIVE_TESTER, PROGRESS_CSV, RUN_INFO_FILE, RunLayout
from RLA.logger.readers import MAX_COLUMNS, complete_lines, frame_from_bytes
from RLA.naming import index_time, parse_run_name
from RLA.query.info_schema import check_info
from RLA.safe_read import (
    MAX_JSON_DEPTH,
    UnreadableFileError,
    is_present,
    nesting_depth,
    read_bytes,
    read_json_object,
)

#: Columns of ``progress.csv`` that are axes, not metrics.
AXIS_COLUMNS = ("time-step", "timestamp")
PARAMETER_FILE = "parameter.json"
BACKUP_FILE = "backup.txt"
#: ``backup.txt`` is read up to this size (it holds one line per hyper-parameter).
MAX_BACKUP_BYTES = 16 << 20
#: A run with more (flattened) hyper-parameters is damaged: listing it would add that many
#: columns to every query's frame (``progress.csv``: :data:`RLA.logger.readers.MAX_COLUMNS`).
MAX_PARAMS = 10_000
#: The ``run.json`` keys the catalog keeps (the rest is read from disk when needed).
INFO_KEYS = (
    "status",
    "host",
    "ip",
    "pid",
    "start_time",
    "end_time",
    "heartbeat",
    "heartbeat_interval",
    "exit_code",
    "parent",
    "task",
    "index",
)
#: Longer values in ``backup.txt`` are kept as text.
_MAX_LITERAL = 10_000
_BACKUP_RE = re.compile(r"^\[BACKUP\][^:]*:\s*key:\s*(?P<key>.+?),\s*value:\s*(?P<value>.*)$")


@dataclass
class RunRecord:
    """Everything the catalog stores about one run (JSON-able).

    Attributes:
        relative: ``<task>/<YYYY>/<MM>/<DD>/<name>``.
        archived: whether the run lives under ``arc/``.
        info: the raw ``run.json`` (empty when the run has none).
        params: flattened hyper-parameters (dotted keys for nested dicts), typed.
        param_source: which file the hyper-parameters came from.
        metrics: ``{metric: [last, min, max]}`` over ``progress.csv`` (NaN-free).
        time_step: the largest ``time-step`` logged (0 without progress).
        n_rows: rows in ``progress.csv``.
        problems: human-readable problems found while reading (the run is "broken").
        signature: file stats the record was built from (for incremental refresh).
    """

    relative: str
    archived: bool = False
    info: Dict[str, Any] = field(default_factory=dict)
    params: Dict[str, Any] = field(default_factory=dict)
    tracked: List[str] = field(default_factory=list)
    param_source: str = "none"
    metrics: Dict[str, List[float]] = field(default_factory=dict)
    time_step: float = 0
    n_rows: int = 0
    problems: List[str] = field(default_factory=list)
    signature: str = ""


def flatten(params: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    """Flatten nested dicts into dotted keys (``{'net': {'h': 64}}`` -> ``{'net.h': 64}``)."""
    out: Dict[str, Any] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def literal(text: str) -> Any:
    """Type a value written as text (``'0.001'`` -> 0.001, ``'True'`` -> True); else the text."""
    text = text.strip()
    if (
        len(text) > _MAX_LITERAL
        or nesting_depth(text.encode("utf-8", "replace"), MAX_JSON_DEPTH) > MAX_JSON_DEPTH
    ):
        return text  # kept as text: typing it would recurse or take long
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    return text


def _stat_sig(path: "os.PathLike[str] | str") -> Tuple[str, int]:
    try:
        st = os.stat(path)
    except OSError:
        return "-", 0
    return f"{st.st_mtime_ns}:{st.st_size}", st.st_mtime_ns


def signature_and_mtime(run: RunLayout, log_root: Optional[str] = None) -> Tuple[str, int]:
    """:func:`signature`, and the newest modification time (ns) of the files it covers."""
    log_dir = os.path.join(log_root, run.relative) if log_root is not None else os.fspath(run.log_dir)
    stats = [_stat_sig(os.path.join(log_dir, RUN_INFO_FILE)), _stat_sig(os.path.join(log_dir, PROGRESS_CSV))]
    if stats[0][0] == "-":  # legacy / synced runs: every fallback source counts
        stats += [
            _stat_sig(run.code_dir / PARAMETER_FILE),
            _stat_sig(os.path.join(log_dir, BACKUP_FILE)),
            _stat_sig(run.path(ARCHIVE_TESTER)),
        ]
    return "|".join(sig for sig, _ in stats), max(mtime for _, mtime in stats)


def signature(run: RunLayout, log_root: Optional[str] = None) -> str:
    """The stats of the files a record is built from; a change means "re-read this run".

    Args:
        run: the run.
        log_root: ``os.fspath(run.type_root('log'))`` when the caller has it (faster).
    """
    return signature_and_mtime(run, log_root)[0]


class DiskFiles:
    """Where :func:`read_record` reads a run's files: the disk (through :mod:`RLA.safe_read`).

    :class:`RLA.query.external.TextFiles` reads the same files from texts given by a caller
    (a store's catalog), so they go through the same checks.
    """

    def json_object(self, path: Path) -> Dict[str, Any]:
        return read_json_object(path)

    def data(self, path: Path, max_bytes: int) -> bytes:
        return read_bytes(path, max_bytes)

    def present(self, path: Path) -> bool:
        return is_present(path)

    def progress(self, path: Path, record: "RunRecord") -> None:
        summarize_progress(path, record)


DISK = DiskFiles()


def _params_from_backup(path: Path, files: DiskFiles = DISK) -> Dict[str, Any]:
    params: Dict[str, Any] = {}
    text = files.data(path, MAX_BACKUP_BYTES).decode("utf-8", errors="replace")
    for line in text.splitlines():
        match = _BACKUP_RE.match(line.strip())
        if match:
            params[match["key"].strip()] = literal(match["value"])
    return params


def _load_params(run: RunLayout, record: RunRecord, files: DiskFiles = DISK) -> None:
    info = record.info
    if isinstance(info.get("hyper_params"), dict):
        record.params, record.param_source = flatten(info["hyper_params"]), RUN_INFO_FILE
        record.tracked = [str(k) for k in info.get("tracked_keys") or []]
        return
    sources: List[Tuple[str, Path]] = [
        (PARAMETER_FILE, run.code_dir / PARAMETER_FILE),
        (ARCHIVE_TESTER, run.path(ARCHIVE_TESTER)),
    ]
    for label, path in sources:
        try:
            data = files.json_object(path)
        except FileNotFoundError:
            continue
        except UnreadableFileError as exc:
            record.problems.append(f"corrupt {label}: {exc.reason}")
            continue
        params = data.get("hyper_param") if label == ARCHIVE_TESTER else data
        if isinstance(params, dict) and params:
            record.params, record.param_source = flatten(params), label
            if label == ARCHIVE_TESTER and isinstance(data.get("tracked_keys"), list):
                record.tracked = [str(k) for k in data["tracked_keys"]]
            break
    if not record.params and files.present(run.log_dir / BACKUP_FILE):
        try:
            record.params = _params_from_backup(run.log_dir / BACKUP_FILE, files)
        except FileNotFoundError:
            pass
        except UnreadableFileError as exc:
            record.problems.append(f"corrupt backup.txt: {exc.reason}")
        if record.params:
            record.param_source = BACKUP_FILE
    parsed = parse_run_name(run.name)
    name_params = {k: literal(v) for k, v in parsed.params} if parsed else {}
    if not record.tracked:
        record.tracked = list(name_params)
    if not record.params and name_params:
        record.params, record.param_source = name_params, "name"


def _fast_numeric(data: "bytes | Path") -> Optional[Tuple[List[str], Any]]:
    """Parse an all-numeric ``progress.csv`` (its complete lines, or its path) with numpy
    (4x faster than pandas); else None."""
    import numpy as np

    if not isinstance(data, bytes):
        data = complete_lines(data)
    handle = io.StringIO(data.decode("utf-8"), newline="")
    header_line = handle.readline()
    if not header_line.strip():
        return [], np.empty((0, 0))
    header = next(csv.reader([header_line]))
    try:
        array = np.loadtxt(handle, delimiter=",", ndmin=2, dtype=float)
    except ValueError:
        return None  # empty cells, text values: the general reader handles them
    if array.size and array.shape[1] != len(header):
        return None
    return header, array.reshape(-1, len(header)) if array.size == 0 else array


def _add_column(record: RunRecord, column: str, array: Any) -> None:
    import numpy as np

    array = array[np.isfinite(array)]
    if array.size == 0:
        return
    if column == "time-step":
        record.time_step = float(array.max())
    if column in AXIS_COLUMNS:
        return
    record.metrics[str(column)] = [float(array[-1]), float(array.min()), float(array.max())]


def summarize_progress(path: Path, record: RunRecord) -> None:
    """Fill ``metrics``, ``time_step`` and ``n_rows`` from a ``progress.csv``.

    A file that cannot be read safely (not a regular file, too big, binary, malformed, a
    cell above :data:`RLA.logger.readers.MAX_CELL_CHARS`) is recorded as a problem.
    """
    import numpy as np
    import pandas as pd

    try:
        data = complete_lines(path)
    except FileNotFoundError:
        return
    except UnreadableFileError as exc:
        record.problems.append(f"corrupt progress.csv: {exc.reason}")
        return
    try:
        fast = _fast_numeric(data)
    except (UnicodeDecodeError, csv.Error, ValueError):
        fast = None
    if fast is not None and len(fast[0]) > MAX_COLUMNS:
        record.problems.append(f"corrupt progress.csv: {len(fast[0])} columns (at most {MAX_COLUMNS})")
        return
    if fast is not None:
        header, array = fast
        record.n_rows = int(array.shape[0]) if header else 0
        for i, column in enumerate(header):
            _add_column(record, column, array[:, i])
        return
    try:
        frame = frame_from_bytes(path, data, low_memory=False)
    except pd.errors.EmptyDataError:
        return
    except UnreadableFileError as exc:
        record.problems.append(f"corrupt progress.csv: {exc.reason}")
        return
    record.n_rows = int(len(frame))
    for column in frame.columns:
        values = frame[column]
        # pandas 3 reads text as StringDtype, which numpy cannot interpret: ask pandas.
        if not pd.api.types.is_numeric_dtype(values.dtype):
            values = pd.to_numeric(values, errors="coerce")
        if pd.api.types.is_bool_dtype(values.dtype) or not pd.api.types.is_numeric_dtype(values.dtype):
            continue
        _add_column(record, str(column), values.to_numpy(dtype=float, na_value=np.nan))


def read_info(path: Path, record: RunRecord, files: DiskFiles = DISK) -> None:
    """Read and check ``run.json`` into ``record.info``; problems go to ``record.problems``."""
    try:
        info = files.json_object(path)
    except FileNotFoundError:
        return
    except UnreadableFileError as exc:
        record.problems.append(f"corrupt run.json: {exc.reason}")
        return
    record.info, problems = check_info(info)
    record.problems.extend(problems)


def read_record(
    run: RunLayout, sig: Optional[str] = None, full_info: bool = True, files: DiskFiles = DISK
) -> RunRecord:
    """Read one run; problems are recorded on the result, never raised.

    Args:
        run: the run.
        sig: its :func:`signature` if already computed.
        full_info: keep all of ``run.json`` in ``info`` (else only :data:`INFO_KEYS`).
        files: where the files are read (default: the disk).
    """
    record = RunRecord(
        relative=run.relative, archived=run.archived, signature=sig if sig is not None else signature(run)
    )
    log_dir = run.log_dir  # pathlib per access costs as much as reading a small file
    try:
        read_info(log_dir / RUN_INFO_FILE, record, files)
        _load_params(run, record, files)
        if len(record.params) > MAX_PARAMS:
            record.problems.append(
                f"{len(record.params)} hyper-parameters in {record.param_source} (at most {MAX_PARAMS})"
            )
            record.params = {}
        if not full_info and record.info:
            record.info = {k: record.info[k] for k in INFO_KEYS if k in record.info}
        files.progress(log_dir / PROGRESS_CSV, record)
    except Exception as exc:  # noqa: BLE001 - data from outside must never stop the listing
        # The readers above turn every expected failure into a problem; this is the last
        # guard of "one bad run never breaks the database": report whatever else escaped.
        record.problems.append(f"unreadable run ({type(exc).__name__}: {str(exc)[:200]})")
    return record


def start_time_of(run: RunLayout, info: Dict[str, Any]) -> Any:
    """The start time of a run: ``run.json`` if present, else the time in its index."""
    from RLA.manager.run_info import parse_time

    when = parse_time(info.get("start_time")) if info else None
    if when is not None:
        return when.replace(tzinfo=None) if when.tzinfo is None else when.astimezone().replace(tzinfo=None)
    try:
        return index_time(run.index)
    except ValueError:
        return None
