"""Kill trials of run operations: build a database, stop an operation, repair, count damage.

Used by ``test/ops`` and ``bench/kill_ops.py``. A trial forks a child that runs one ``rla``
command (the real CLI code) and is stopped either by SIGKILL at a random time or at a
fault point (:mod:`RLA.ops.faults`); then the repair runs (``rla fsck --repair`` or the
same command again) and :func:`evaluate` compares every run's files with a manifest taken
before: each file must be exactly where the operation's semantics say, whole.
"""

from __future__ import annotations

import datetime as _dt
import errno
import functools
import hashlib
import io
import itertools
import json
import os
import random
import shutil
import signal
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from RLA.layout import ARCHIVE_TESTER, DATA_TYPES, JOURNAL_DIR, LOG, RUN_INFO_FILE, TRASH, RunLayout

TASK, TARGET_TASK = "demo", "moved"
_COPIES = itertools.count()
DEFAULT_RUNS = 4
#: Operation name -> (command line after ``--data-root``, semantics).
OPS: Dict[str, Tuple[List[str], str]] = {
    "delete": (["delete", "--task", TASK, "--yes"], "move"),
    "delete --purge": (["delete", "--task", TASK, "--purge", "--yes"], "purge"),
    "archive": (["archive", "--task", TASK, "--yes"], "move"),
    "archive --copy": (["archive", "--task", TASK, "--copy", "--yes"], "copy"),
    "migrate": (["migrate", "--task", TASK, "--to-task", TARGET_TASK, "--yes"], "copy"),
    "migrate --move": (["migrate", "--task", TASK, "--to-task", TARGET_TASK, "--move", "--yes"], "move"),
}
Manifest = Dict[Tuple[str, str], str]


def make_database(
    root: Path, runs: int = DEFAULT_RUNS, files: int = 3, size: int = 4096, seed: int = 0
) -> List[RunLayout]:
    """``runs`` runs of task ``demo`` with every data type, ``files`` random files in each folder."""
    from RLA.query.testing import make_run

    rng = random.Random(seed)
    made = []
    for i in range(runs):
        run = make_run(
            root,
            task=TASK,
            params={"seed": i},
            curves={"r": [0.0, 1.0]},
            when=_dt.datetime(2026, 11, 1, 10, 0, i),
            types=DATA_TYPES,
        )
        for data_type in DATA_TYPES:
            if data_type == ARCHIVE_TESTER:
                continue
            folder = run.path(data_type) / "sub"
            folder.mkdir(parents=True, exist_ok=True)
            for j in range(files):
                (folder / f"f{j}.bin").write_bytes(rng.randbytes(size))
        made.append(run)
    return made


def _mount_of(path: str) -> Tuple[str, str]:
    """``(mount point, filesystem type)`` of the mount holding ``path`` (from /proc/mounts)."""
    path = os.path.realpath(path)
    best = ("", "")
    try:
        with open("/proc/mounts", encoding="utf-8") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) < 3:
                    continue
                point = fields[1].replace("\\040", " ")
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best[0]):
                    best = (point, fields[2])
    except OSError:
        pass
    return best


def memory_dir(fallback: Path, candidate: str = "/dev/shm", need: int = 256 << 20) -> Path:
    """A folder in RAM for kill trials: ``candidate`` when it is a writable tmpfs with ``need``
    bytes free, else ``fallback``.

    A SIGKILL stops a process, not the machine: what the kernel already did (renames, file
    contents in the page cache) survives it on any filesystem, so the kill trials prove the
    same on a tmpfs, where an fsync costs nothing. Durability across a power cut is proven
    separately by the order of fsync and rename calls (``test/ops/test_durable_order.py``).
    """
    if _mount_of(candidate)[1] != "tmpfs" or not os.access(candidate, os.W_OK | os.X_OK):
        return fallback
    stats = os.statvfs(candidate)
    if stats.f_bavail * stats.f_frsize < need:
        return fallback
    return Path(candidate)


def manifest_of(run: RunLayout) -> Manifest:
    """``(data type, path inside the run's folder) -> sha256`` of every file of ``run``."""
    out: Manifest = {}
    for data_type in DATA_TYPES:
        path = run.path(data_type)
        if path.is_file():
            out[(data_type, "")] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                out[(data_type, file.relative_to(path).as_posix())] = hashlib.sha256(
                    file.read_bytes()
                ).hexdigest()
    return out


def _types(run: RunLayout) -> set:
    return {data_type for data_type in DATA_TYPES if os.path.lexists(run.path(data_type))}


