"""``rla sync push|pull``: send runs to the main node or fetch them from it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import List, Optional

from RLA.errors import ConfigError, RLAError, RunNotFoundError
from rla_scripts.commands import _common

_TYPES = ("log", "code", "checkpoint", "results", "replay", "archive_tester")


def register(subparsers: "argparse._SubParsersAction") -> None:
    """Add ``rla sync push`` and ``rla sync pull``."""
    parser = subparsers.add_parser(
        "sync",
        help="push runs to the main node or pull them from it",
        description="Incremental, resumable sync with the main node configured "
        "in REMOTE_SETTING of rla_config.yaml.",
    )
    actions = parser.add_subparsers(dest="sync_action", metavar="ACTION")
    for name, doc in (
        ("push", "send the selected local runs to the main node"),
        ("pull", "download the selected runs from the main node"),
    ):
        sub = actions.add_parser(name, help=doc, description=doc)
        if name == "push":
            _common.add_selection(sub)
        else:
            _add_pull_selection(sub)
        _common.add_change_options(sub)
        sub.add_argument(
            "--config",
            metavar="FILE",
            help="rla_config.yaml with REMOTE_SETTING (default: the nearest one upward "
            "from the data root, then from the current folder)",
        )
        sub.add_argument(
            "--types",
            metavar="T1,T2",
            help=f"data types to sync (default: REMOTE_SETTING.sync_types); any of {', '.join(_TYPES)}",
        )
        sub.add_argument(
            "--max-file-size",
            metavar="SIZE",
            help="skip (with a warning) files larger than SIZE bytes, e.g. 104857600 or 100M "
            "(default: REMOTE_SETTING.max_file_size; none: no cap)",
        )
        sub.set_defaults(func=_push if name == "push" else _pull)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _add_pull_selection(parser: argparse.ArgumentParser) -> None:
    """What pull can select by: names and times (the main node's runs are not read before
    they are fetched). ``--where`` and ``--status`` are parsed only to explain that."""
    _common.add_data_root(parser)
    parser.add_argument(
        "runs",
        nargs="*",
        metavar="RUN",
        help="run index (task/YYYY/MM/DD/HH-MM-SS-ffffff) or a unique prefix/glob of YYYY/MM/DD/<name>",
    )
    parser.add_argument("--task", "--task_table_name", dest="task", help="task (table) name")
    parser.add_argument(
        "--regex", action="append", metavar="GLOB", help="glob on YYYY/MM/DD/<name> (repeatable: OR)"
    )
    parser.add_argument("--since", metavar="DATE", help="runs started on/after DATE (2026/11/01)")
    parser.add_argument("--until", metavar="DATE", help="runs started on/before DATE (inclusive)")
    parser.add_argument("--where", help=argparse.SUPPRESS)
    parser.add_argument("--status", action="append", help=argparse.SUPPRESS)


def _types(args: argparse.Namespace) -> Optional[List[str]]:
    if not args.types:
        return None
    types = [t.strip() for t in args.types.split(",") if t.strip()]
    bad = [t for t in types if t not in _TYPES]
    if bad:
        raise ConfigError(
            f"Unknown data type {bad[0]!r} in --types",
            expected=f"any of {', '.join(_TYPES)}",
            found=args.types,
            fix="write e.g. --types log,code,checkpoint",
        )
    return types


def _max_file_size(args: argparse.Namespace) -> Optional[int]:
    if args.max_file_size is None:
        return None
    from RLA.config.remote import parse_size

    try:
        return parse_size(args.max_file_size)
    except ValueError as exc:
        raise ConfigError(
            f"Bad --max-file-size {args.max_file_size!r}",
            expected="a size > 0 in bytes, or with a unit: 512K, 100M, 2G",
            found=args.max_file_size,
            fix=str(exc),
        ) from None


def _syncer(args: argparse.Namespace, data_root: Path):  # -> RunSyncer
    import sys

    from RLA.config import find_config, load_config
    from RLA.sync.syncer import RunSyncer

    source = Path(args.config) if args.config else (find_config(data_root) or find_config())
    if source is None:
        raise ConfigError(
            "No rla_config.yaml with REMOTE_SETTING found",
            expected="--config FILE or an rla_config.yaml above the data root or the current folder",
            found="none",
            fix="pass --config path/to/rla_config.yaml",
        )
    config = load_config(source)
    return RunSyncer(
        config.remote,
        data_root,
        project_root=config.project_root,
        data_types=_types(args),
        warn=lambda message: print(f"warning: {message}", file=sys.stderr),
        max_file_size=_max_file_size(args),
    )


def _print_report(report) -> None:  # report: SyncReport
    # Names come from the other side: no control character of theirs reaches the terminal.
    from RLA.terminal import escape

    if report.dry_run:
        for index, action, key in report.planned:
            print(f"{action:8s} {escape(index)}  {escape(key)}")
    print(escape(report.summary()))


def _push(args: argparse.Namespace) -> int:
    data_root = _common.resolve_data_root(args.data_root)
    syncer = _syncer(args, data_root)
    selection = _common.select(args, data_root)
    runs = [row.layout for row in _common.require_runs(selection, args, data_root)]
    report = syncer.push(
        runs, dry_run=args.dry_run, progress=lambda items, n: _common.bar(items, n, "pushing")
    )
    _print_report(report)
    return 0


def _pull(args: argparse.Namespace) -> int:
    if args.where or args.status:
        raise RLAError(
            "rla sync pull selects by name and time only",
            expected="RUN, --task, --regex, --since, --until",
            found="--where" if args.where else "--status",
            fix="pull by task/time, then filter locally with `rla list --where`",
        )
    data_root = Path(args.data_root).expanduser() if args.data_root else _common.resolve_data_root(None)
    data_root.mkdir(parents=True, exist_ok=True)
    syncer = _syncer(args, data_root)
    report = syncer.pull(
        task=args.task,
        selectors=(args.regex or []) + list(args.runs or []),
        since=args.since,
        until=args.until,
        dry_run=args.dry_run,
        progress=lambda items, n: _common.bar(items, n, "pulling"),
    )
    if report.runs == 0:
        raise RunNotFoundError(
            f"No run on {syncer.where} matches {_common.describe_filters(args)}",
            expected="at least one run",
            found="0 runs",
            fix="widen the filters or check REMOTE_SETTING.remote_data_root",
        )
    _print_report(report)
    return 0
