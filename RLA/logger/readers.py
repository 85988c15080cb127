"""Read a run's logged scalars back as pandas DataFrames (progress.csv, progress.json, tb/)."""

from __future__ import annotations

import csv
import math
import os
from typing import Any, Dict, List

from RLA.errors import BackendNotInstalledError, LoggerError
from RLA.safe_read import MAX_CSV_BYTES, UnreadableFileError, decode_text, read_bytes, read_prefix


def _pandas() -> Any:
    import pandas

    return pandas


#: A cell of ``progress.csv`` longer than this makes the file unreadable (the csv module's
#: default ``field_size_limit``; logged scalars are far shorter).
MAX_CELL_CHARS = 131072
#: How much of a file :func:`read_header` reads to find the header line.
MAX_HEADER_BYTES = 1 << 20
#: A ``progress.csv`` with more columns is refused (each would become columns of every query).
MAX_COLUMNS = 10_000


def complete_lines(fname: Any, max_bytes: int = MAX_CSV_BYTES) -> bytes:
    """The file's bytes up to its last newline (a torn last line is left out).

    Only a regular file is read (never a link, FIFO or device: see :mod:`RLA.safe_read`),
    at most ``max_bytes``.

    Raises:
        UnreadableFileError: not a regular file, or above the cap.
        FileNotFoundError: no such file.
    """
    data = read_bytes(fname, max_bytes)
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
    return data


def check_cells(fname: Any, frame: Any) -> None:
    """Refuse a table with a header or text cell above :data:`MAX_CELL_CHARS`.

    Raises:
        UnreadableFileError: naming the column and the cell's length.
    """
    pandas = _pandas()
    for column in frame.columns:
        if len(str(column)) > MAX_CELL_CHARS:
            raise UnreadableFileError(
                fname, f"a header cell of {len(str(column))} characters (at most {MAX_CELL_CHARS})"
            )
        values = frame[column]
        if len(values) and not pandas.api.types.is_numeric_dtype(values.dtype):
            longest = values.map(lambda v: len(v) if isinstance(v, str) else 0).max()
            if longest > MAX_CELL_CHARS:
                raise UnreadableFileError(
                    fname,
                    f"a cell of {longest} characters in column "
                    f"{str(column)[:40]!r} (at most {MAX_CELL_CHARS})",
                )


def frame_from_bytes(fname: Any, data: bytes, **kwargs: Any) -> Any:
    """Parse the complete lines of a ``progress.csv`` into a DataFrame (cells checked).

    Raises:
        pandas.errors.EmptyDataError: no complete line.
        UnreadableFileError: binary content, a malformed table or an oversized cell.
    """
    import io

    pandas = _pandas()
    if not data.strip():
        raise pandas.errors.EmptyDataError(f"{fname}: no complete line")
    if b"\x00" in data:  # invalid UTF-8 is refused by the parser below
        decode_text(fname, data[: data.index(b"\x00") + 1])
    header_columns(fname, data.split(b"\n", 1)[0])
    try:
        frame = pandas.read_csv(io.BytesIO(data), **kwargs)
    except pandas.errors.EmptyDataError:
        raise
    except (pandas.errors.ParserError, ValueError, csv.Error, OverflowError) as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise UnreadableFileError(fname, f"not a readable CSV table ({first})") from None
    check_cells(fname, frame)
    return frame


def read_progress_csv(fname: Any, **kwargs: Any) -> Any:
    """``progress.csv`` as a DataFrame, without a torn last line.

    A process killed while appending can leave a last line without its newline (a write of
    a row cut at a page boundary); that row was never acknowledged and may hold truncated
    values, so readers drop it. The writer repairs the file when it reopens it.

    Raises:
        pandas.errors.EmptyDataError: no complete line.
        UnreadableFileError: not a regular file, too big, binary, malformed, a huge cell.
        FileNotFoundError: no such file.
    """
    return frame_from_bytes(fname, complete_lines(fname), **kwargs)


def header_columns(fname: Any, line: bytes) -> List[str]:
    """The column names in the first line of a ``progress.csv`` (at most :data:`MAX_COLUMNS`).

    Raises:
        UnreadableFileError: binary, malformed, too many columns or a name above the cell cap.
    """
    text = decode_text(fname, line).rstrip("\r")
    if not text.strip():
        return []
    try:
        header = next(csv.reader([text]))
    except csv.Error as exc:  # a field above csv.field_size_limit()
        raise UnreadableFileError(fname, f"a malformed header ({exc})") from None
    if len(header) > MAX_COLUMNS:
        raise UnreadableFileError(fname, f"{len(header)} columns (at most {MAX_COLUMNS})")
    return [str(c) for c in header]


def read_header(fname: Any) -> List[str]:
    """The column names of a ``progress.csv`` (its first line; regular files only).

    Raises:
        UnreadableFileError: not a regular file, binary, or a malformed/oversized header.
        FileNotFoundError: no such file.
    """
    return header_columns(fname, read_prefix(fname, MAX_HEADER_BYTES).split(b"\n", 1)[0])


def read_csv(fname: str) -> Any:
    """``progress.csv`` as a DataFrame (empty cells are NaN; a torn last line is ignored)."""
    return read_progress_csv(fname, sep=",")


def read_json(fname: str) -> Any:
    """``progress.json`` (one object per line) as a DataFrame; a torn last line is ignored."""
    from RLA.safe_read import parse_json

    rows: List[Dict[str, Any]] = []
    for line in complete_lines(fname).splitlines():  # a partial line of a killed process is left out
        if line.strip():
            rows.append(parse_json(fname, line))
    return _pandas().DataFrame(rows)


def read_tb(path: str) -> Any:
    """TensorBoard scalars under ``path`` (a tb/ dir or one event file) as a DataFrame.

    One row per step, one column per tag, read with TensorBoard's own event reader.
    """
    try:
        from tensorboard.backend.event_processing.event_accumulator import SCALARS, EventAccumulator
    except ImportError as exc:
        raise BackendNotInstalledError(
            "read_tb needs the tensorboard package",
            expected="tensorboard importable",
            found=str(exc),
            fix="pip install tensorboard",
        ) from exc
    if not os.path.exists(path):
        raise LoggerError(
            "No TensorBoard events to read",
            expected="a tb/ directory or event file",
            found=f"{path} does not exist",
            fix="check the run's log directory",
        )
    acc = EventAccumulator(path, size_guidance={SCALARS: 0})
    acc.Reload()
    table: Dict[int, Dict[str, float]] = {}
    for tag in acc.Tags().get("scalars", []):
        for event in acc.Scalars(tag):
            table.setdefault(event.step, {})[tag] = event.value
    pandas = _pandas()
    frame = pandas.DataFrame.from_dict(table, orient="index").sort_index()
    frame.index.name = "step"
    return frame.fillna(math.nan)
