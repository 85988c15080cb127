"""The numpy checkpoint backend: ``checkpoint-<step>.npz`` for framework-free runs (no pickle)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import IO, Any, List, Optional, Tuple

import numpy as np

from RLA.checkpoint import codec
from RLA.checkpoint.base import CheckpointBackend
from RLA.errors import BackendNotInstalledError
from RLA.install_hints import torch_hint

HEADER_KEY = "__rla_header__"


class NumpyBackend(CheckpointBackend):
    """Store leaves as arrays of an uncompressed ``.npz`` (``allow_pickle=False`` both ways).

    Torch tensors are stored as numpy arrays (raw bytes for dtypes numpy lacks, e.g.
    bfloat16) and come back as tensors, so a torch model can also be saved here.
    """

    name = "numpy"
    extension = "npz"

    @staticmethod
    def _to_array(leaf: Any) -> np.ndarray:
        if not codec.is_tensor(leaf):
            return np.asarray(leaf)
        tensor = leaf.detach().cpu()
        try:
            return tensor.numpy()
        except TypeError:  # bfloat16 and other dtypes numpy lacks
            import torch

            return tensor.contiguous().reshape(-1).view(torch.uint8).numpy()

    def _write(self, handle: IO[bytes], header_text: str, leaves: List[Any]) -> None:
        arrays = {f"L{i}": self._to_array(leaf) for i, leaf in enumerate(leaves)}
        arrays[HEADER_KEY] = np.frombuffer(header_text.encode("utf-8"), dtype=np.uint8)
        np.savez(handle, allow_pickle=False, **arrays)

    def _read(self, path: Path, map_location: Any) -> Tuple[Optional[str], Any]:
        import json

        with np.load(path, allow_pickle=False) as archive:
            if HEADER_KEY not in archive.files:
                raise self.corrupt(path, "an .npz without an RLA header")
            header_text = archive[HEADER_KEY].tobytes().decode("utf-8")
            metas = json.loads(header_text).get("leaves", [])
            count = sum(1 for name in archive.files if name != HEADER_KEY)
            leaves = [
                self._from_array(archive[f"L{i}"], metas[i] if i < len(metas) else {}, map_location)
                for i in range(count)
            ]
        return header_text, leaves

    @staticmethod
    def _from_array(arr: np.ndarray, meta: dict, map_location: Any) -> Any:
        if meta.get("kind") != "tensor":
            return arr
        try:
            import torch
        except ImportError as exc:
            raise BackendNotInstalledError(
                "This checkpoint holds torch tensors",
                expected="torch importable",
                found=str(exc),
                fix=torch_hint(),
            ) from exc
        dtype = getattr(torch, str(meta["dtype"]).replace("torch.", ""))
        tensor = torch.from_numpy(arr.copy())
        if tensor.dtype != dtype:
            tensor = tensor.view(dtype)
        tensor = tensor.reshape(meta["shape"])
        return tensor.to(map_location) if map_location is not None else tensor

    def sniff(self, path: Path) -> bool:
        try:
            with zipfile.ZipFile(path) as archive:
                return f"{HEADER_KEY}.npy" in archive.namelist()
        except (OSError, zipfile.BadZipFile):
            return False
