"""Continue a parent run's files in a resumed run, cut at the restored time-step.

* ``progress.csv`` / ``progress.json``: the parent's rows with ``time-step <= step``, then
  the rows the new run already has (the header widened if needed);
* ``log.txt`` / ``warn.txt`` / ``backup.txt``: the parent's text, a "resumed" marker, then
  the new run's text;
* ``tb/``: the parent's event files rewritten without events after ``step``;
* checkpoints ``checkpoint-<s>.*`` with ``s <= step`` and results not prefixed by a later
  time-step: hard-linked (copied across file systems).

The parent is only read. Every file of the new run is replaced atomically.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
import time
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from RLA.fs import atomic_write_bytes

TIME_STEP = "time-step"
TEXT_FILES = ("log.txt", "warn.txt", "backup.txt")
PROGRESS_CSV = "progress.csv"
PROGRESS_JSON = "progress.json"
TB_DIR = "tb"
_STEP_PREFIX = re.compile(r"^(\d+)-")
_CHECKPOINT_STEP = re.compile(r"^checkpoint-(\d+)\.")


def _complete_lines(data: bytes) -> List[bytes]:
    """Lines of ``data`` (with their ``\\n``); a torn last line of a killed writer is dropped."""
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines.pop()
    return lines


def _step_of(text: Optional[str]) -> Optional[float]:
    try:
        value = float(text) if text not in (None, "") else None
    except (TypeError, ValueError):
        return None
    return value if value is not None and not math.isnan(value) else None


def _parse_csv(data: bytes) -> Tuple[List[str], List[List[str]]]:
    lines = _complete_lines(data)
    if not lines:
        return [], []
    rows = list(csv.reader(io.StringIO(b"".join(lines).decode("utf-8"), newline="")))
    return (rows[0], rows[1:]) if rows else ([], [])


def _encode_csv(header: List[str], rows: Iterable[List[str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(row)
    return buf.getvalue().encode("utf-8")


def cut_csv(parent: Path, step: Optional[int]) -> Tuple[List[str], List[List[str]]]:
    """The parent's header and the rows whose time-step is ``<= step`` (all if ``step`` is None)."""
    if not parent.is_file():
        return [], []
    header, rows = _parse_csv(parent.read_bytes())
    if step is None or TIME_STEP not in header:
        return header, rows
    col = header.index(TIME_STEP)
    kept = []
    for row in rows:
        value = _step_of(row[col] if col < len(row) else None)
        if value is None or value <= step:
            kept.append(row)
    return header, kept


def continue_csv(parent: Path, child: Path, step: Optional[int]) -> int:
    """Write the child's progress.csv = parent rows up to ``step`` + the child's own rows.

    Returns:
        The number of parent rows kept.
    """
    header, rows = cut_csv(parent, step)
    own_header, own_rows = _parse_csv(child.read_bytes()) if child.is_file() else ([], [])
    if not header and not own_header:
        return 0
    merged = list(header) + [k for k in own_header if k not in header]
    width = len(merged)
    out = [row + [""] * (width - len(row)) for row in rows]
    for row in own_rows:
        cells = dict(zip(own_header, row))
        out.append([cells.get(key, "") for key in merged])
    atomic_write_bytes(child, _encode_csv(merged, out), durable=False)
    return len(rows)


def continue_json_lines(parent: Path, child: Path, step: Optional[int]) -> int:
    """The same as :func:`continue_csv` for ``progress.json`` (one JSON object per line)."""
    if not parent.is_file():
        return 0
    kept = []
    for line in _complete_lines(parent.read_bytes()):
        try:
            value = json.loads(line).get(TIME_STEP)
        except (ValueError, AttributeError):
            continue
        if step is None or not isinstance(value, (int, float)) or value <= step:
            kept.append(line)
    own = _complete_lines(child.read_bytes()) if child.is_file() else []
    atomic_write_bytes(child, b"".join(kept + own), durable=False)
    return len(kept)