def places(root: Path, run: RunLayout) -> Dict[str, RunLayout]:
    """Every place the run could be after an operation: active, ``arc/``, the target task,
    each trash folder."""
    out = {
        "root": RunLayout(root, run.task, run.date, run.name),
        "arc": RunLayout(root, run.task, run.date, run.name, True),
        "moved": RunLayout(root, TARGET_TASK, run.date, run.name),
    }
    trash = root / TRASH
    for stamp in sorted(trash.iterdir()) if trash.is_dir() else []:
        out[f"trash:{stamp.name}"] = RunLayout(stamp, run.task, run.date, run.name)
    return out


@dataclass
class Outcome:
    """Damage found by :func:`evaluate` (all zero after a good repair)."""

    split: int = 0  # runs with some data types in one place and some in another
    orphaned: int = 0  # places holding a run's data types only partly (fragments)
    lost: int = 0  # files missing or changed where the run is
    leftovers: int = 0  # pending journals, partial copies, to-be-deleted folders
    mixed: int = 0  # 1 when some runs were done and others not (all-or-none broken)
    done: int = 0  # runs that ended where the operation sends them
    interrupted: bool = False  # the stop left a pending journal (it hit the operation itself)
    notes: List[str] = field(default_factory=list)

    @property
    def bad(self) -> bool:
        return bool(self.split or self.orphaned or self.lost or self.leftovers or self.mixed)


def _same(found: Manifest, expected: Manifest, rewritten: bool) -> bool:
    if not rewritten:
        return found == expected
    skip = (LOG, RUN_INFO_FILE)
    return {k: v for k, v in found.items() if k != skip} == {k: v for k, v in expected.items() if k != skip}


def _leftovers(root: Path) -> List[str]:
    found = [p.relative_to(root).as_posix() for p in root.rglob(".rla-*") if p.name != JOURNAL_DIR]
    journals = root / JOURNAL_DIR
    if journals.is_dir():
        found += [f"{JOURNAL_DIR}/{n}" for n in os.listdir(journals) if n.endswith(".json")]
    return found


def evaluate(op: str, root: Path, before: Dict[RunLayout, Manifest]) -> Outcome:
    """Compare the database with the manifests taken before the operation."""
    kind = OPS[op][1]
    dest_place = {
        "delete": "trash",
        "delete --purge": None,
        "archive": "arc",
        "archive --copy": "arc",
        "migrate": "moved",
        "migrate --move": "moved",
    }[op]
    out = Outcome()
    for run, expected in before.items():
        where = {name: layout for name, layout in places(root, run).items() if _types(layout)}
        for name, layout in where.items():
            if _types(layout) != set(DATA_TYPES):
                out.orphaned += 1
                out.notes.append(f"{run.name}: only {sorted(_types(layout))} in {name}")
        at_dest = [n for n in where if dest_place and n.startswith(dest_place)]
        if kind in ("move", "purge") and len(where) > 1:
            out.split += 1
            out.notes.append(f"{run.name}: in {sorted(where)}")
        if kind == "copy" and "root" not in where:
            out.lost += len(expected)
            out.notes.append(f"{run.name}: the source of a copy is gone")
        for name, layout in where.items():
            if not _same(manifest_of(layout), expected, rewritten=name == "moved"):
                out.lost += 1
                out.notes.append(f"{run.name}: files differ in {name}")
            if name == "moved" and _types(layout) == set(DATA_TYPES):
                info = json.loads((layout.log_dir / RUN_INFO_FILE).read_text())
                if info.get("task") != TARGET_TASK:
                    out.lost += 1
                    out.notes.append(f"{run.name}: run.json not rewritten")
        if kind == "move" and not where:
            out.lost += len(expected)
            out.notes.append(f"{run.name}: vanished")
        if (kind == "purge" and not where) or at_dest:
            out.done += 1
    if out.done not in (0, len(before)):
        out.mixed = 1
        out.notes.append(f"{out.done} of {len(before)} runs done")
    left = _leftovers(root)
    out.leftovers = len(left)
    out.notes += [f"left: {item}" for item in left]
    return out


@functools.lru_cache(maxsize=1)
def cli_parser() -> Any:
    """The ``rla`` parser, built once (``cli_parser.cache_clear()`` to rebuild): building it
    is a fair part of a small command's time, and every forked child inherits it."""
    from rla_scripts.cli import build_parser

    return build_parser()


def _quiet_main(argv: Sequence[str]) -> int:
    from rla_scripts.cli import main

    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return main(list(argv), parser=cli_parser())


def warm_up(template: Path) -> None:
    """Import what the commands use (once, in the parent), so that a forked child spends
    its time on the operation, not on imports."""
    import pandas  # noqa: F401
    import tqdm  # noqa: F401

    import RLA.manager.run_info  # noqa: F401
    import rla_scripts.cli  # noqa: F401
    from rla_scripts.commands import archive, delete, fsck, migrate  # noqa: F401

    _quiet_main(["list", "--data-root", os.fspath(template), "--format", "csv"])
    for path in template.rglob(".rla_index.sqlite*"):
        path.unlink()


