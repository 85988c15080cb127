"""Check a data root for what interrupted or hand-made changes leave, and repair what is safe.

:func:`scan` reports (changes nothing):

* ``journal``: an operation was interrupted (its journal is pending, see :mod:`RLA.ops.journal`);
* ``fragment``: a run present under some data types but without ``log/`` or ``code/``
  (:data:`RLA.layout.CORE_TYPES`: every run ``log_files_gen`` or the original project
  creates has both);
* ``split``: one run's data types divided between two places: active and ``arc/`` (neither
  holds all the data types of the other: a copy is not split), or the data root and
  ``.trash/`` (a data type in the trash that the data root lacks; trashed files of a data
  type the run still has, such as old checkpoints, are not a split);
* ``partial``: a half copy (``.rla-<op>.part.*``) or a folder left to be deleted
  (``.rla-<op>.gone.*``) that no pending journal owns.

:func:`repair` finishes every pending journal (see :mod:`RLA.ops.recover`) and removes
partial copies; fragments, splits and to-be-deleted folders stay (they are user data:
reported with a fix, never deleted).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple, Union

from RLA.layout import CORE_TYPES, DATA_TYPES, TRASH, day_of, iter_run_dirs, type_root
from RLA.ops.journal import JournalError, load_journal, pending_journals
from RLA.ops.lock import RootsLock, journal_dir
from RLA.ops.recover import Recovery, recover_locked
from RLA.ops.steps import GONE, PART, STAGED_RE, remove
from RLA.text import count


@dataclass
class Finding:
    """One problem: its kind, where, and what to do."""

    kind: str
    where: str
    detail: str

    def line(self) -> str:
        return f"{self.kind:<9} {self.where}: {self.detail}"


@dataclass
class FsckReport:
    """What :func:`scan` found (and, after :func:`repair`, what was done)."""

    findings: List[Finding] = field(default_factory=list)
    repaired: List[str] = field(default_factory=list)

    def of(self, kind: str) -> List[Finding]:
        return [item for item in self.findings if item.kind == kind]


def _run_types(root: Path) -> Dict[Tuple[bool, str], Set[str]]:
    """``(archived, relative) -> data types present`` for every run under ``root``."""
    found: Dict[Tuple[bool, str], Set[str]] = {}
    for archived in (False, True):
        for data_type in DATA_TYPES:
            for run in iter_run_dirs(root, data_type, archived=archived):
                found.setdefault((archived, run.relative), set()).add(data_type)
    return found


def _label(archived: bool, relative: str) -> str:
    return ("arc/" if archived else "") + relative


def _trash_stamps(data_root: Path) -> List[Path]:
    trash = data_root / TRASH
    if not trash.is_dir() or trash.is_symlink():
        return []
    return sorted(p for p in trash.iterdir() if p.is_dir() and not p.is_symlink())


def _runs_findings(data_root: Path, report: FsckReport) -> None:
    runs = _run_types(data_root)
    for (archived, rel), kinds in sorted(runs.items()):
        missing = [data_type for data_type in CORE_TYPES if data_type not in kinds]
        if missing:
            report.findings.append(
                Finding(
                    "fragment",
                    _label(archived, rel),
                    f"only under {', '.join(sorted(kinds))} (no {'/, '.join(missing)}/); "
                    "move the missing parts back, or delete it with `rla delete`",
                )
            )
        twin = runs.get((not archived, rel))
        if not archived and twin is not None and not (twin <= kinds or kinds <= twin):
            report.findings.append(
                Finding(
                    "split",
                    rel,
                    f"{', '.join(sorted(kinds))} active, "
                    f"{', '.join(sorted(twin))} under arc/; move the parts together",
                )
            )
    for stamp in _trash_stamps(data_root):
        for (archived, rel), kinds in sorted(_run_types(stamp).items()):
            here = runs.get((archived, rel))
            if here is not None and kinds - here:  # a data type moved out, not some files of one
                report.findings.append(
                    Finding(
                        "split",
                        _label(archived, rel),
                        f"{', '.join(sorted(here))} in the data root, {', '.join(sorted(kinds))} "
                        f"in {TRASH}/{stamp.name}; move the parts together",
                    )
                )


def _day_dirs(base: Path) -> Iterator[Path]:
    """Day folders (``<task>/<YYYY>/<MM>/<DD>``) under a type root, without following links."""
    if not base.is_dir():
        return
    for dirpath, dirnames, _ in os.walk(base):
        rel = Path(dirpath).relative_to(base).as_posix().split("/")
        if day_of(rel) is not None:
            dirnames[:] = []
            yield Path(dirpath)
        else:
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]


def _type_roots(data_root: Path) -> Iterator[Path]:
    for base in [data_root] + _trash_stamps(data_root):
        for archived in (False, True):
            for data_type in DATA_TYPES:
                yield type_root(base, data_type, archived)


def staged_entries(data_root: Union[str, os.PathLike]) -> Iterator[Tuple[Path, str, str]]:
    """``(path, op_id, kind)`` of every hidden partial copy or to-be-deleted folder."""
    for base in _type_roots(Path(data_root)):
        for day in _day_dirs(base):
            for name in sorted(os.listdir(day)):
                match = STAGED_RE.match(name)
                if match:
                    yield day / name, match["op"], match["kind"]


def _journal_findings(data_root: Path, report: FsckReport) -> Set[str]:
    owned: Set[str] = set()
    for path in pending_journals(data_root):
        try:
            journal = load_journal(data_root, path)
        except JournalError as exc:
            report.findings.append(Finding("journal", path.name, f"unreadable: {exc}"))
            continue
        owned.add(journal.op_id)
        report.findings.append(
            Finding(
                "journal",
                path.name,
                f"an interrupted {journal.verb} of "
                f"{count(len(journal.runs), 'run')} (or one running now); "
                "`rla fsck --repair` finishes it",
            )
        )
    return owned


def scan(data_root: Union[str, os.PathLike]) -> FsckReport:
    """Report pending journals, fragments, split runs and stray partial copies."""
    root = Path(data_root)
    report = FsckReport()
    owned = _journal_findings(root, report)
    _runs_findings(root, report)
    for path, op_id, kind in staged_entries(root):
        if op_id in owned:
            continue
        rel = path.relative_to(root).as_posix()
        if kind == PART:
            report.findings.append(
                Finding("partial", rel, "an incomplete copy; `rla fsck --repair` removes it")
            )
        elif kind == GONE:
            report.findings.append(
                Finding(
                    "partial", rel, "a folder an operation was deleting; check it, then remove it by hand"
                )
            )
    return report


def repair(data_root: Union[str, os.PathLike]) -> FsckReport:
    """Finish pending journals and remove stray partial copies, then scan again."""
    root = Path(data_root)
    with RootsLock([root]) as held:
        recovery: Recovery = recover_locked(root, held)
        removed = []
        owned = {load_journal(root, p).op_id for p in pending_journals(root) if _readable(root, p)}
        for path, op_id, kind in list(staged_entries(root)):
            if kind == PART and op_id not in owned:
                remove(path)
                removed.append(f"removed the incomplete copy {path.relative_to(root).as_posix()}")
        for temp in _journal_temps(root):  # a journal write killed before its rename
            temp.unlink()
            removed.append(f"removed the unfinished journal {temp.relative_to(root).as_posix()}")
        report = scan(root)
    report.repaired = recovery.lines() + removed
    return report


def _journal_temps(root: Path) -> List[Path]:
    folder = journal_dir(root)
    if not folder.is_dir():
        return []
    return sorted(
        folder / name for name in os.listdir(folder) if name.startswith(".") and name.endswith(".tmp")
    )


def _readable(root: Path, path: Path) -> bool:
    try:
        load_journal(root, path)
        return True
    except JournalError:
        return False
