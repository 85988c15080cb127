"""Per-trajectory files of ``TrajectoryReplayBuffer.auto_save``: npz, pt, or opt-in pickle."""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path
from typing import Dict

import numpy as np

from RLA.errors import BackendNotInstalledError, CorruptSnapshotError, ReplayBufferError
from RLA.install_hints import torch_hint

FORMATS = ("npz", "pt", "pkl")


def check_format(fmt: str, allow_pickle: bool) -> str:
    """Validate ``trajectory_format``; pickle needs an explicit opt-in (it runs code on load)."""
    if fmt not in FORMATS:
        raise ReplayBufferError(
            "Unknown trajectory_format",
            expected=f"one of {FORMATS}",
            found=repr(fmt),
            fix="use 'npz' (default) or 'pt'",
        )
    if fmt == "pkl" and not allow_pickle:
        raise ReplayBufferError(
            "Pickle trajectory files are disabled",
            expected="trajectory_format 'npz' or 'pt'",
            found="'pkl'",
            fix="pass allow_pickle=True if you trust every reader and writer",
        )
    if fmt == "pt":
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            raise BackendNotInstalledError(
                "trajectory_format='pt' needs torch",
                expected="torch importable",
                found=str(exc),
                fix=torch_hint("use trajectory_format='npz'"),
            ) from exc
    return fmt


def write(path: Path, data: Dict[str, np.ndarray], fmt: str) -> None:
    """Write one trajectory atomically (temp file + rename)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if fmt == "npz":
                np.savez(handle, **data)  # type: ignore[arg-type]  # numpy's stub types **kwds as its bool option
            elif fmt == "pt":
                import torch

                torch.save(
                    {
                        k: torch.from_numpy(np.ascontiguousarray(v)) if v.dtype.kind not in "US" else v
                        for k, v in data.items()
                    },
                    handle,
                )
            else:
                pickle.dump(data, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read(path: Path, fmt: str) -> Dict[str, np.ndarray]:
    """Read one trajectory file (npz without pickle; pt with ``weights_only``)."""
    try:
        if fmt == "npz":
            with np.load(path, allow_pickle=False) as npz:
                return {k: npz[k] for k in npz.files}
        if fmt == "pt":
            import torch

            loaded = torch.load(path, weights_only=True)
            return {k: v.numpy() if hasattr(v, "numpy") else np.asarray(v) for k, v in loaded.items()}
        with open(path, "rb") as handle:
            return pickle.load(handle)
    except FileNotFoundError:
        raise CorruptSnapshotError(
            f"Trajectory file {path} is missing",
            expected="the file written by auto_save",
            found="no file",
            fix="restore it or load a checkpoint",
        ) from None
    except Exception as exc:  # noqa: BLE001 - any decoder error means a damaged file
        raise CorruptSnapshotError(
            f"Trajectory file {path} cannot be read",
            expected=f"a valid {fmt} file",
            found=str(exc),
            fix="restore it or load a checkpoint",
        ) from exc
