"""Finish the operations a crash interrupted: every pending journal is rolled forward.

Forward is the right direction for every operation: the journal is written only after the
plan was checked (no destination taken, every path inside its root) and confirmed, the
moves are renames that are as easy to finish as to undo, a copy's source is intact, and
a purge cannot be undone anyway. One exception per run: when a destination is taken by
data the operation did not put there (a run created or restored by hand in between), that
run is moved back so it is whole at its source, and the repair says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Union

from RLA.ops.journal import Journal, JournalError, load_journal, pending_journals
from RLA.ops.lock import RootsLock
from RLA.ops.runner import back_run, forward_run, prune_run
from RLA.ops.steps import Blocked
from RLA.text import count


@dataclass
class Recovery:
    """What a repair did, one line per journal or problem (for the user)."""

    finished: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)

    def lines(self) -> List[str]:
        return self.finished + self.problems


def finish_journal(journal: Journal) -> List[str]:
    """Roll ``journal`` forward run by run (back for a blocked run); returns the notes.

    The journal is removed only when every run is whole (forward or back).

    Raises:
        OSError: a run could be neither finished nor undone (the journal stays).
    """
    notes: List[str] = []
    for run in journal.runs:
        try:
            vanished = forward_run(journal, run)
        except Blocked as exc:
            back_run(journal, run)
            notes.append(f"{run.index}: moved back to where it was ({exc.strerror}: {exc.filename})")
            vanished = []
        if vanished:
            notes.append(f"{run.index}: {', '.join(vanished)} found neither at the source nor the target")
        prune_run(journal, run)
    journal.remove()
    return notes


def recover_locked(data_root: Union[str, os.PathLike], held: Optional[RootsLock] = None) -> Recovery:
    """Finish every pending journal of ``data_root``; the caller holds its lock.

    A journal whose target is another data root also takes that root's lock. An unreadable
    journal is reported and left in place.
    """
    result = Recovery()
    for path in pending_journals(data_root):
        try:
            journal = load_journal(data_root, path)
        except JournalError as exc:
            result.problems.append(str(exc))
            continue
        others = (
            []
            if journal.target_root is None or (held is not None and held.holds(journal.target_root))
            else [journal.target_root]
        )
        try:
            with RootsLock(others):
                notes = finish_journal(journal)
        except OSError as exc:
            result.problems.append(
                f"the interrupted {journal.verb} {journal.op_id} could not be finished: {exc}"
            )
            continue
        result.finished.append(
            f"finished the interrupted {journal.verb} of {count(len(journal.runs), 'run')} ({Path(path).name})"
        )
        result.finished.extend(f"  {note}" for note in notes)
    return result


def recover(data_root: Union[str, os.PathLike]) -> Recovery:
    """Take the data root's lock and finish every pending journal (see :func:`recover_locked`).

    Without a pending journal nothing is touched (not even the lock file is created).
    """
    if not pending_journals(data_root):
        return Recovery()
    with RootsLock([data_root]) as held:
        return recover_locked(data_root, held)
