"""Shared CLI plumbing: data-root resolution, common options, run selection, prompts, bars.

Data root: ``--data-root`` (a folder, or ``s3://`` / ``sftp://`` / ``file://``: see
:mod:`RLA.sync.remote_root`), else ``$RLA_DATA_ROOT``, else the folder of the nearest
``rla_config.yaml`` upward from the current directory (or its ``DATA_ROOT`` key, relative
to that folder).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple, TypeVar

from RLA.errors import ConfigError, RLAError, RunNotFoundError
from RLA.text import count

DATA_ROOT_ENV = "RLA_DATA_ROOT"
#: Progress bars appear from this many items on.
BAR_THRESHOLD = 20
T = TypeVar("T")


def resolve_data_root(
    explicit: Optional[str] = None,
    cwd: Optional[os.PathLike] = None,
    new_ok: bool = False,
    files: bool = True,
) -> Path:
    """Find the data root (see the module docstring).

    Args:
        new_ok: return the ``DATA_ROOT`` of an rla_config.yaml even when that folder does
            not exist yet (a new project before its first run: ``rla list`` shows 0 runs).
        files: for a URL, bring the runs' curves and logs into the cache too (``False``:
            only what listing runs needs; an object store's catalog answers it).

    Raises:
        ConfigError: nothing names a data root, or the named folder does not exist.
    """
    if explicit and "://" in explicit:
        return _remote_data_root(explicit, cwd, files)
    if explicit:
        root, origin = Path(explicit).expanduser(), "--data-root"
    elif os.environ.get(DATA_ROOT_ENV):
        root, origin = Path(os.environ[DATA_ROOT_ENV]).expanduser(), f"${DATA_ROOT_ENV}"
    else:
        from RLA.config import find_config, read_yaml

        config = find_config(cwd)
        if config is None:
            raise ConfigError(
                "No data root given",
                expected="--data-root DIR, $RLA_DATA_ROOT, or an "
                "rla_config.yaml in the current folder or a parent",
                found=f"none of them (searched upward from {Path(cwd or Path.cwd()).resolve()})",
                fix="pass --data-root or run `rla init` in your project",
            )
        raw = read_yaml(config) or {}
        data_root = raw.get("DATA_ROOT") if isinstance(raw, dict) else None
        if data_root is not None and not isinstance(data_root, str):
            raise ConfigError(
                f"{config}: key DATA_ROOT has the wrong type",
                expected="a path string",
                found=repr(data_root),
                fix="write DATA_ROOT: ./data",
            )
        root = (config.parent / data_root) if data_root else config.parent
        origin = str(config)
        if new_ok and not root.exists():
            return root
    if not root.is_dir():
        raise ConfigError(
            f"The data root {root} does not exist",
            expected="an existing folder",
            found=f"{root} (from {origin})",
            fix="check the path or create the folder",
        )
    return root


def _remote_data_root(url: str, cwd: Optional[os.PathLike] = None, files: bool = True) -> Path:
    """``s3://`` / ``sftp://`` / ``file://``: the local cache of the store, refreshed now
    (endpoint, profile or SSH key from the nearest rla_config.yaml's REMOTE_SETTING)."""
    from RLA.config import find_config, load_config
    from RLA.sync.remote_root import open_data_root

    config = find_config(cwd)
    base = load_config(config).remote if config is not None else None
    return open_data_root(
        url, base=base, warn=lambda message: print(f"warning: {message}", file=sys.stderr), files=files
    )


def add_data_root(parser: argparse.ArgumentParser) -> None:
    """``--data-root``."""
    parser.add_argument(
        "--data-root",
        "--data_root",
        dest="data_root",
        metavar="DIR",
        help=f"database root (default: ${DATA_ROOT_ENV}, else the folder of the nearest rla_config.yaml)",
    )


def add_one_run(parser: argparse.ArgumentParser) -> None:
    """``RUN``, ``--task``, ``--archived`` and ``--data-root``: the options that name one run."""
    parser.add_argument("run", metavar="RUN", help="run index or unique prefix/glob of YYYY/MM/DD/<name>")
    add_data_root(parser)
    parser.add_argument("--task", help="task (when RUN has none)")
    parser.add_argument("--archived", action="store_true", help="look under arc/")


def add_selection(parser: argparse.ArgumentParser, positional: bool = True) -> None:
    """``RUN...`` (optional), ``--task``, ``--regex``, ``--where``, ``--since/--until``, ``--status``."""
    add_data_root(parser)
    if positional:
        parser.add_argument(
            "runs",
            nargs="*",
            metavar="RUN",
            help="run index (task/YYYY/MM/DD/HH-MM-SS-ffffff) or a unique prefix/glob of YYYY/MM/DD/<name>",
        )
    parser.add_argument("--task", "--task_table_name", dest="task", help="task (table) name")
    parser.add_argument(
        "--regex",
        action="append",
        metavar="GLOB",
        help="glob on YYYY/MM/DD/<name>, as the original (repeatable: OR)",
    )
    parser.add_argument(
        "--where",
        metavar="EXPR",
        help="typed filter, e.g. \"algo in ['sac','td3'] and lr >= 1e-4 and last('return') > 100\"",
    )
    parser.add_argument("--since", metavar="DATE", help="runs started on/after DATE (2026/11/01)")
    parser.add_argument("--until", metavar="DATE", help="runs started on/before DATE (inclusive)")
    parser.add_argument(
        "--status",
        action="append",
        choices=["running", "finished", "crashed", "killed", "unknown"],
        help="only runs with this status (repeatable)",
    )


def add_change_options(parser: argparse.ArgumentParser) -> None:
    """``--dry-run`` and ``--yes`` for commands that change the database."""
    parser.add_argument("--dry-run", action="store_true", help="show what would change, change nothing")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")


def has_selector(args: argparse.Namespace) -> bool:
    """Whether any filter narrows the selection (destructive commands require one)."""
    return bool(
        getattr(args, "runs", None)
        or args.task
        or args.regex
        or args.where
        or args.since
        or args.until
        or args.status
    )


def bar(items: Iterable[T], total: int, desc: str) -> Iterable[T]:
    """A tqdm progress bar on stderr for long operations, on a terminal only (plain
    iteration otherwise: a log file or a pipe gets no bar lines)."""
    if total < BAR_THRESHOLD or not sys.stderr.isatty():
        return items
    from tqdm import tqdm

    return tqdm(items, total=total, desc=desc, unit="run", file=sys.stderr, leave=False)


def select(
    args: argparse.Namespace, data_root: Path, archived: Optional[bool] = False, include_broken: bool = False
) -> Any:
    """Turn the common options into a :class:`RLA.query.Selection` (broken runs reported).

    Positional RUN selectors (indexes, prefixes, globs) and ``--regex`` globs are OR-ed; the
    other filters must all hold.
    """
    from RLA.query import select_runs

    check_selection_args(args)
    selection = select_runs(
        data_root,
        task=args.task,
        regex=(args.regex or []) + list(getattr(args, "runs", []) or []),
        where=args.where,
        since=args.since,
        until=args.until,
        status=args.status,
        archived=archived,
        include_broken=include_broken,
        progress=lambda items, n: bar(items, n, "indexing"),
        verify=bool(getattr(args, "verify", False)),
    )
    report_skipped(selection.skipped, listed=include_broken)
    report_fragments(selection.runs, data_root)
    return selection


def check_selection_args(args: argparse.Namespace) -> None:
    """Refuse ``--task``, RUN and ``--regex`` values with ``..``, a leading ``/`` or an empty
    component before anything is read (``--task ..`` would reach every data type's folder).

    Raises:
        UnsafePathError: the first bad value, named.
    """
    from RLA.layout import check_selector, check_task

    if getattr(args, "task", None) is not None:
        check_task(args.task)
    for selector in list(getattr(args, "runs", None) or []) + list(getattr(args, "regex", None) or []):
        check_selector(selector, "run selector")


def report_fragments(rows: Iterable[Any], data_root: Path) -> None:
    """A warning per selected run without ``log/`` or ``code/`` (a fragment, see
    :data:`RLA.layout.CORE_TYPES`), and one for pending journals of interrupted operations
    (``rla fsck`` tells more). One ``stat`` per run (two without ``run.json``)."""
    check_fragments(
        ((row.layout.archived, row.layout.relative, bool(row.record.info), row.index) for row in rows),
        data_root,
    )


def check_fragments(runs: Iterable[Tuple[bool, str, bool, str]], data_root: Path) -> None:
    """:func:`report_fragments` for ``(archived, relative path, has run.json, index)`` items."""
    from RLA.layout import CORE_TYPES, LOG, type_root
    from RLA.ops.journal import pending_journals
    from RLA.query.tree import layout_of
    from RLA.terminal import escape

    roots: Dict[Tuple[bool, str], str] = {}  # type roots as text: pathlib per run costs more than the stat
    for archived, relative, has_info, index in runs:
        missing = []
        for data_type in CORE_TYPES:
            if data_type == LOG and has_info:
                continue
            root = roots.get((archived, data_type))
            if root is None:
                root = roots[archived, data_type] = os.path.join(
                    type_root(data_root, data_type, archived), ""
                )
            if not os.path.isdir(root + relative):
                missing.append(data_type)
        if missing:
            layout = layout_of(Path(data_root), ("arc:" if archived else "") + relative)
            kinds = ", ".join(sorted(layout.existing_paths()))
            print(
                f"warning: run {escape(index)} is a fragment: only {kinds} (no {'/, '.join(missing)}/); "
                "`rla fsck` lists fragments",
                file=sys.stderr,
            )
    pending = pending_journals(data_root)
    if pending:
        print(
            f"warning: {count(len(pending), 'interrupted operation')} pending in {data_root}; "
            "`rla fsck --repair` (or the next delete/archive/migrate) finishes them",
            file=sys.stderr,
        )


def report_skipped(skipped: Iterable[Any], listed: bool = False) -> None:
    """One ``warning: skipped <run>: <reason>`` line on stderr per damaged run (escaped).

    Args:
        skipped: ``(index, reason)`` pairs.
        listed: the runs are shown anyway (``--include-broken``): say "damaged" instead.
    """
    from RLA.terminal import escape

    for index, problem in skipped:
        if listed:
            print(f"warning: damaged {escape(index)}: {escape(problem)} (listed anyway)", file=sys.stderr)
        else:
            print(f"warning: skipped {escape(index)}: {escape(problem)}", file=sys.stderr)


def describe_filters(args: argparse.Namespace) -> str:
    """The filters as the user typed them, for "nothing matched" messages."""
    parts = [f"RUN {r!r}" for r in getattr(args, "runs", []) or []]
    for name in ("task", "regex", "where", "since", "until", "status"):
        value = getattr(args, name, None)
        if value:
            parts.append(f"--{name} {value!r}")
    return ", ".join(parts) or "no filter"


def require_runs(selection: Any, args: argparse.Namespace, data_root: Path) -> List[Any]:
    """The selected runs, or :class:`RunNotFoundError` for an empty selection."""
    if not selection.runs:
        raise RunNotFoundError(
            f"No run matches {describe_filters(args)} in {data_root}",
            expected="at least one run",
            found=f"0 of {count(selection.scanned, 'run')}",
            fix="widen the filters; `rla list` shows the runs",
        )
    return list(selection.runs)


def confirm(question: str, args: argparse.Namespace) -> bool:
    """Ask ``question`` unless ``--yes``; refuse without a terminal.

    Raises:
        RLAError: stdin is not interactive and ``--yes`` was not given.
    """
    if getattr(args, "yes", False):
        return True
    if not sys.stdin or not sys.stdin.isatty():
        raise RLAError(
            "Confirmation needed",
            expected="--yes (or an interactive terminal)",
            found="no terminal to ask on",
            fix="re-run with --yes, or --dry-run to preview",
        )
    answer = input(f"{question} [y/N] ").strip().lower()
    return answer in ("y", "yes")


def finish_interrupted(data_root: Path, args: argparse.Namespace) -> None:
    """Before a change: finish the operations a crash interrupted (not on ``--dry-run``,
    which changes nothing), so the runs are selected whole."""
    if getattr(args, "dry_run", False):
        return
    from RLA.ops import recover

    for line in recover(data_root).lines():
        print(line, file=sys.stderr)


def run_plan(plan: Any, args: argparse.Namespace, verb: str) -> int:
    """Print a plan, stop on ``--dry-run``, confirm, apply with a bar, report per run."""
    print(plan.describe())
    if args.dry_run:
        print("dry run: nothing changed")
        return 0
    if not plan.ready:
        print(f"nothing to {verb}", file=sys.stderr)
        return 1
    if not confirm(f"{verb} {count(len(plan.ready), 'run')}?", args):
        print("aborted: nothing changed")
        return 1
    results = plan.apply(progress=lambda items, n: bar(items, n, verb))
    for line in plan.recovery.lines() if getattr(plan, "recovery", None) else []:
        print(line, file=sys.stderr)
    failed = [r for r in results if not r.result.startswith("done")]
    for item in results:
        if item.result != "done":
            print(f"{item.index}: {item.result}", file=sys.stderr)
    done = len(results) - len(failed)
    print(f"{verb}: {count(done, 'run')} done" + (f", {len(failed)} not done" if failed else ""))
    return 0 if not failed else 1
