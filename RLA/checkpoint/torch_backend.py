"""The torch checkpoint backend: ``checkpoint-<step>.pt`` via ``torch.save`` / ``torch.load(weights_only=True)``."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import IO, Any, List, Optional, Tuple

import numpy as np

from RLA.checkpoint import codec
from RLA.checkpoint.base import CheckpointBackend
from RLA.errors import BackendNotInstalledError, CheckpointError
from RLA.install_hints import torch_hint

HEADER_KEY = "rla_header"


class TorchBackend(CheckpointBackend):
    """Store state dicts and tensors natively; numpy leaves travel as tensors (or raw bytes).

    Files load with ``torch.load(path, weights_only=True)`` alone (a dict with the header JSON
    and a list of tensors), so no pickle code runs on load. Plain ``torch.save(model_dict)``
    files written by the original RLA are still read (returned as they were saved).
    """

    name = "torch"
    extension = "pt"

    def check_available(self) -> None:
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            raise BackendNotInstalledError(
                "The torch checkpoint backend needs PyTorch",
                expected="torch importable",
                found=str(exc),
                fix=torch_hint("set DL_FRAMEWORK: none (numpy backend)"),
            ) from exc

    @staticmethod
    def _to_tensor(leaf: Any) -> Any:
        import torch

        if codec.is_tensor(leaf):
            return leaf.detach()
        arr = np.asarray(leaf)
        if arr.dtype.isnative and arr.dtype.kind in "biufc":
            try:
                return torch.from_numpy(np.ascontiguousarray(arr).copy())
            except TypeError:  # a numpy dtype torch does not have
                pass
        raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8).copy()
        return torch.from_numpy(raw)

    def _write(self, handle: IO[bytes], header_text: str, leaves: List[Any]) -> None:
        import torch

        torch.save({HEADER_KEY: header_text, "leaves": [self._to_tensor(leaf) for leaf in leaves]}, handle)

    def _read(self, path: Path, map_location: Any) -> Tuple[Optional[str], Any]:
        import json

        import torch

        if not zipfile.is_zipfile(path):
            raise self.corrupt(path, "not a torch zip archive")
        try:
            payload = torch.load(path, map_location=map_location, weights_only=True)
        except Exception as exc:  # noqa: BLE001
            if "weights_only" in str(exc) or "Unsupported global" in str(exc):
                raise CheckpointError(
                    f"Checkpoint {path} holds Python objects that are not loaded for safety",
                    expected="tensors, state dicts and plain containers (weights_only=True)",
                    found=str(exc).splitlines()[0][:200],
                    fix="if you trust the file, read it yourself with torch.load(path, weights_only=False)",
                ) from exc
            raise
        if not (isinstance(payload, dict) and isinstance(payload.get(HEADER_KEY), str)):
            return None, payload  # a plain torch.save(...) file (original RLA)
        header_text = payload[HEADER_KEY]
        metas = json.loads(header_text).get("leaves", [])
        tensors = payload.get("leaves", [])
        leaves = []
        for tensor, meta in zip(tensors, metas):
            if meta.get("kind") == "tensor":
                leaves.append(tensor)
                continue
            dtype = np.dtype(meta["dtype"])
            flat = tensor.cpu().numpy()
            if flat.dtype == dtype and list(flat.shape) == list(meta["shape"]):
                leaves.append(flat)
            else:
                leaves.append(np.frombuffer(flat.tobytes(), dtype=dtype).reshape(meta["shape"]).copy())
        leaves.extend(tensors[len(metas) :])  # surplus arrays are reported by the length check
        return header_text, leaves

    def sniff(self, path: Path) -> bool:
        try:
            with zipfile.ZipFile(path) as archive:
                return any(n == "data.pkl" or n.endswith("/data.pkl") for n in archive.namelist())
        except (OSError, zipfile.BadZipFile):
            return False
