"""The checkpoint backend contract: write a header plus array leaves to one file, read it back.

A backend owns a container format (torch zip, numpy ``.npz``, ...). It never decides file
names or rotation (that is :mod:`RLA.checkpoint.saver`) and never encodes Python values
(that is :mod:`RLA.checkpoint.codec`). Files are written through :func:`atomic_file`, so a
reader sees either the previous file or the complete new one, even after a SIGKILL; a full
disk is a :class:`RLA.errors.DiskFullError` and leaves no temp file behind.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import IO, Any, Dict, List, Optional, Tuple

from RLA.checkpoint import codec
from RLA.errors import CheckpointError
from RLA.fs import atomic_file

FORMAT = "rla-checkpoint"
FORMAT_VERSION = 1


class CheckpointBackend:
    """Base class of checkpoint backends (one plug-in per file, registered by name).

    Subclasses set :attr:`name` and :attr:`extension` and implement :meth:`_write`,
    :meth:`_read` and :meth:`sniff`. :meth:`save` / :meth:`load` add the shared parts:
    encoding, checksums, header checks and error translation.
    """

    #: Registered name ("torch", "numpy", ...).
    name: str = ""
    #: File extension without the dot ("pt", "npz", ...).
    extension: str = ""

    def check_available(self) -> None:
        """Raise :class:`RLA.errors.BackendNotInstalledError` if a needed package is missing."""

    # -- container hooks -------------------------------------------------------------
    def _write(self, handle: IO[bytes], header_text: str, leaves: List[Any]) -> None:
        """Write the header JSON text and the leaves to an open binary file."""
        raise NotImplementedError

    def _read(self, path: Path, map_location: Any) -> Tuple[Optional[str], Any]:
        """Return ``(header text, leaves)``; ``(None, obj)`` for a foreign/legacy file."""
        raise NotImplementedError

    def sniff(self, path: Path) -> bool:
        """True if ``path`` looks like a container of this backend (cheap, no full read)."""
        raise NotImplementedError

    # -- shared pipeline -------------------------------------------------------------
    def save(
        self, path: Path, state: Any, step: int, name: Optional[str] = None, durable: bool = True
    ) -> Path:
        """Encode ``state`` and write it to ``path`` atomically.

        Raises:
            CheckpointError: ``state`` holds a value that cannot be stored.
        """
        self.check_available()
        skeleton, leaves = codec.encode(state)
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "backend": self.name,
            "step": int(step),
            "name": name,
            "created": _dt.datetime.now().astimezone().isoformat(timespec="microseconds"),
            "skeleton": skeleton,
            "leaves": [self._leaf_meta(leaf) for leaf in leaves],
        }
        with atomic_file(Path(path), durable=durable) as handle:
            recorder = _WriteErrors(handle)
            try:
                self._write(recorder, json.dumps(header, allow_nan=True), leaves)  # type: ignore[arg-type]
            except OSError:
                raise
            except Exception as exc:
                if recorder.error is not None:  # torch's zip writer turns it into "unexpected pos"
                    raise recorder.error from exc
                raise
        return Path(path)

    @staticmethod
    def _leaf_meta(leaf: Any) -> Dict[str, Any]:
        kind = "tensor" if codec.is_tensor(leaf) else "ndarray"
        return {
            "kind": kind,
            "dtype": str(leaf.dtype),
            "shape": list(leaf.shape),
            "crc": codec.leaf_crc(leaf),
        }

    def load(self, path: Path, map_location: Any = "cpu") -> Tuple[Optional[Dict[str, Any]], Any]:
        """Read and verify ``path``; returns ``(header, state)`` (``header`` None for legacy files).

        Raises:
            CheckpointError: missing, truncated, corrupt, or written by another backend.
        """
        path = Path(path)
        self.check_available()
        if not path.is_file():
            raise CheckpointError(
                f"Checkpoint file {path} does not exist",
                expected="an existing file",
                found="no such file",
                fix="list the folder's checkpoints and pick one",
            )
        try:
            header_text, leaves = self._read(path, map_location)
        except CheckpointError:
            raise
        except Exception as exc:  # noqa: BLE001 - container libraries raise anything
            raise self.corrupt(path, f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        if header_text is None:
            return None, leaves
        try:
            header = json.loads(header_text)
        except ValueError as exc:
            raise self.corrupt(path, "an unreadable header") from exc
        if header.get("format") != FORMAT or not isinstance(header.get("leaves"), list):
            raise self.corrupt(path, f"header format {header.get('format')!r}")
        if header.get("version", 0) > FORMAT_VERSION:
            raise CheckpointError(
                f"Checkpoint {path} was written by a newer RLA",
                expected=f"format version <= {FORMAT_VERSION}",
                found=f"version {header.get('version')}",
                fix="upgrade RLA to read it",
            )
        if len(leaves) != len(header["leaves"]):
            raise self.corrupt(path, f"{len(leaves)} arrays where the header lists {len(header['leaves'])}")
        for ref, (leaf, meta) in enumerate(zip(leaves, header["leaves"])):
            if codec.leaf_crc(leaf) != meta.get("crc"):
                raise self.corrupt(
                    path,
                    f"a checksum mismatch in array #{ref} ({meta.get('dtype')}, shape {meta.get('shape')})",
                )
        try:
            state = codec.decode(header["skeleton"], leaves)
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise self.corrupt(path, f"an undecodable skeleton ({exc})") from exc
        return header, state

    def corrupt(self, path: Path, found: str) -> CheckpointError:
        """The error for a file that exists but cannot be read back exactly."""
        return CheckpointError(
            f"Checkpoint {path} is corrupt or truncated",
            expected=f"a complete {self.name} checkpoint written by RLA",
            found=found,
            fix="load another step (e.g. load_checkpoint(ckp_index=<older step>)) or delete this file",
        )


class _WriteErrors:
    """A binary file that remembers the ``OSError`` its ``write``/``flush`` raised.

    Container writers may swallow the error of the file they write to (torch's zip writer
    reports ``unexpected pos 1024 vs 918`` for a full disk); the backend raises the
    remembered ``OSError`` instead, so a full disk becomes a ``DiskFullError``.
    """

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self.error: Optional[OSError] = None

    def write(self, data: Any) -> int:
        try:
            return self._handle.write(data)
        except OSError as exc:
            self.error = exc
            raise

    def flush(self) -> None:
        try:
            self._handle.flush()
        except OSError as exc:
            self.error = exc
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)
