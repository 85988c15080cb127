"""Where every piece of a run lives: ``<data_root>/<type>/<task>/<YYYY>/<MM>/<DD>/<name>``.

The only code that knows the database's directory layout. Other modules ask a
:class:`RunLayout` for paths, and :func:`iter_run_dirs` to discover runs on disk.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from RLA.naming import DATE_RE, parse_run_name
from RLA.text import count

LOG = "log"
CODE = "code"
CHECKPOINT = "checkpoint"
RESULTS = "results"
REPLAY = "replay"
ARCHIVE_TESTER = "archive_tester"
ARCHIVE = "arc"

#: Data types whose item is a directory named ``<name>``.
DIR_TYPES: Tuple[str, ...] = (LOG, CODE, CHECKPOINT, RESULTS, REPLAY)
#: Every data type of a run (``archive_tester`` holds ``<name>.json``).
DATA_TYPES: Tuple[str, ...] = DIR_TYPES + (ARCHIVE_TESTER,)
#: Data types every run has from its creation (``log_files_gen`` makes them all, the
#: original project made log and code): a run without one of these is a *fragment*.
CORE_TYPES: Tuple[str, ...] = (LOG, CODE)
#: Old data types of the original, still recognised when reading.
LEGACY_TYPES: Tuple[str, ...] = ("tmp_data", "hyperparameter")

RUN_INFO_FILE = "run.json"
PROGRESS_CSV = "progress.csv"
TB_DIR = "tb"
TRASH = ".trash"
INDEX_DB = ".rla_index.sqlite"
#: The intent journals and the lock of run operations (see :mod:`RLA.ops.journal`).
JOURNAL_DIR = ".rla-journal"

_REL_RE = re.compile(rf"^(?P<task>.+)/(?P<date>{DATE_RE})/(?P<name>[^/]+)$")


@dataclass(frozen=True)
class RunLayout:
    """The paths of one run.

    Args:
        data_root: the database root.
        task: the task (table) name.
        date: ``YYYY/MM/DD``.
        name: the run directory name (``HH-MM-SS-ffffff_ip_&k=v``).
        archived: whether the run lives under ``arc/``.
    """

    data_root: Path
    task: str
    date: str
    name: str
    archived: bool = False

    @property
    def relative(self) -> str:
        """``<task>/<YYYY>/<MM>/<DD>/<name>``: the same under every data type."""
        return f"{self.task}/{self.date}/{self.name}"

    @property
    def index(self) -> str:
        """``<task>/<YYYY>/<MM>/<DD>/<HH-MM-SS-ffffff>``."""
        parsed = parse_run_name(self.name)
        time = parsed.time if parsed else self.name
        return f"{self.task}/{self.date}/{time}"

    @property
    def record_date(self) -> str:
        """``YYYY/MM/DD/HH-MM-SS-ffffff`` (the original's record date)."""
        return self.index[len(self.task) + 1 :]

    def type_root(self, data_type: str) -> Path:
        """``<data_root>[/arc]/<data_type>``."""
        return type_root(self.data_root, data_type, self.archived)

    def path(self, data_type: str) -> Path:
        """The run's directory (or, for ``archive_tester``, JSON file) of ``data_type``."""
        if data_type == ARCHIVE_TESTER:
            return self.type_root(ARCHIVE_TESTER) / self.task / self.date / f"{self.name}.json"
        return self.type_root(data_type) / self.task / self.date / self.name

    @property
    def log_dir(self) -> Path:
        return self.path(LOG)

    @property
    def code_dir(self) -> Path:
        return self.path(CODE)

    @property
    def checkpoint_dir(self) -> Path:
        return self.path(CHECKPOINT)

    @property
    def results_dir(self) -> Path:
        return self.path(RESULTS)

    @property
    def replay_dir(self) -> Path:
        return self.path(REPLAY)

    @property
    def archive_tester_file(self) -> Path:
        return self.path(ARCHIVE_TESTER)

    @property
    def run_info_file(self) -> Path:
        return self.log_dir / RUN_INFO_FILE

    def existing_paths(self) -> Dict[str, Path]:
        """Every data type of this run that exists on disk (legacy ``.pkl`` state included)."""
        found: Dict[str, Path] = {}
        for data_type in DATA_TYPES + LEGACY_TYPES:
            candidate = self.path(data_type)
            if candidate.exists():
                found[data_type] = candidate
            elif data_type == ARCHIVE_TESTER:
                pkl = candidate.with_suffix(".pkl")
                if pkl.exists():
                    found[data_type] = pkl
        return found

    def moved(
        self, data_root: Optional[Path] = None, task: Optional[str] = None, archived: Optional[bool] = None
    ) -> "RunLayout":
        """The same run under another root, task or archive flag."""
        return RunLayout(
            Path(data_root) if data_root is not None else self.data_root,
            task if task is not None else self.task,
            self.date,
            self.name,
            self.archived if archived is None else archived,
        )

    @classmethod
    def from_path(cls, data_root: os.PathLike, path: os.PathLike) -> "RunLayout":
        """Recover the layout of a run from any of its data-type paths."""
        root = Path(data_root)
        rel = Path(path).relative_to(root).as_posix()
        archived = rel.startswith(ARCHIVE + "/")
        if archived:
            rel = rel[len(ARCHIVE) + 1 :]
        data_type, _, rest = rel.partition("/")
        if data_type == ARCHIVE_TESTER:
            rest = re.sub(r"\.(json|pkl)$", "", rest)
        match = _REL_RE.match(rest)
        if not match or parse_run_name(match["name"]) is None:
            raise ValueError(f"{path} is not a run path under {root}")
        return cls(root, match["task"], match["date"], match["name"], archived)


def check_task(task: object, what: str = "task") -> str:
    """Return ``task`` when it is a relative path of plain components (``a`` or ``a/b``).

    Raises:
        UnsafePathError: ``..``, ``.``, an absolute path, an empty component (``a//b``,
            ``a/``), a control character, or a task starting with ``arc:`` (the query index
            keys an archived run ``arc:<task>/...``, so such a task would pass for another run).
    """
    from RLA.safe_paths import UnsafePathError, check_relative

    check_relative(task, what)
    if str(task).startswith(ARCHIVE + ":"):
        raise UnsafePathError(
            f"The {what} {task!r} is refused: it spells the index key of an archived run",
            expected=f"a {what} that does not start with '{ARCHIVE}:'",
            found=repr(task),
            fix="rename the task",
        )
    return str(task)


def check_layout(run: RunLayout) -> RunLayout:
    """Return ``run`` when its task, date and name are safe path parts.

    A layout built from user text (a task like ``..``) would reach another data type's
    folder or leave the data root; every operation checks its runs here first.

    Raises:
        UnsafePathError: a bad task, a date that is not ``YYYY/MM/DD`` or a bad name.
    """
    from RLA.safe_paths import UnsafePathError, check_name

    check_task(run.task)
    check_name(run.name, "run name")
    if not _DAY_RE.fullmatch(run.date):
        raise UnsafePathError(
            f"The run date {run.date!r} is refused",
            expected="YYYY/MM/DD",
            found=repr(run.date),
            fix="name the run by its index",
        )
    return run


def type_root(data_root: os.PathLike, data_type: str, archived: bool = False) -> Path:
    """``<data_root>[/arc]/<data_type>``: where the runs of one data type live."""
    base = Path(data_root)
    return base / ARCHIVE / data_type if archived else base / data_type


_DAY_RE = re.compile(DATE_RE)
_STATE_SUFFIX_RE = re.compile(r"\.(json|pkl)$")


def day_of(parts: List[str]) -> Optional[Tuple[str, str]]:
    """``(task, "YYYY/MM/DD")`` when the path parts below a type root name a day directory
    (``<task...>/<YYYY>/<MM>/<DD>``, whose children are runs), else None."""
    if len(parts) >= 4 and _DAY_RE.fullmatch("/".join(parts[-3:])):
        return "/".join(parts[:-3]), "/".join(parts[-3:])
    return None


def run_name_of(entry: str, data_type: str) -> Optional[str]:
    """The run name of a day directory's entry, or None if the entry is not a run.

    ``archive_tester`` holds ``<name>.json`` (or a legacy ``.pkl``) files; the other data
    types hold ``<name>`` directories. Hidden entries are never runs.
    """
    if entry.startswith("."):
        return None
    if data_type == ARCHIVE_TESTER:
        if not _STATE_SUFFIX_RE.search(entry):
            return None
        entry = _STATE_SUFFIX_RE.sub("", entry)
    return entry if parse_run_name(entry) is not None else None


def iter_run_dirs(
    data_root: os.PathLike, data_type: str = LOG, task: Optional[str] = None, archived: bool = False
) -> Iterator[RunLayout]:
    """Yield every run found under ``<data_root>/<data_type>`` (optionally one task).

    Tasks may contain ``/``; a run is any ``.../<YYYY>/<MM>/<DD>/<name>`` whose name parses.
    Hidden entries (``.trash``, temp files) are skipped.

    Raises:
        UnsafePathError: ``task`` is not a plain relative path (see :func:`check_task`).
    """
    if task is not None:
        check_task(task)
    root = Path(data_root)
    base = type_root(root, data_type, archived)
    start = base / task if task else base
    if not start.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(start):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        day = day_of(Path(dirpath).relative_to(base).as_posix().split("/"))
        if day is not None:
            entries = sorted(filenames) if data_type == ARCHIVE_TESTER else dirnames
            for entry in entries:
                name = run_name_of(entry, data_type)
                if name is not None:
                    yield RunLayout(root, day[0], day[1], name, archived)
            dirnames[:] = []  # runs are leaves of the walk


def check_selector(selector: object, what: str = "run") -> str:
    """A run selector (index, prefix or glob) without a trailing ``/``, checked like a path.

    Raises:
        UnsafePathError: ``..``, an absolute path, an empty component or a control character.
    """
    from RLA.safe_paths import check_relative

    text = selector.strip().rstrip("/") if isinstance(selector, str) else selector
    check_relative(text, what)
    return str(text)


def find_runs(
    data_root: os.PathLike,
    selector: str,
    task: Optional[str] = None,
    data_type: str = LOG,
    archived: bool = False,
) -> List[RunLayout]:
    """Runs whose index or ``<YYYY>/<MM>/<DD>/<name>`` matches ``selector``.

    ``selector`` may be a full index (``task/YYYY/MM/DD/HH-MM-SS-ffffff``), a record date
    (``YYYY/MM/DD/HH-MM-SS-ffffff``), any prefix of ``YYYY/MM/DD/<name>``, or a glob on it
    (the original's "regex"). Runs are looked up under every data type when none is found
    under ``data_type`` (logs may be missing for a run that only has a checkpoint).
    """
    import fnmatch

    selector = check_selector(selector)
    if task is not None:
        check_task(task)
    if task is None:
        # A full index carries its task: "<task>/<YYYY>/<MM>/<DD>/..."
        match = re.match(rf"^(?P<task>.+?)/(?P<rest>{DATE_RE}(?:/.*)?)$", selector)
        if match:
            task, selector = match["task"], match["rest"]
    has_glob = any(ch in selector for ch in "*?[")
    found: Dict[str, RunLayout] = {}
    types = [data_type] + [t for t in DATA_TYPES if t != data_type]
    for kind in types:
        for run in iter_run_dirs(data_root, kind, task=task, archived=archived):
            # Match "<YYYY>/<MM>/<DD>/<name>" and, for selectors naming the task, the whole
            # "<task>/<YYYY>/<MM>/<DD>/<name>" (e.g. a prefix like "demo_task/2026/11").
            hit = False
            for rel in (f"{run.date}/{run.name}", run.relative):
                if has_glob:
                    hit = fnmatch.fnmatchcase(rel, selector) or fnmatch.fnmatchcase(rel, selector + "*")
                else:
                    hit = rel.startswith(selector)
                if hit:
                    break
            if hit:
                found.setdefault(run.relative, run)
        if found:
            break
    return sorted(found.values(), key=lambda r: r.relative)


def find_run(
    data_root: os.PathLike, selector: str, task: Optional[str] = None, archived: bool = False
) -> RunLayout:
    """The one run matching ``selector`` (see :func:`find_runs`).

    Raises:
        RunNotFoundError: no run or several runs match.
    """
    from RLA.errors import RunNotFoundError

    runs = find_runs(data_root, selector, task=task, archived=archived)
    where = f"{data_root}" + (f" (task {task!r})" if task else "")
    if not runs:
        raise RunNotFoundError(
            f"No run matches {selector!r} in {where}",
            expected="an index like 'task/YYYY/MM/DD/HH-MM-SS-ffffff' or a unique "
            "prefix/glob of 'YYYY/MM/DD/<name>'",
            found="no matching run",
            fix="run `rla list` to see the runs",
        )
    if len(runs) > 1:
        shown = ", ".join(r.index for r in runs[:5]) + (" ..." if len(runs) > 5 else "")
        raise RunNotFoundError(
            f"{count(len(runs), 'run')} match {selector!r} in {where}",
            expected="exactly one run",
            found=shown,
            fix="give a longer prefix or the full index",
        )
    return runs[0]
