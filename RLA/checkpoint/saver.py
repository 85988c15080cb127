"""CheckpointSaver: file names, rotation, named checkpoints and "newest complete" loading.

Files are ``<dir>/checkpoint-<step>.<ext>`` (numbered, rotated) and
``<dir>/checkpoint-<name>.<ext>`` (named, e.g. ``best``; never rotated). Anything else in
the folder is ignored. Writes are atomic; the file just written is never rotated away.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from RLA.checkpoint.base import CheckpointBackend
from RLA.checkpoint.registry import all_backends, get_backend
from RLA.errors import CheckpointError
from RLA.fs import TEMP_SUFFIX

PREFIX = "checkpoint"
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


@dataclass
class LoadedCheckpoint:
    """A checkpoint read back from disk.

    Attributes:
        step: the time-step it was saved at.
        state: the saved value, types intact.
        path: the file it came from.
        name: its name for a named checkpoint (``'best'``), else ``None``.
        legacy: True for a plain ``torch.save`` file of the original RLA (no RLA header).
    """

    step: int
    state: Any
    path: Path
    name: Optional[str] = None
    legacy: bool = False


class CheckpointSaver:
    """Save and load the checkpoints of one folder with one backend.

    Args:
        directory: the checkpoint folder (created on the first save, never on load).
        backend: a registered backend name (``'torch'``, ``'numpy'``, ``'tensorflow'``) or instance.
        max_to_keep: numbered checkpoints kept by rotation; ``None`` or ``0`` keeps all.
        durable: fsync files and the folder on save (survives power loss).

    Example::

        saver = CheckpointSaver("ckpt", backend="numpy", max_to_keep=2)
        saver.save(10, {"w": np.zeros(3)})
        step, state = saver.load()
    """

    def __init__(
        self,
        directory: Union[str, "os.PathLike[str]"],
        backend: Union[str, CheckpointBackend] = "torch",
        max_to_keep: Optional[int] = 10,
        durable: bool = True,
    ) -> None:
        if max_to_keep is not None and (not isinstance(max_to_keep, int) or max_to_keep < 0):
            raise CheckpointError(
                "Bad max_to_keep",
                expected="a non-negative int (0 or None keeps every checkpoint)",
                found=repr(max_to_keep),
                fix="pass max_to_keep=10 for example",
            )
        self.directory = Path(directory)
        self.backend = get_backend(backend) if isinstance(backend, str) else backend
        self.backend.check_available()
        self.max_to_keep = max_to_keep or None
        self.durable = durable
        self._cleaned = False

    # ------------------------------------------------------------------ names
    @property
    def extension(self) -> str:
        return self.backend.extension

    def path_for(self, key: Union[int, str]) -> Path:
        """The file of step ``key`` (an int) or of the named checkpoint ``key`` (a str)."""
        if isinstance(key, bool) or not isinstance(key, (int, str)):
            raise CheckpointError(
                "Bad checkpoint key",
                expected="a step (int) or a name (str)",
                found=repr(key),
                fix="pass e.g. 1000 or 'best'",
            )
        if isinstance(key, str) and not key.isdigit():
            self._check_name(key)
        return self.directory / f"{PREFIX}-{key}.{self.extension}"

    @staticmethod
    def _check_name(name: str) -> None:
        if not _NAME_RE.match(name):
            raise CheckpointError(
                "Bad checkpoint name",
                expected="letters, digits, '_' or '-', starting with a letter",
                found=repr(name),
                fix="use a name such as 'best' or 'final'",
            )

    def _scan(self, extension: Optional[str] = None) -> Dict[Union[int, str], Path]:
        """``key -> path`` of this backend's files (``extension`` for another backend's)."""
        ext = extension or self.extension
        found: Dict[Union[int, str], Path] = {}
        if not self.directory.is_dir():
            return found
        pattern = re.compile(rf"^{PREFIX}-(?P<key>[A-Za-z0-9_\-]+)\.{re.escape(ext)}$")
        for entry in os.scandir(self.directory):
            match = pattern.match(entry.name)
            if match and entry.is_file():
                key = match["key"]
                found[int(key) if key.isdigit() else key] = Path(entry.path)
        return found

    def steps(self) -> List[int]:
        """Steps of the numbered checkpoints, ascending."""
        return sorted(k for k in self._scan() if isinstance(k, int))

    def names(self) -> List[str]:
        """Names of the named checkpoints, sorted."""
        return sorted(k for k in self._scan() if isinstance(k, str))

    def latest_step(self) -> Optional[int]:
        """The newest numbered step, or ``None``."""
        steps = self.steps()
        return steps[-1] if steps else None

    # ------------------------------------------------------------------ save
    def save(self, step: int, state: Any, name: Optional[str] = None) -> Path:
        """Write ``state`` for ``step`` (or as the named checkpoint ``name``) atomically.

        A numbered save rotates old numbered checkpoints beyond ``max_to_keep``; it never
        deletes the file it just wrote, named checkpoints, or files it does not own.

        Returns:
            The checkpoint's path.
        """
        if isinstance(step, bool) or not isinstance(step, int) and not hasattr(step, "__index__"):
            raise CheckpointError(
                "Bad checkpoint step",
                expected="an int time-step",
                found=repr(step),
                fix="pass time_step_holder.get_time()",
            )
        step = int(step)
        if name is not None:
            self._check_name(name)
        self._clean_temp_files()
        path = self.path_for(name if name is not None else step)
        self.backend.save(path, state, step=step, name=name, durable=self.durable)
        if name is None:
            self._rotate(keep=step)
        return path

    def _rotate(self, keep: int) -> None:
        if not self.max_to_keep:
            return
        others = [s for s in self.steps() if s != keep]
        excess = len(others) + 1 - self.max_to_keep
        for step in others[: max(excess, 0)]:
            with contextlib.suppress(FileNotFoundError):
                self.path_for(step).unlink()

    def _clean_temp_files(self) -> None:
        """Remove temp files a killed save left behind (the writer's own folder only)."""
        if self._cleaned or not self.directory.is_dir():
            return
        self._cleaned = True
        for entry in os.scandir(self.directory):
            if entry.name.startswith(f".{PREFIX}-") and entry.name.endswith(TEMP_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)

    # ------------------------------------------------------------------ load
    def load(self, step: Union[None, int, str] = None, map_location: Any = "cpu") -> Tuple[int, Any]:
        """Load a checkpoint; returns ``(step, state)``. See :meth:`load_checkpoint`."""
        loaded = self.load_checkpoint(step, map_location=map_location)
        return loaded.step, loaded.state

    def load_checkpoint(
        self, step: Union[None, int, str] = None, map_location: Any = "cpu"
    ) -> LoadedCheckpoint:
        """Load the newest complete checkpoint (``step=None``), a step, or a named one.

        With ``step=None`` a corrupt newest file is skipped with a warning and the next
        older one is used. Nothing on disk is changed by a load.

        Raises:
            CheckpointError: no checkpoint, a missing step, a corrupt file, or only another
                backend's checkpoints in the folder.
        """
        if step is None:
            steps = self.steps()
            if not steps:
                raise self._missing("no checkpoint")
            errors: List[CheckpointError] = []
            for candidate in reversed(steps):
                try:
                    loaded = self._load_file(self.path_for(candidate), candidate, map_location)
                except CheckpointError as exc:
                    errors.append(exc)
                    continue
                for skipped in errors:
                    warnings.warn(
                        f"skipped an unreadable checkpoint: {skipped}", RuntimeWarning, stacklevel=3
                    )
                return loaded
            raise errors[0]
        if isinstance(step, str) and step.isdigit():
            step = int(step)
        path = self.path_for(step)
        if not path.is_file():
            raise self._missing(f"no {path.name}")
        return self._load_file(path, step if isinstance(step, int) else None, map_location)

    def _load_file(self, path: Path, step: Optional[int], map_location: Any) -> LoadedCheckpoint:
        if not self.backend.sniff(path):
            other = self._owner(path)
            if other is not None:
                raise self._foreign(path, other)
        header, state = self.backend.load(path, map_location=map_location)
        if header is None:
            if step is None:
                raise self.backend.corrupt(path, "a named checkpoint without an RLA header")
            return LoadedCheckpoint(step, state, path, legacy=True)
        saved_step = int(header.get("step", step if step is not None else 0))
        return LoadedCheckpoint(saved_step, state, path, name=header.get("name"))

    def _owner(self, path: Path) -> Optional[CheckpointBackend]:
        for backend in all_backends():
            if backend.name != self.backend.name and backend.sniff(path):
                return backend
        return None

    def _foreign(self, path: Path, other: CheckpointBackend) -> CheckpointError:
        return CheckpointError(
            f"Checkpoint {path} was written by the {other.name!r} backend",
            expected=f"a {self.backend.name!r} checkpoint",
            found=f"a {other.name!r} file",
            fix=f"load it with backend={other.name!r}: new_saver(backend={other.name!r}), "
            f"load_from_record_date(backend={other.name!r}) or DL_FRAMEWORK",
        )

    def _missing(self, found: str) -> CheckpointError:
        available = self.steps()
        names = self.names()
        others = []
        for backend in all_backends():
            if backend.name != self.backend.name and backend.extension != self.extension:
                files = self._scan(backend.extension)
                if files:
                    # Trust the content over the extension (a renamed file).
                    others.append(self._owner(next(iter(files.values()))) or backend)
        if others and not available and not names:
            other = others[0]
            return CheckpointError(
                f"The checkpoints in {self.directory} were written by the {other.name!r} backend",
                expected=f"checkpoint-<step>.{self.extension} ({self.backend.name} backend)",
                found="only checkpoint files of another backend",
                fix=f"load them with backend={other.name!r}: new_saver(backend={other.name!r}), "
                f"load_from_record_date(backend={other.name!r}) or DL_FRAMEWORK",
            )
        shown = ", ".join(map(str, available[-10:])) or "none"
        if names:
            shown += f"; named: {', '.join(names)}"
        where = self.directory if self.directory.is_dir() else f"{self.directory} (folder does not exist)"
        if available:
            fix = "pass ckp_index=None for the newest, or one of the listed steps"
        elif names:
            fix = f"no numbered checkpoint is left: pass ckp_index={names[0]!r} (a named one)"
        else:
            fix = "this run saved no checkpoint (or its folder was removed): resume another run"
        return CheckpointError(
            f"No such checkpoint in {where}",
            expected=f"one of the saved steps ({shown})",
            found=found,
            fix=fix,
        )
