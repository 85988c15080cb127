"""A missing PyTorch is reported with how to get the CPU build or the build for the user's CUDA."""
from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from RLA.errors import BackendNotInstalledError
from RLA.install_hints import TORCH_CPU_INDEX, TORCH_INSTALL_HINT, TORCH_SELECTOR, torch_hint

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import torch`` raises ImportError for the duration of the test."""
    monkeypatch.setitem(sys.modules, "torch", None)


def assert_full_hint(exc: BackendNotInstalledError) -> None:
    text = str(exc)
    assert f"pip install torch --index-url {TORCH_CPU_INDEX}" in text
    assert TORCH_SELECTOR in text and "CUDA" in text
    assert TORCH_INSTALL_HINT in (exc.fix or "")


def test_the_hint_names_the_cpu_index_and_the_cuda_selector() -> None:
    assert "--index-url https://download.pytorch.org/whl/cpu" in TORCH_INSTALL_HINT
    assert "https://pytorch.org/get-started/locally/" in TORCH_INSTALL_HINT
    assert torch_hint("use npz").startswith(TORCH_INSTALL_HINT) and torch_hint("use npz").endswith("or use npz")


def test_torch_backend_without_torch(no_torch: None) -> None:
    from RLA.checkpoint.torch_backend import TorchBackend

    with pytest.raises(BackendNotInstalledError) as info:
        TorchBackend().check_available()
    assert_full_hint(info.value)
    assert "DL_FRAMEWORK: none" in str(info.value)


def test_numpy_checkpoint_holding_tensors_without_torch(no_torch: None) -> None:
    from RLA.checkpoint.numpy_backend import NumpyBackend

    with pytest.raises(BackendNotInstalledError) as info:
        NumpyBackend._from_array(np.zeros(3, np.float32), {"kind": "tensor", "dtype": "torch.float32",
                                                           "shape": [3]}, None)
    assert_full_hint(info.value)


def test_pt_trajectory_files_without_torch(no_torch: None) -> None:
    from RLA.replay_buffer.trajectory_files import check_format

    with pytest.raises(BackendNotInstalledError) as info:
        check_format("pt", allow_pickle=False)
    assert_full_hint(info.value)
    assert "npz" in str(info.value)


def test_registry_entry_of_the_torch_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    from RLA.checkpoint.registry import backends

    fresh = copy.copy(backends)
    fresh._entries = {"torch": "RLA.checkpoint.torch_backend:TorchBackend"}
    monkeypatch.setitem(sys.modules, "RLA.checkpoint.torch_backend", None)
    with pytest.raises(BackendNotInstalledError) as info:
        fresh.get("torch")
    assert_full_hint(info.value)


def test_no_message_suggests_a_bare_pip_install_torch() -> None:
    bare = re.compile(r"pip install torch(?! --index-url)")
    offenders = [f"{path.relative_to(REPO)}:{number}"
                 for folder in ("RLA", "rla_scripts")
                 for path in sorted((REPO / folder).rglob("*.py"))
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if bare.search(line)]
    assert offenders == []
