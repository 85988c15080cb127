"""Read the same columns of many ``progress.csv`` files with one CSV parse per header.

Reading a hundred runs one ``pandas.read_csv`` at a time spends most of its time in the
per-call setup, not in parsing. Files that share their header line exactly and hold only
plain numbers are parsed together: their bodies are joined under the header into one
buffer, parsed once by the same C parser with the same options, and cut back into files
by their row counts. The numbers are those of one parse per file (:func:`read_one`),
because a file joins a batch only when nothing in it can parse differently in company:

* its body has only the bytes of numbers, ``nan``/``inf`` and commas (no quotes, no
  ``\\r``, no spaces), so one non-empty line is one row and rows can be counted;
* its first row is not longer than the header (pandas would take a first column as the
  index);
* the joined parse keeps every wanted column numeric (text in any file, booleans ... send
  the whole batch back to one parse per file), and holds no ``-0.0`` nor integers beyond
  2**53 (where a file read alone as integers could give other bits).

Anything else (binary, quoted, torn, empty, oversized, unreadable) is read by
:func:`read_one`, exactly as before; a file is read from disk once either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union, cast

import numpy as np

from RLA.logger.readers import check_cells, complete_lines, frame_from_bytes, header_columns
from RLA.safe_read import UnreadableFileError

#: One run's wanted columns as float64 arrays (text that is not a number is NaN).
Table = Dict[str, np.ndarray]
#: What reading one file gives: its table, or why it cannot be read.
Outcome = Union[Table, UnreadableFileError]

#: The only bytes a batched body may hold (digits, signs, exponents, nan/inf spellings).
PLAIN_BYTES = b"0123456789.,+-eEnaNAiIfFtTyY\n"
#: At most this many bytes of files wait for their batch (and are joined into one parse).
MAX_BATCH_BYTES = 16 << 20
#: Integers at or above this size may convert to other floats read alone (int64) or joined.
EXACT_INT = 2.0**53


def numbers(frame: Any, column: str) -> np.ndarray:
    """A column as float64 numbers (text that is not a number is NaN)."""
    import pandas as pd

    values = frame[column]
    if getattr(values.dtype, "kind", "O") in ("i", "u", "f") and not pd.api.types.is_extension_array_dtype(
        values.dtype
    ):
        return values.to_numpy(dtype=float)  # what to_numeric(errors="coerce") gives, without its pass
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)


def read_one(path: Path, data: Optional[bytes], columns: Sequence[str]) -> Outcome:
    """One file's table from its bytes (``None``: no such file), parsed on its own.

    A missing or empty file gives every wanted column, empty (as the per-run reader did).
    """
    import pandas as pd

    wanted = set(columns)
    try:
        if data is None:
            raise FileNotFoundError(path)
        frame = frame_from_bytes(path, data, usecols=lambda c: c in wanted, low_memory=False)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        frame = pd.DataFrame(columns=list(columns))
    except UnreadableFileError as exc:
        return exc
    return {str(column): numbers(frame, column) for column in frame.columns}


#: A file waiting for its batch: ``(position, bytes, end of the header line, rows)``.
Plain = Tuple[int, bytes, int, int]


def _plain_rows(path: Path, data: bytes) -> Optional[Tuple[bytes, int, int]]:
    """``(header, end of the header line, rows)`` when ``data`` may join a batch, else None."""
    cut = data.find(b"\n")
    header, body = data[:cut], data[cut + 1 :]
    if cut <= 0 or not header.strip() or any(c in header for c in (b'"', b"\r", b"\x00")):
        return None
    if body.translate(None, PLAIN_BYTES):
        return None
    try:
        header_columns(path, header)
    except UnreadableFileError:
        return None
    rows = body.count(b"\n")  # the body ends with a newline; pandas skips empty lines
    if body.startswith(b"\n") or b"\n\n" in body:
        lines = body.split(b"\n")
        rows = len(lines) - lines.count(b"")
    first = body.lstrip(b"\n")
    if first[: first.find(b"\n")].count(b",") > header.count(b","):
        return None
    return header, cut, rows


def _joined(header: bytes, batch: List[Plain], columns: Sequence[str]) -> Optional[List[Table]]:
    """The tables of a batch from one parse, or None when it could differ from one parse per file."""
    import io

    import pandas as pd

    wanted = set(columns)
    data = header + b"\n" + b"".join(memoryview(item[1])[item[2] + 1 :] for item in batch)
    try:
        frame = pd.read_csv(io.BytesIO(data), usecols=lambda c: c in wanted, low_memory=False)
        check_cells("a batch of progress.csv files", frame)
    except (pd.errors.ParserError, ValueError, OverflowError, UnreadableFileError):
        return None
    if len(frame) != sum(item[3] for item in batch):
        return None
    arrays = {}
    for column in frame.columns:
        values = frame[column]
        if values.dtype.kind not in "iuf" or pd.api.types.is_extension_array_dtype(values.dtype):
            return None
        floats = values.to_numpy(dtype=float)
        if values.dtype.kind == "f" and (
            (np.signbit(floats) & (floats == 0)).any()
            or (np.abs(floats[np.isfinite(floats)]) >= EXACT_INT).any()
        ):
            return None
        arrays[str(column)] = floats
    tables, start = [], 0
    for item in batch:
        tables.append({column: values[start : start + item[3]] for column, values in arrays.items()})
        start += item[3]
    return tables


def _flush(
    pending: Dict[bytes, List[Plain]], paths: Sequence[Path], columns: Sequence[str], outcomes: List[Any]
) -> None:
    """Parse every pending batch (one file alone on its own) and empty ``pending``."""
    for header, batch in pending.items():
        tables = _joined(header, batch, columns) if len(batch) > 1 else None
        for k, (i, data, _, _) in enumerate(batch):
            outcomes[i] = tables[k] if tables is not None else read_one(paths[i], data, columns)
    pending.clear()


def read_tables(paths: Sequence[Path], columns: Sequence[str]) -> List[Outcome]:
    """The ``columns`` of each ``progress.csv`` in ``paths`` (in order), read in batches of at
    most :data:`MAX_BATCH_BYTES` held at once.

    Each outcome equals ``read_one(path, <the file's complete lines>, columns)``.

    Raises:
        OSError: a file that exists but cannot be opened (as reading it alone would).
    """
    outcomes: List[Optional[Outcome]] = [None] * len(paths)
    pending: Dict[bytes, List[Plain]] = {}
    held = 0
    for i, path in enumerate(paths):
        try:
            data: Optional[bytes] = complete_lines(path)
        except FileNotFoundError:
            data = None
        except UnreadableFileError as exc:
            outcomes[i] = exc
            continue
        found = None if data is None else _plain_rows(path, data)
        if data is None or found is None:
            outcomes[i] = read_one(path, data, columns)
            continue
        if held + len(data) > MAX_BATCH_BYTES:
            _flush(pending, paths, columns, outcomes)
            held = 0
        pending.setdefault(found[0], []).append((i, data, found[1], found[2]))
        held += len(data)
    _flush(pending, paths, columns, outcomes)
    return cast(List[Outcome], outcomes)  # every file was given its outcome above
