"""Compare runs: the hyper-parameters that differ and the diff of their code snapshots.

Used by ``rla diff RUN_A RUN_B`` and the dashboard's compare page.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from RLA.layout import RunLayout

#: Files larger than this are compared by size only (a code snapshot holds source files).
MAX_DIFF_BYTES = 1_000_000
_MISSING = "<missing>"


def differing_params(params: Sequence[Dict[str, Any]]) -> Dict[str, List[Any]]:
    """``{key: [value per run]}`` for every key whose values are not all equal.

    A run that lacks a key shows ``"<missing>"`` for it.
    """
    keys = sorted({key for item in params for key in item})
    out: Dict[str, List[Any]] = {}
    for key in keys:
        values = [item.get(key, _MISSING) for item in params]
        if any(repr(v) != repr(values[0]) for v in values[1:]):
            out[key] = values
    return out


def _files(root: Optional[Path]) -> Dict[str, Path]:
    """Relative path -> file, for every regular file under ``root`` (links not followed)."""
    if root is None or not root.is_dir():
        return {}
    found: Dict[str, Path] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(folder, d)))
        for name in sorted(names):
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                found[path.relative_to(root).as_posix()] = path
    return found


def _lines(path: Optional[Path]) -> Optional[List[str]]:
    """The text lines of ``path`` ([] when absent), or None for a binary or huge file."""
    if path is None:
        return []
    if path.stat().st_size > MAX_DIFF_BYTES:
        return None
    data = path.read_bytes()
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def code_diff(run_a: RunLayout, run_b: RunLayout, context: int = 3) -> str:
    """Unified diff of the two runs' code snapshots (``code/``), file by file.

    Binary or very large files that differ get one ``Binary files ... differ`` line.
    """
    files_a, files_b = _files(run_a.code_dir), _files(run_b.code_dir)
    chunks: List[str] = []
    for rel in sorted(set(files_a) | set(files_b)):
        path_a, path_b = files_a.get(rel), files_b.get(rel)
        lines_a, lines_b = _lines(path_a), _lines(path_b)
        name_a = f"a/{rel}" if path_a else "/dev/null"
        name_b = f"b/{rel}" if path_b else "/dev/null"
        if lines_a is None or lines_b is None:
            if path_a is None or path_b is None or path_a.read_bytes() != path_b.read_bytes():
                chunks.append(f"Binary files {name_a} and {name_b} differ\n")
            continue
        diff = list(difflib.unified_diff(lines_a, lines_b, name_a, name_b, n=context))
        if diff:
            chunks.append("".join(line if line.endswith("\n") else line + "\n" for line in diff))
    return "".join(chunks)


def compare_runs(runs: Sequence[RunLayout]) -> Dict[str, Any]:
    """What differs between ``runs`` (two or more): hyper-parameters, last metrics, code.

    Returns:
        ``{"runs": [index...], "params": {key: [values]}, "metrics": {metric: [last values]},
        "code_diff": text}``; the code diff is between the first run and each other run.
    """
    from RLA.query.records import read_record

    records = [read_record(run) for run in runs]
    metrics = sorted({m for record in records for m in record.metrics})
    diffs = []
    for other in runs[1:]:
        text = code_diff(runs[0], other)
        if text and len(runs) > 2:
            text = f"### {runs[0].index} -> {other.index}\n{text}"
        diffs.append(text)
    return {
        "runs": [run.index for run in runs],
        "params": differing_params([record.params for record in records]),
        "metrics": {
            m: [record.metrics[m][0] if record.metrics.get(m) else None for record in records]
            for m in metrics
        },
        "code_diff": "".join(diffs),
    }
