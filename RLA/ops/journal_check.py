"""What a journal read back from disk may name: the data-type paths of its runs, nothing else.

A journal is read by the next operation and by ``rla fsck --repair``, which then move, copy
or delete what it names. Anyone who can write into ``.rla-journal/`` could otherwise make a
repair delete ``log/`` whole, move a run into ``.rla-journal/`` or through a link, or write
into any folder named as a target root. So every step must be exactly a path the operations
write:

* a source is a run's data-type path ``[arc/]<type>/<task>/<YYYY>/<MM>/<DD>/<name>`` (or the
  same inside a trash folder ``.trash/<stamp>/``; for ``archive_tester`` the ``.json`` or
  ``.pkl`` file), of the step's data type, the same run for every step of a journal run,
  whose index is the run's; or, for a purge of the trash, a whole ``.trash/<stamp>`` folder;
* a destination is the same data type of the journal run's target (move, copy), the
  source's place under ``.trash/<op-id>/`` (trash), or nothing (purge);
* no path passes a link (only a data-type folder may be one, see :mod:`RLA.ops.guard`);
* a target root other than the data root must hold the operation's confirmation
  ``<target_root>/.rla-journal/<op-id>.target`` naming this data root (written by the
  operation before its journal), so a journal cannot send runs to a folder of its choosing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

from RLA.errors import RLAError
from RLA.layout import ARCHIVE_TESTER, DATA_TYPES, LEGACY_TYPES, TRASH, RunLayout
from RLA.ops.guard import check_path
from RLA.safe_paths import check_name

if TYPE_CHECKING:
    from RLA.ops.journal import Journal, JournalRun, JournalStep

#: An operation id as :func:`RLA.ops.journal.new_op_id` makes it (it becomes part of file names).
OP_ID_RE = re.compile(r"\d{8}-\d{6}-\d+-[0-9a-f]+")
_STEP_TYPES = frozenset(DATA_TYPES + LEGACY_TYPES)


class JournalPathError(RLAError, ValueError):
    """A journal step names a path no operation writes (see the module docstring)."""


def _refuse(what: str, found: str) -> JournalPathError:
    return JournalPathError(
        f"The journal names {what}",
        expected="the data-type paths of its runs",
        found=found,
        fix="a journal rla did not write: move it out of .rla-journal/ and check the runs it names by hand",
    )


def _rel(path: Union[str, os.PathLike], root: Union[str, os.PathLike]) -> str:
    return Path(os.path.relpath(path, root)).as_posix()


def _layout_of(journal: "Journal", step: "JournalStep") -> Optional[RunLayout]:
    """The run whose ``step.type`` path ``step.src`` is (None: a whole trash folder)."""
    parts = step.src.split("/")
    base = journal.data_root
    if parts[0] == TRASH:
        if len(parts) < 2:
            raise _refuse("the trash itself", step.src)
        base = base / TRASH / check_name(parts[1], "trash folder")
        parts = parts[2:]
        if not parts:
            if journal.action != "purge" or step.data_type != TRASH:
                raise _refuse("a whole trash folder outside a purge of the trash", step.src)
            return None
    if step.data_type not in _STEP_TYPES:
        raise _refuse(f"an unknown data type {step.data_type!r}", step.src)
    try:
        layout = RunLayout.from_path(base, base.joinpath(*parts))
    except ValueError:
        raise _refuse("a path that is not a run's", step.src) from None
    expected = layout.path(step.data_type)
    if step.data_type == ARCHIVE_TESTER and step.src.endswith(".pkl"):
        expected = expected.with_suffix(".pkl")
    if _rel(expected, journal.data_root) != step.src:
        raise _refuse(f"a path that is not the {step.data_type} of a run", step.src)
    return layout


def _expected_dst(journal: "Journal", run: "JournalRun", step: "JournalStep") -> Optional[str]:
    if journal.action == "purge":
        return None
    if journal.action == "trash":
        return f"{TRASH}/{journal.op_id}/{step.src}"
    if run.target is None:
        raise _refuse("a move or copy without a target run", step.src)
    dst = run.target.path(step.data_type)
    if step.src.endswith(".pkl") and dst.suffix == ".json":
        dst = dst.with_suffix(".pkl")
    return _rel(dst, journal.dst_root)


def check_run(journal: "Journal", run: "JournalRun") -> None:
    """Refuse a journal run whose steps are not the data-type paths of one run (see above).

    Raises:
        JournalPathError: the first step that is not.
        UnsafePathError: a step passes a link.
    """
    seen = None
    for step in run.steps:
        layout = _layout_of(journal, step)
        key = (
            None
            if layout is None
            else (layout.data_root, layout.task, layout.date, layout.name, layout.archived)
        )
        if seen is not None and key != seen:
            raise _refuse("the data types of two different runs in one run", step.src)
        seen = key
        if layout is not None and layout.index != run.index:
            raise _refuse(f"a run whose index is not {run.index!r}", step.src)
        if (
            run.target is not None
            and layout is not None
            and (run.target.date, run.target.name) != (layout.date, layout.name)
        ):
            raise _refuse("a target that is another run", f"{run.target.relative} for {layout.relative}")
        if step.dst != _expected_dst(journal, run, step):
            raise _refuse(
                f"a destination that is not where a {journal.action} sends {step.src}", str(step.dst)
            )
        check_path(journal.data_root, journal.src_path(step), "journal source")
        dst = journal.dst_path(step)
        if dst is not None:
            check_path(journal.dst_root, dst, "journal destination")


def check_op_id(op_id: str, file_name: str) -> None:
    """The journal's id is one :func:`new_op_id` makes, and its file is named for it."""
    if not OP_ID_RE.fullmatch(op_id) or file_name != f"{op_id}.json":
        raise _refuse(f"the operation id {op_id!r}", f"in the file {file_name!r}")