def continue_text(parent: Path, child: Path, marker: str) -> None:
    """The child's text file = the parent's text, a marker line, then the child's text."""
    if not parent.is_file():
        return
    old = parent.read_bytes()
    if old and not old.endswith(b"\n"):
        old += b"\n"
    own = child.read_bytes() if child.is_file() else b""
    atomic_write_bytes(child, old + marker.encode("utf-8") + b"\n" + own, durable=False)


def _earlier_event_name(name: str) -> str:
    """An event-file name that sorts before any file a writer opens from now on.

    tensorboardX names files ``events.out.tfevents.<unix seconds>.<host>``; TensorBoard
    reads them in name order and treats steps going backwards as orphaned data, so the
    parent's events must come first, and a writer opened in the same second as the
    parent's file must not overwrite the copy.
    """
    match = re.match(r"^(events\.out\.tfevents\.)(\d+)(.*)$", name)
    if not match:
        return name
    seconds = min(int(match[2]), int(time.time()) - 1)
    return f"{match[1]}{seconds:0{len(match[2])}d}{match[3]}"


def continue_tensorboard(parent_tb: Path, child_tb: Path, step: Optional[int]) -> int:
    """Rewrite the parent's event files into ``child_tb`` without events after ``step``.

    Returns:
        The number of events dropped.
    """
    if not parent_tb.is_dir():
        return 0
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboardX.record_writer import RecordWriter

    dropped = 0
    for source in sorted(parent_tb.rglob("*tfevents*")):
        if not source.is_file():
            continue
        target = child_tb / source.relative_to(parent_tb)
        target = target.with_name(_earlier_event_name(target.name))
        if target.exists():
            # Same second, same host: TensorBoard reads files in name order, so the new
            # run's file moves after the parent's ("X" < "X.resumed").
            os.replace(target, target.with_name(target.name + ".resumed"))
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(".partial-events.tmp")
        writer = RecordWriter(str(partial))
        try:
            for record in RawEventFileLoader(str(source)).Load():
                if step is not None and Event.FromString(record).step > step:
                    dropped += 1
                    continue
                writer.write(record)
        finally:
            writer.flush()
            writer.close()
        os.replace(partial, target)
    return dropped


def link_or_copy(source: Path, target: Path) -> None:
    """Hard-link ``source`` to ``target`` (files RLA writes are replaced, never edited), else copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def continue_checkpoints(parent: Path, child: Path, step: Optional[int]) -> List[str]:
    """Link the parent's numbered checkpoints with step ``<= step`` into the child's folder."""
    linked: List[str] = []
    if not parent.is_dir():
        return linked
    for entry in sorted(parent.iterdir()):
        match = _CHECKPOINT_STEP.match(entry.name)
        if not match or not entry.is_file() or (step is not None and int(match[1]) > step):
            continue
        target = child / entry.name
        if not target.exists():
            link_or_copy(entry, target)
            linked.append(entry.name)
    return linked


def continue_results(parent: Path, child: Path, step: Optional[int]) -> int:
    """Link the parent's results, except those named ``<later time-step>-<name>``."""
    count = 0
    if not parent.is_dir():
        return count
    for source in sorted(parent.rglob("*")):
        if not source.is_file() or source.name.startswith("."):
            continue
        match = _STEP_PREFIX.match(source.name)
        if step is not None and match and int(match[1]) > step:
            continue
        target = child / source.relative_to(parent)
        if not target.exists():
            link_or_copy(source, target)
            count += 1
    return count


def continue_log_dir(parent: Path, child: Path, step: Optional[int], marker: str) -> Dict[str, int]:
    """Continue every logger file of ``parent`` (a log dir) in ``child``; returns counts."""
    counts = {
        "csv_rows": continue_csv(parent / PROGRESS_CSV, child / PROGRESS_CSV, step),
        "json_rows": continue_json_lines(parent / PROGRESS_JSON, child / PROGRESS_JSON, step),
    }
    for name in TEXT_FILES:
        continue_text(parent / name, child / name, marker)
    counts["tb_dropped"] = continue_tensorboard(parent / TB_DIR, child / TB_DIR, step)
    return counts
