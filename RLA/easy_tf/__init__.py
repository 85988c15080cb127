"""The original's TensorFlow helpers (``RLA.easy_tf``): present, and TensorFlow only.

RLA records and checkpoints through PyTorch (or plain numpy); every function of these
modules raises :class:`RLA.errors.BackendNotInstalledError` naming the RLA call to use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from RLA.errors import BackendNotInstalledError


def tensorflow_only(name: str, replacement: str) -> Callable[..., Any]:
    """A function named ``name`` that raises BackendNotInstalledError pointing at ``replacement``."""

    def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise BackendNotInstalledError(
            f"{name} needs TensorFlow, which RLA does not support",
            expected="PyTorch (or numpy) models saved through RLA's checkpoints",
            found=f"a call to {name}",
            fix=replacement,
        )

    unavailable.__name__ = name.rsplit(".", 1)[-1]
    unavailable.__qualname__ = unavailable.__name__
    unavailable.__doc__ = f"TensorFlow only: raises BackendNotInstalledError ({replacement})."
    return unavailable


__all__ = ["tensorflow_only"]
