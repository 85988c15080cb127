"""The intent journal of a run operation: what it will move, written before the first move.

``<data_root>/.rla-journal/<op-id>.json`` lists the operation's action and, per run, every
data type with its source and destination (relative to their data roots). It is written
atomically and fsynced before anything moves, and removed (directory fsynced) once every
run is whole again. A journal still there means an operation was interrupted: the next
operation on the data root, or ``rla fsck --repair``, finishes it (see :mod:`RLA.ops.recover`).
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from RLA.errors import RLAError
from RLA.fs import atomic_write_json, fsync_dir
from RLA.layout import JOURNAL_DIR, RunLayout, check_layout
from RLA.ops.journal_check import check_op_id, check_run
from RLA.ops.lock import journal_dir
from RLA.safe_paths import check_relative
from RLA.safe_read import read_json_object

FORMAT_VERSION = 1
#: A journal of 100,000 runs takes about 130 MB; more is not a journal rla wrote.
MAX_JOURNAL_BYTES = 256 << 20
MAX_JOURNAL_DEPTH = 8
ACTIONS = ("move", "copy", "trash", "purge")


class JournalError(RLAError):
    """A journal file that cannot be read or that names unsafe paths."""


def new_op_id() -> str:
    """A unique operation id: ``YYYYmmdd-HHMMSS-<pid>-<random>`` (sorts by start time)."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{secrets.token_hex(3)}"


@dataclass
class JournalStep:
    """One data type of one run: ``src`` (under the data root) goes to ``dst``."""

    data_type: str
    src: str
    dst: Optional[str] = None


@dataclass
class JournalRun:
    """The steps of one run, and for a migration the run whose ``run.json`` to rewrite."""

    index: str
    steps: List[JournalStep] = field(default_factory=list)
    target: Optional[RunLayout] = None
    rewrite: bool = False


@dataclass
class Journal:
    """One operation's intent (see the module docstring)."""

    op_id: str
    action: str
    verb: str
    data_root: Path
    target_root: Optional[Path] = None
    runs: List[JournalRun] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return journal_dir(self.data_root) / f"{self.op_id}.json"

    @property
    def dst_root(self) -> Path:
        return self.target_root if self.target_root is not None else self.data_root

    def src_path(self, step: JournalStep) -> Path:
        return self.data_root.joinpath(*check_relative(step.src, "journal source"))

    def dst_path(self, step: JournalStep) -> Optional[Path]:
        if step.dst is None:
            return None
        return self.dst_root.joinpath(*check_relative(step.dst, "journal destination"))

    @property
    def crosses_roots(self) -> bool:
        """Whether the runs go to another data root (which then confirms the operation)."""
        return self.target_root is not None and os.path.realpath(self.target_root) != os.path.realpath(
            self.data_root
        )

    @property
    def confirmation(self) -> Path:
        """``<target_root>/.rla-journal/<op-id>.target``: the target root's consent."""
        assert self.target_root is not None
        return journal_dir(self.target_root) / f"{self.op_id}.target"

    def write(self) -> None:
        """Write the journal atomically and durably (file and directory fsynced); a migration
        to another data root first writes its confirmation there."""
        if self.crosses_roots:
            journal_dir(self.dst_root, create=True)
            atomic_write_json(
                self.confirmation,
                {"op_id": self.op_id, "source_root": os.path.realpath(self.data_root)},
                durable=True,
            )
        journal_dir(self.data_root, create=True)
        atomic_write_json(self.path, self.to_dict(), durable=True)

    def remove(self) -> None:
        """Delete the journal (the operation is complete), then the target root's confirmation;
        the directories are fsynced."""
        for path in [self.path] + ([self.confirmation] if self.crosses_roots else []):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            fsync_dir(path.parent)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "op_id": self.op_id,
            "action": self.action,
            "verb": self.verb,
            "pid": os.getpid(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "target_root": os.fspath(self.target_root.resolve()) if self.target_root else None,
            "runs": [_run_to_dict(run) for run in self.runs],
        }


def _run_to_dict(run: JournalRun) -> Dict[str, Any]:
    target = None
    if run.target is not None:
        target = {
            "task": run.target.task,
            "date": run.target.date,
            "name": run.target.name,
            "archived": run.target.archived,
        }
    return {
        "index": run.index,
        "rewrite": run.rewrite,
        "target": target,
        "steps": [{"type": s.data_type, "src": s.src, "dst": s.dst} for s in run.steps],
    }


def _run_from_dict(raw: Dict[str, Any], dst_root: Path) -> JournalRun:
    target = None
    if raw.get("target"):
        t = raw["target"]
        target = check_layout(RunLayout(dst_root, t["task"], t["date"], t["name"], bool(t["archived"])))
    steps = []
    for step in raw["steps"]:
        check_relative(step["src"], "journal source")
        if step["dst"] is not None:
            check_relative(step["dst"], "journal destination")
        steps.append(JournalStep(str(step["type"]), step["src"], step["dst"]))
    return JournalRun(str(raw["index"]), steps, target, bool(raw.get("rewrite")))


def load_journal(data_root: Union[str, os.PathLike], path: Union[str, os.PathLike]) -> Journal:
    """Read a journal of ``data_root``.

    Raises:
        JournalError: unreadable, of another format, or naming an unsafe path.
    """
    path = Path(path)
    try:
        raw = read_json_object(path, MAX_JOURNAL_BYTES, MAX_JOURNAL_DEPTH)  # no link, FIFO or 100k-deep list
        if raw.get("format_version") != FORMAT_VERSION or raw.get("action") not in ACTIONS:
            raise ValueError(f"format {raw.get('format_version')!r}, action {raw.get('action')!r}")
        target_root = Path(raw["target_root"]) if raw.get("target_root") else None
        journal = Journal(
            str(raw["op_id"]),
            raw["action"],
            str(raw.get("verb") or raw["action"]),
            Path(data_root),
            target_root,
        )
        check_op_id(journal.op_id, path.name)
        if journal.crosses_roots:
            _check_confirmation(journal)
        if not isinstance(raw["runs"], list):
            raise TypeError(f"runs is a {type(raw['runs']).__name__}")
        journal.runs = [_run_from_dict(run, journal.dst_root) for run in raw["runs"]]
        for run in journal.runs:
            check_run(journal, run)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise JournalError(
            f"Cannot read the operation journal {path}",
            expected="a journal written by rla",
            found=str(exc),
            fix="inspect it; move it out of .rla-journal/ once the runs it names are checked by hand",
        ) from exc
    return journal


def _check_confirmation(journal: Journal) -> None:
    """The target root confirms the operation (see :mod:`RLA.ops.journal_check`)."""
    assert journal.target_root is not None
    if not journal.target_root.is_absolute():
        raise ValueError(f"the target root {os.fspath(journal.target_root)!r} is not absolute")
    try:
        mark = read_json_object(journal.confirmation, 4096, 4)
    except FileNotFoundError:
        mark = {}
    if mark.get("op_id") != journal.op_id or mark.get("source_root") != os.path.realpath(journal.data_root):
        raise ValueError(
            f"the target root {os.fspath(journal.target_root)!r} did not confirm the operation "
            f"(no {journal.confirmation.name} naming this data root in its {JOURNAL_DIR}/)"
        )


def pending_journals(data_root: Union[str, os.PathLike]) -> List[Path]:
    """The journals of interrupted operations, oldest first."""
    folder = journal_dir(data_root)
    if not folder.is_dir():
        return []
    return sorted(
        folder / name for name in os.listdir(folder) if name.endswith(".json") and not name.startswith(".")
    )
