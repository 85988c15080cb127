"""How to install an optional heavy dependency: the one text every missing-backend error shows.

Installing PyTorch without an index is never suggested: on an ordinary Linux machine it pulls a
multi-gigabyte CUDA build, and it ignores the CUDA version the user actually has. Every
:class:`RLA.errors.BackendNotInstalledError` about PyTorch builds its ``fix`` with
:func:`torch_hint`, so the advice reads the same everywhere and is changed in one place.
"""

from __future__ import annotations

from typing import Optional

#: pip's index of the CPU-only PyTorch wheels.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: PyTorch's install selector (OS, package manager, CUDA version -> the right command).
TORCH_SELECTOR = "https://pytorch.org/get-started/locally/"
#: How to install PyTorch: the CPU build, or the build matching the machine's CUDA.
TORCH_INSTALL_HINT = (
    f"install PyTorch for your machine: the CPU build with "
    f"`pip install torch --index-url {TORCH_CPU_INDEX}`, or the build for your CUDA "
    f"version with the command the selector at {TORCH_SELECTOR} gives"
)


def torch_hint(alternative: Optional[str] = None) -> str:
    """The ``fix`` of an error raised because PyTorch is missing.

    Args:
        alternative: what else the user can do instead (e.g. "set DL_FRAMEWORK: none"),
            appended after the install advice.
    """
    return f"{TORCH_INSTALL_HINT}; or {alternative}" if alternative else TORCH_INSTALL_HINT


__all__ = ["TORCH_CPU_INDEX", "TORCH_INSTALL_HINT", "TORCH_SELECTOR", "torch_hint"]
