"""Everything the run page shows about one run: facts, files, checkpoints, replay, media, log tail."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List

from RLA.annotations import read_annotations
from RLA.errors import RLAError
from RLA.layout import CHECKPOINT, CODE, LOG, RESULTS, RunLayout
from RLA.ui.encode import jsonable

#: Files listed per data type (the rest is counted).
MAX_FILES = 500
LOG_TAIL_BYTES = 64 * 1024
MAX_PATCH_BYTES = 1_000_000
IMAGE_EXT = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}
VIDEO_EXT = {".mp4", ".webm", ".ogg", ".ogv"}


def list_files(layout: RunLayout, data_type: str, path: Path) -> Dict[str, Any]:
    """Files of one data type: ``{"files": [{"path" (relative to the data root), "size", "link"}],
    "total_files", "total_bytes"}``. Links are listed, never followed."""
    root = Path(layout.data_root)
    files: List[Dict[str, Any]] = []
    count = size = 0
    walk = [(str(path.parent), [], [path.name])] if path.is_file() else os.walk(path)
    for folder, dirs, names in walk:
        dirs.sort()
        for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            full = Path(folder) / name
            try:
                stat = os.lstat(full)
            except OSError:
                continue
            count += 1
            size += stat.st_size
            if len(files) < MAX_FILES:
                files.append(
                    {
                        "path": full.relative_to(root).as_posix(),
                        "size": stat.st_size,
                        "link": full.is_symlink(),
                    }
                )
    return {"files": files, "total_files": count, "total_bytes": size}


def _tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a text file (at most :data:`LOG_TAIL_BYTES` read)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            end = handle.tell()
            handle.seek(max(0, end - LOG_TAIL_BYTES))
            data = handle.read()
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", errors="replace").splitlines()[-lines:])


def _replay(layout: RunLayout) -> Any:
    """The ``rla buffer inspect`` summary of the run's newest snapshot, an error text, or None."""
    if not layout.replay_dir.is_dir():
        return None
    from RLA.replay_buffer.snapshot.inspect import describe

    try:
        return describe(os.fspath(layout.replay_dir))
    except (RLAError, OSError, ValueError) as exc:
        return {"error": str(exc)}


def _media(files: Dict[str, Any]) -> List[Dict[str, str]]:
    """Images and videos under ``results/`` (shown inline by the page)."""
    found = []
    for entry in files.get(RESULTS, {}).get("files", []):
        suffix = Path(entry["path"]).suffix.lower()
        kind = "image" if suffix in IMAGE_EXT else "video" if suffix in VIDEO_EXT else None
        if kind and not entry["link"]:
            found.append({"path": entry["path"], "kind": kind})
    return found


def run_detail(layout: RunLayout, log_lines: int = 200) -> Dict[str, Any]:
    """The run page's data (JSON-able)."""
    from RLA.manager.run_info import effective_status
    from RLA.query.records import read_record

    record = read_record(layout)
    info = record.info
    files = {kind: list_files(layout, kind, path) for kind, path in sorted(layout.existing_paths().items())}
    patch = layout.code_dir / "git_diff.patch"
    notes = read_annotations(layout)
    return jsonable(
        {
            "index": layout.index,
            "task": layout.task,
            "name": layout.name,
            "archived": layout.archived,
            "status": effective_status(info) if info else "unknown",
            "start_time": info.get("start_time"),
            "end_time": info.get("end_time"),
            "host": info.get("host"),
            "ip": info.get("ip"),
            "pid": info.get("pid"),
            "command": info.get("command"),
            "exit_code": info.get("exit_code"),
            "error": info.get("error"),
            "parent": info.get("parent"),
            "git": info.get("git") or {},
            "git_diff": _tail(patch, 100_000)
            if patch.is_file() and patch.stat().st_size <= MAX_PATCH_BYTES
            else (
                "(git_diff.patch larger than 1 MB: download it from the files list)"
                if patch.is_file()
                else ""
            ),
            "hyper_params": record.params,
            "param_source": record.param_source,
            "tracked_keys": record.tracked,
            "time_step": record.time_step,
            "rows": record.n_rows,
            "metrics": {
                k: {"last": v[0], "min": v[1], "max": v[2]} for k, v in sorted(record.metrics.items())
            },
            "problems": record.problems,
            "files": files,
            "checkpoints": files.get(CHECKPOINT, {}).get("files", []),
            "replay": _replay(layout),
            "media": _media(files),
            "log_tail": _tail(layout.log_dir / "log.txt", log_lines),
            "tags": list(notes.tags),
            "note": notes.note,
            "has_code": CODE in files,
            "has_log": LOG in files,
        }
    )
