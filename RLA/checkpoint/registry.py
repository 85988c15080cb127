"""The registry of checkpoint backends and the DL_FRAMEWORK -> backend mapping."""

from __future__ import annotations

from typing import Dict, List, Optional

from RLA.checkpoint.base import CheckpointBackend
from RLA.errors import ConfigError
from RLA.install_hints import torch_hint
from RLA.registry import Registry

#: Checkpoint backends by name; third parties add theirs via the ``rla.checkpoint_backends`` entry points.
backends: "Registry[type]" = Registry("checkpoint backend", entry_point_group="rla.checkpoint_backends")
backends.register(
    "torch",
    "RLA.checkpoint.torch_backend:TorchBackend",
    install_hint=torch_hint("set DL_FRAMEWORK: none (numpy checkpoints)"),
    requires=("torch",),
)
backends.register("numpy", "RLA.checkpoint.numpy_backend:NumpyBackend")
backends.register(
    "tensorflow",
    "RLA.checkpoint.tensorflow_backend:TensorflowBackend",
    install_hint="pip install tensorflow, or set DL_FRAMEWORK: none (numpy checkpoints)",
    requires=("tensorflow",),
)

#: ``DL_FRAMEWORK`` value -> default backend name.
FRAMEWORK_BACKENDS: Dict[str, str] = {"torch": "torch", "tensorflow": "tensorflow", "none": "numpy"}


def get_backend(name: str) -> CheckpointBackend:
    """A fresh instance of the backend registered as ``name``."""
    return backends.get(name)()


def backend_for_framework(framework: Optional[str]) -> str:
    """The backend name used for a ``DL_FRAMEWORK`` value (``None`` -> torch)."""
    key = (framework or "torch").lower()
    if key not in FRAMEWORK_BACKENDS:
        raise ConfigError(
            "Unknown DL_FRAMEWORK for checkpoints",
            expected=", ".join(FRAMEWORK_BACKENDS),
            found=repr(framework),
            fix="set DL_FRAMEWORK to torch, tensorflow or none",
        )
    return FRAMEWORK_BACKENDS[key]


def all_backends() -> List[CheckpointBackend]:
    """One instance of every registered backend whose module imports."""
    found = []
    for name in backends.names():
        try:
            found.append(get_backend(name))
        except Exception:  # noqa: BLE001 - a broken third-party plug-in must not hide the others
            continue
    return found
