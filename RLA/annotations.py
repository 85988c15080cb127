"""Tags and a note per run, stored with the run in ``<log dir>/annotations.json``.

The file travels with the run's logs (archive, sync, trash), is replaced atomically, and is
optional: a run without it has no tags and an empty note. ``rla tag`` / ``rla note`` and the
dashboard (``rla ui``) read and write it through this module only.

Example::

    from RLA.annotations import add_tags, read_annotations, set_note
    add_tags(layout, ["baseline", "paper"])
    set_note(layout, "diverged after 1M steps: lr too high")
    read_annotations(layout)    # Annotations(tags=('baseline', 'paper'), note='diverged ...')
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Tuple, Union

from RLA.errors import RLAError
from RLA.fs import atomic_write_json
from RLA.layout import RunLayout

ANNOTATIONS_FILE = "annotations.json"
#: A tag: letters, digits and ``_ - . : + @``, 1 to 64 characters (no spaces, so tags
#: read well in a list and on a command line).
TAG_RE = re.compile(r"^[\w.:+@-]{1,64}$")
MAX_NOTE_CHARS = 20_000


class AnnotationError(RLAError):
    """A tag or note that cannot be stored (bad characters, too long)."""

    exit_code = 2


@dataclass(frozen=True)
class Annotations:
    """What a user wrote about one run."""

    tags: Tuple[str, ...] = ()
    note: str = ""

    def to_json(self) -> Dict[str, object]:
        return {"tags": list(self.tags), "note": self.note}


def annotations_path(run: Union[RunLayout, os.PathLike]) -> Path:
    """``annotations.json`` of a run (a layout, or its log directory)."""
    log_dir = run.log_dir if isinstance(run, RunLayout) else Path(run)
    return log_dir / ANNOTATIONS_FILE


def check_tag(tag: object) -> str:
    """Return ``tag`` when it is a valid tag, else raise :class:`AnnotationError`."""
    if not isinstance(tag, str) or not TAG_RE.match(tag):
        raise AnnotationError(
            f"Bad tag {tag!r}",
            expected="1 to 64 letters, digits or _ - . : + @",
            found=repr(tag),
            fix="write e.g. baseline or paper-v2",
        )
    return tag


def read_annotations(run: Union[RunLayout, os.PathLike]) -> Annotations:
    """The run's tags and note (empty when the file is missing or unreadable)."""
    try:
        with open(annotations_path(run), "r", encoding="utf-8") as handle:
            raw = json.load(handle)
    except (OSError, ValueError):
        return Annotations()
    if not isinstance(raw, dict):
        return Annotations()
    tags = tuple(t for t in raw.get("tags") or () if isinstance(t, str) and TAG_RE.match(t))
    note = raw.get("note")
    return Annotations(tuple(dict.fromkeys(tags)), note if isinstance(note, str) else "")


def write_annotations(run: Union[RunLayout, os.PathLike], value: Annotations) -> Annotations:
    """Replace the run's annotations (atomically); returns what was written.

    Raises:
        AnnotationError: a bad tag or a note longer than :data:`MAX_NOTE_CHARS`.
        RLAError: the run has no log directory to store them in.
    """
    tags = tuple(dict.fromkeys(check_tag(t) for t in value.tags))
    if not isinstance(value.note, str) or len(value.note) > MAX_NOTE_CHARS:
        raise AnnotationError(
            "Bad note",
            expected=f"text of at most {MAX_NOTE_CHARS} characters",
            found=f"{type(value.note).__name__} of length {len(str(value.note))}",
            fix="shorten the note",
        )
    path = annotations_path(run)
    if not path.parent.is_dir():
        raise RLAError(
            f"Cannot annotate: no log directory {path.parent}",
            expected="a run with logs",
            found="no such directory",
            fix="check the run index",
        )
    clean = Annotations(tags, value.note)
    atomic_write_json(path, clean.to_json())
    return clean


def add_tags(run: Union[RunLayout, os.PathLike], tags: Iterable[str]) -> Annotations:
    """Add ``tags`` (kept in order, no duplicates)."""
    current = read_annotations(run)
    return write_annotations(run, Annotations(current.tags + tuple(tags), current.note))


def remove_tags(run: Union[RunLayout, os.PathLike], tags: Iterable[str]) -> Annotations:
    """Remove ``tags`` (absent ones are ignored)."""
    current = read_annotations(run)
    drop = set(tags)
    return write_annotations(run, Annotations(tuple(t for t in current.tags if t not in drop), current.note))


def set_note(run: Union[RunLayout, os.PathLike], note: str) -> Annotations:
    """Replace the note (an empty string clears it)."""
    return write_annotations(run, Annotations(read_annotations(run).tags, note))
