"""``rla view INDEX``: one run's hyper-parameters, status, git facts, last metrics and files."""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List

from RLA.errors import RLAError
from RLA.fs import json_default
from RLA.text import count
from rla_scripts.commands._common import add_data_root, resolve_data_root


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _human(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def natural_key(name: str) -> List[Any]:
    """Sort key that orders the numbers inside names by value: ``ckpt-20`` before ``ckpt-100``."""
    return [
        (0, int(part), part) if part.isdigit() else (1, part.lower(), part)
        for part in re.split(r"(\d+)", name)
        if part
    ]


def describe_run(data_root: Path, selector: str, task: Any = None, archived: bool = False) -> Dict[str, Any]:
    """Everything ``rla view`` shows, as a dict (JSON-able)."""
    from RLA.layout import find_run
    from RLA.manager.run_info import effective_status
    from RLA.query.records import read_record

    layout = find_run(data_root, selector, task=task, archived=archived)
    record = read_record(layout)
    info = record.info
    files = {
        kind: {
            "path": str(path),
            "size": _size(path),
            "entries": sorted((p.name for p in path.iterdir()), key=natural_key)[:20]
            if path.is_dir()
            else [path.name],
        }
        for kind, path in sorted(layout.existing_paths().items())
    }
    return {
        "index": layout.index,
        "name": layout.name,
        "archived": layout.archived,
        "status": effective_status(info) if info else "unknown",
        "start_time": info.get("start_time"),
        "end_time": info.get("end_time"),
        "host": info.get("host"),
        "ip": info.get("ip"),
        "command": info.get("command"),
        "exit_code": info.get("exit_code"),
        "error": info.get("error"),
        "parent": info.get("parent"),
        "git": info.get("git") or {},
        "hyper_params": record.params,
        "param_source": record.param_source,
        "tracked_keys": record.tracked,
        "time_step": record.time_step,
        "rows": record.n_rows,
        "last_metrics": {k: v[0] for k, v in sorted(record.metrics.items())},
        "problems": record.problems,
        "files": files,
    }


def render(view: Dict[str, Any]) -> str:
    """Human-readable text of :func:`describe_run`; every line is escaped for a terminal
    (a value with a newline or an escape sequence cannot fake or hide a line)."""
    from RLA.terminal import escape

    return "\n".join(escape(line) for line in _lines(view))


def _lines(view: Dict[str, Any]) -> List[str]:
    lines: List[str] = [
        f"run      {view['index']}",
        f"name     {view['name']}",
        f"status   {view['status']}"
        + (f" (exit {view['exit_code']})" if view.get("exit_code") not in (None, 0) else ""),
        f"started  {view['start_time'] or '-'}   ended {view['end_time'] or '-'}",
        f"host     {view['host'] or '-'} ({view['ip'] or '-'})",
    ]
    if view.get("command"):
        command = view["command"]
        lines.append(f"command  {' '.join(map(str, command)) if isinstance(command, list) else command}")
    if view.get("parent"):
        lines.append(f"parent   {view['parent']}")
    if view.get("error"):
        lines.append(f"error    {view['error']}")
    git = view["git"]
    if git:
        lines.append(
            f"git      {git.get('commit') or '-'} on {git.get('branch') or '-'}"
            + (" (dirty)" if git.get("dirty") else "")
        )
    lines.append(f"hyper-parameters (from {view['param_source']}):")
    for key, value in sorted(view["hyper_params"].items()):
        mark = "*" if key in view["tracked_keys"] else " "
        lines.append(f"  {mark} {key} = {value!r}")
    lines.append(f"last metrics (time-step {view['time_step']:g}, {count(view['rows'], 'row')}):")
    for key, value in view["last_metrics"].items():
        lines.append(
            f"    {key} = {value:g}" if isinstance(value, (int, float)) else f"    {key} = {value!r}"
        )
    lines.append("files:")
    for kind, entry in view["files"].items():
        shown = ", ".join(entry["entries"][:8]) + (" ..." if len(entry["entries"]) > 8 else "")
        lines.append(f"  {kind:<15} {_human(entry['size']):>9}  {entry['path']}")
        if shown:
            lines.append(f"  {'':<15} {'':>9}  {shown}")
    for problem in view["problems"]:
        lines.append(f"problem: {problem}")
    return lines


def run(args: argparse.Namespace) -> int:
    data_root = resolve_data_root(args.data_root)
    view = describe_run(data_root, args.run, task=args.task, archived=args.archived)
    print(json.dumps(view, indent=2, default=json_default) if args.format == "json" else render(view))
    if view["problems"]:  # what could be read is shown above; the damage is the error
        raise RLAError(
            f"Run {view['index']} is damaged",
            expected="run files RLA can read safely",
            found="; ".join(view["problems"]),
            fix="repair or replace the files named (a pull of the run again, or "
            "`rla delete` to move it to the trash)",
        )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "view",
        help="show one run",
        description="Show one run: status, "
        "hyper-parameters, git facts, last metrics and files of every data type.",
    )
    parser.add_argument("run", metavar="INDEX", help="run index or unique prefix/glob of YYYY/MM/DD/<name>")
    add_data_root(parser)
    parser.add_argument("--task", "--task_table_name", dest="task", help="task (when INDEX has none)")
    parser.add_argument("--archived", action="store_true", help="look under arc/")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(func=run)
