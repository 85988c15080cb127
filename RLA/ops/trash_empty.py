"""Empty the trash: remove stamp folders of ``<data_root>/.trash/`` for good.

The unit is a stamp folder (what one deletion moved there), optionally only those older than
some days. Removal goes through the operations' machinery: under the data root's lock, after
finishing interrupted operations, an intent journal of ``purge`` steps is written first, and
each folder is renamed to a hidden to-be-deleted name before it is removed
(:func:`RLA.ops.steps.purge`), so a kill at any point is finished by the next operation or
``rla fsck --repair``, and a half-removed folder is never listed as a trashed run.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Union

from RLA.errors import RLAError
from RLA.layout import TRASH
from RLA.ops.faults import fault_point
from RLA.ops.guard import check_path
from RLA.ops.journal import Journal, JournalRun, JournalStep, new_op_id
from RLA.ops.lock import RootsLock
from RLA.ops.recover import Recovery, recover_locked
from RLA.ops.runner import forward_run
from RLA.ops.trash import stamp_folders, stamp_time
from RLA.text import count, plural


def _age_days(folder: Path, now: _dt.datetime) -> float:
    """Days since the stamp folder was made (its name's time, else its mtime)."""
    when = stamp_time(folder.name)
    if when is None:
        when = _dt.datetime.fromtimestamp(os.lstat(folder).st_mtime)
    return (now - when).total_seconds() / 86400.0


@dataclass
class EmptyPlan:
    """The stamp folders to remove; :meth:`describe` first, then :meth:`apply`."""

    data_root: Path
    older_than: Optional[float] = None
    now: Optional[_dt.datetime] = None
    folders: List[Path] = field(default_factory=list)
    op_id: str = field(default_factory=new_op_id)
    recovery: Optional[Recovery] = None

    def refresh(self) -> None:
        """Pick the stamp folders from the disk as it is now."""
        now = self.now or _dt.datetime.now()
        self.folders = [
            folder
            for folder in stamp_folders(self.data_root)
            if self.older_than is None or _age_days(folder, now) > self.older_than
        ]
        for folder in self.folders:
            check_path(self.data_root, folder, "trash folder")

    def describe(self) -> str:
        lines = [f"remove {TRASH}/{folder.name}" for folder in self.folders]
        age = (
            f" older than {self.older_than:g} {plural(self.older_than, 'day')}"
            if self.older_than is not None
            else ""
        )
        lines.append(f"{count(len(self.folders), 'trash folder')}{age} to remove for good")
        return "\n".join(lines)

    def apply(self) -> List[str]:
        """Remove the folders (chosen again under the lock); returns their names."""
        with RootsLock([self.data_root]) as held:
            self.recovery = recover_locked(self.data_root, held)
            self.refresh()
            if not self.folders:
                return []
            journal = Journal(self.op_id, "purge", "empty the trash", self.data_root)
            for folder in self.folders:
                rel = Path(os.path.relpath(folder, self.data_root)).as_posix()
                journal.runs.append(JournalRun(rel, [JournalStep(TRASH, rel, None)]))
            journal.write()
            fault_point("journal-written")
            for run in journal.runs:
                forward_run(journal, run)
            fault_point("before-journal-removed")
            journal.remove()
        return [folder.name for folder in self.folders]


def plan_empty(
    data_root: Union[str, os.PathLike], older_than: Optional[float] = None, now: Optional[_dt.datetime] = None
) -> EmptyPlan:
    """Plan emptying the trash (every stamp folder, or those older than ``older_than`` days).

    Raises:
        RLAError: a negative ``older_than``.
        UnsafePathError: ``.trash`` or a folder in it is a link.
    """
    if older_than is not None and (isinstance(older_than, bool) or not older_than >= 0):
        raise RLAError(
            "Bad --older-than",
            expected="a number of days >= 0",
            found=repr(older_than),
            fix="e.g. --older-than 30",
        )
    plan = EmptyPlan(Path(data_root), None if older_than is None else float(older_than), now)
    plan.refresh()
    return plan
