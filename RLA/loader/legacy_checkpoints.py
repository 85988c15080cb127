"""The original's checkpoint names: ``checkpoint-<N>.pt`` and polixir's ``<name>_<N>.pt``.

RLA's own saver reads ``checkpoint-<N>.<ext>`` (with or without RLA's header). polixir
saved ``checkpoint_<N>.pt`` (and ``<checkpoint_name>_<N>.pt`` for other names); this
module finds those in a past run's folder and loads them with the same backend, so a
run of either repository loads and resumes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from RLA.checkpoint import CheckpointSaver, LoadedCheckpoint

_UNDERSCORE_RE = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9]*)_(?P<step>\d+)\.pt$")


def legacy_checkpoints(folder: Path, name: str = "checkpoint") -> Dict[int, Path]:
    """``step -> path`` of polixir's ``<name>_<step>.pt`` files in ``folder``."""
    found: Dict[int, Path] = {}
    if not folder.is_dir():
        return found
    for entry in folder.iterdir():
        match = _UNDERSCORE_RE.match(entry.name)
        if match and match["name"] == name and entry.is_file():
            found[int(match["step"])] = entry
    return found


def _wanted(ckp_index: Union[None, int, str]) -> Tuple[str, Optional[int]]:
    """``(series name, step)`` asked for by ``ckp_index`` (a step, a series name, or None)."""
    if ckp_index is None:
        return "checkpoint", None
    if isinstance(ckp_index, int) or str(ckp_index).isdigit():
        return "checkpoint", int(ckp_index)
    return str(ckp_index), None


def load_legacy_checkpoint(
    saver: CheckpointSaver, ckp_index: Union[None, int, str], map_location: Any = "cpu"
) -> Optional[LoadedCheckpoint]:
    """Load polixir's ``<name>_<N>.pt`` when RLA's names do not hold what is asked (else None).

    ``ckp_index`` is a step (of ``checkpoint_<N>.pt``), a series name such as ``'best'``
    (newest ``best_<N>.pt``) or None (newest ``checkpoint_<N>.pt``).
    """
    name, step = _wanted(ckp_index)
    if name == "checkpoint" and (step in saver.steps() if step is not None else saver.steps()):
        return None  # RLA's (or the original's hyphen) names hold it
    if name != "checkpoint" and name in saver.names():
        return None
    series = legacy_checkpoints(Path(saver.directory), name)
    if not series or (step is not None and step not in series):
        return None
    chosen = step if step is not None else max(series)
    _, state = saver.backend.load(series[chosen], map_location=map_location)
    return LoadedCheckpoint(chosen, state, series[chosen], legacy=True)


def continue_legacy_checkpoints(
    parent: Path, child: Path, step: Optional[int], link: Callable[[Path, Path], None]
) -> List[str]:
    """Link polixir's ``<name>_<N>.pt`` with ``N <= step`` (all when ``step`` is None) into ``child``.

    ``checkpoint_<N>.pt`` becomes RLA's ``checkpoint-<N>.pt`` there (the new run's saver then
    lists, loads and rotates it like its own); other series keep their name. A name already
    in ``child`` is left alone. Returns the names created.
    """
    made: List[str] = []
    if not parent.is_dir():
        return made
    for entry in sorted(parent.iterdir()):
        match = _UNDERSCORE_RE.match(entry.name)
        if not match or not entry.is_file() or (step is not None and int(match["step"]) > step):
            continue
        name = f"checkpoint-{match['step']}.pt" if match["name"] == "checkpoint" else entry.name
        target = child / name
        if not target.exists():
            link(entry, target)
            made.append(name)
    return made


__all__ = ["legacy_checkpoints", "load_legacy_checkpoint", "continue_legacy_checkpoints"]