def fork_op(root: Path, op: str, fault: Optional[str] = None) -> int:
    """Fork a child running ``op`` on ``root`` (stopped at ``fault`` if given); returns its pid."""
    return fork_cli(root, OPS[op][0], fault)


def fork_cli(root: Path, argv: Sequence[str], fault: Optional[str] = None) -> int:
    """Fork a child running ``rla <argv> --data-root root``; returns its pid."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller
        status = 1
        try:
            from RLA.ops.faults import COUNTER, FAULT_ENV

            COUNTER.reset()
            if fault:
                os.environ[FAULT_ENV] = fault
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            status = _quiet_main(list(argv) + ["--data-root", os.fspath(root)])
        finally:
            os._exit(status)
    return pid


def wait(pid: int, timeout: float = 60.0) -> int:
    """Wait for a child (SIGKILL after ``timeout``); returns its wait status."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            return os.waitpid(pid, 0)[1]
        time.sleep(0.002)


def measure(template: Path, work: Path, op: str, reps: int = 3) -> Tuple[float, float]:
    """Median seconds from the fork to the journal's appearance (the moves start) and to
    the end of the operation, in forked children on fresh copies."""
    starts, ends = [], []
    for _ in range(reps):
        root = fresh(template, work)
        journals = root / JOURNAL_DIR
        start = time.perf_counter()
        pid = fork_op(root, op)
        seen = None
        while True:
            if seen is None and journals.is_dir() and any(n.endswith(".json") for n in os.listdir(journals)):
                seen = time.perf_counter() - start
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.0005)
        end = time.perf_counter() - start
        starts.append(seen if seen is not None else end)
        ends.append(end)
    return sorted(starts)[len(starts) // 2], sorted(ends)[len(ends) // 2]


def kill_times(rng: random.Random, window: Tuple[float, float], kills: int) -> List[float]:
    """Kill delays: half uniform over the whole command (selection included), half uniform
    over the moves (from the journal's appearance to 1.2 x the end)."""
    start, end = window
    return [rng.uniform(0, 1.2 * end) if i % 2 else rng.uniform(0.9 * start, 1.2 * end) for i in range(kills)]


def cross_device(real: Callable[[Path, Path], None]) -> Callable[[Path, Path], None]:
    """A stand-in for :func:`RLA.ops.steps._rename` as on two filesystems: only renames
    within one folder work, any other raises ``EXDEV`` (a data-type folder linked to another
    disk), so moves copy through the partial name and remove their source."""

    def rename(src: Path, dst: Path) -> None:
        if os.path.dirname(os.fspath(src)) != os.path.dirname(os.fspath(dst)):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real(src, dst)

    return rename


def fresh(template: Path, work: Path) -> Path:
    """A new copy of the template database under ``work`` (a new path each time, the last
    one removed: no process may mistake it for the previous copy)."""
    for old in work.glob("db-*"):
        shutil.rmtree(old)
    root = work / f"db-{next(_COPIES)}"
    shutil.copytree(template, root, symlinks=True)
    return root


def repair(root: Path, op: str, how: str) -> None:
    """``fsck``: ``rla fsck --repair``; ``rerun``: the same command again (in a child)."""
    if how == "fsck":
        _quiet_main(["fsck", "--repair", "--data-root", os.fspath(root)])
    else:
        wait(fork_op(root, op))


def kill_trial(template: Path, work: Path, op: str, delay: float, how: str) -> Outcome:
    """One trial: fresh database, the op SIGKILLed after ``delay`` seconds, repair, evaluate."""
    root = fresh(template, work)
    before = {run: manifest_of(run) for run in _runs(root)}
    pid = fork_op(root, op)
    time.sleep(delay)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    wait(pid)
    interrupted = bool(_leftovers(root))
    repair(root, op, how)
    outcome = evaluate(op, root, before)
    outcome.interrupted = interrupted
    return outcome


def fault_trial(template: Path, work: Path, op: str, fault: str, how: str) -> Tuple[Outcome, int]:
    """One trial stopped at a fault point; returns the outcome and the child's wait status."""
    root = fresh(template, work)
    before = {run: manifest_of(run) for run in _runs(root)}
    status = wait(fork_op(root, op, fault))
    repair(root, op, how)
    return evaluate(op, root, before), status


def _runs(root: Path) -> List[RunLayout]:
    from RLA.layout import iter_run_dirs

    return list(iter_run_dirs(root, LOG, task=TASK))
