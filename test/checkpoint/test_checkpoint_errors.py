"""Bad input to checkpoints: each a CheckpointError with the path and a fix; nothing changes on disk."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Dict, Tuple

import numpy as np
import pytest
import torch

from RLA.checkpoint import CheckpointSaver
from RLA.errors import BackendNotInstalledError, CheckpointError


def snapshot(folder: Path) -> Dict[str, Tuple[int, int, bytes]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(folder.iterdir())}


def flip_a_byte_in_the_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.timeout(60)
def test_missing_step_names_the_folder_and_the_saved_steps(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend)
    saver.save(10, {})
    saver.save(20, {})
    with pytest.raises(CheckpointError) as info:
        saver.load(15)
    message = str(info.value)
    assert str(tmp_path) in message and "10, 20" in message and "Fix:" in message


@pytest.mark.timeout(60)
def test_empty_or_missing_folder_is_a_checkpoint_error(tmp_path, backend):
    with pytest.raises(CheckpointError, match="folder does not exist"):
        CheckpointSaver(tmp_path / "nope", backend=backend).load()
    assert not (tmp_path / "nope").exists(), "loading never creates folders"
    with pytest.raises(CheckpointError, match="no checkpoint"):
        CheckpointSaver(tmp_path, backend=backend).load()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_corrupt_file_is_reported_with_its_path(tmp_path, backend, damage):
    saver = CheckpointSaver(tmp_path, backend=backend)
    path = saver.save(5, {"w": np.arange(50_000, dtype=np.float64)})
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "flip":
        flip_a_byte_in_the_middle(path)
    else:
        path.write_bytes(b"definitely not a checkpoint")
    before = snapshot(tmp_path)
    with pytest.raises(CheckpointError, match="corrupt or truncated") as info:
        saver.load(5)
    assert str(path) in str(info.value) and "Fix:" in str(info.value)
    assert snapshot(tmp_path) == before


@pytest.mark.timeout(60)
def test_newest_corrupt_checkpoint_falls_back_to_the_previous_complete_one(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend)
    saver.save(1, {"w": np.ones(1000)})
    newest = saver.save(2, {"w": np.zeros(1000)})
    flip_a_byte_in_the_middle(newest)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step, state = saver.load()
    assert step == 1 and state["w"].sum() == 1000
    assert any(str(newest) in str(w.message) for w in caught)


@pytest.mark.timeout(60)
def test_only_corrupt_checkpoints_raise_instead_of_returning_garbage(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend)
    path = saver.save(1, {"w": np.ones(1000)})
    flip_a_byte_in_the_middle(path)
    with pytest.raises(CheckpointError, match="corrupt"):
        saver.load()


@pytest.mark.timeout(60)
def test_a_folder_of_another_backend_says_which_backend_to_use(tmp_path):
    CheckpointSaver(tmp_path, backend="numpy").save(3, {"a": 1})
    before = snapshot(tmp_path)
    with pytest.raises(CheckpointError, match="'numpy' backend") as info:
        CheckpointSaver(tmp_path, backend="torch").load()
    assert "backend='numpy'" in str(info.value) and str(tmp_path) in str(info.value)
    assert snapshot(tmp_path) == before


@pytest.mark.timeout(60)
def test_another_backends_file_under_my_extension_is_named(tmp_path):
    path = CheckpointSaver(tmp_path, backend="numpy").save(3, {"a": 1})
    path.rename(tmp_path / "checkpoint-3.pt")
    with pytest.raises(CheckpointError, match="written by the 'numpy' backend") as info:
        CheckpointSaver(tmp_path, backend="torch").load(3)
    assert "checkpoint-3.pt" in str(info.value)
    torch_file = CheckpointSaver(tmp_path / "t", backend="torch").save(4, {"a": 1})
    torch_file.rename(tmp_path / "checkpoint-4.npz")
    with pytest.raises(CheckpointError, match="written by the 'torch' backend"):
        CheckpointSaver(tmp_path, backend="numpy").load(4)


@pytest.mark.timeout(60)
def test_unstorable_value_fails_before_anything_is_written(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend, max_to_keep=1)
    saver.save(1, {"ok": 1})
    before = snapshot(tmp_path)

    class Opaque:
        pass

    with pytest.raises(CheckpointError, match=r"related\.thing") as info:
        saver.save(2, {"related": {"thing": Opaque()}})
    assert "Opaque" in str(info.value)
    with pytest.raises(CheckpointError, match="Python objects"):
        saver.save(2, {"arr": np.array([object()])})
    assert snapshot(tmp_path) == before


@pytest.mark.timeout(60)
def test_legacy_file_with_pickled_objects_is_refused_by_weights_only(tmp_path):
    torch.save({"obj": np.array([1, 2])}, tmp_path / "checkpoint-1.pt")  # needs unpickling numpy
    with pytest.raises(CheckpointError, match="weights_only=False"):
        CheckpointSaver(tmp_path, backend="torch").load(1)


@pytest.mark.timeout(60)
def test_bad_names_steps_and_max_to_keep_are_rejected(tmp_path):
    saver = CheckpointSaver(tmp_path, backend="numpy")
    with pytest.raises(CheckpointError, match="Bad checkpoint name"):
        saver.save(1, {}, name="../evil")
    with pytest.raises(CheckpointError, match="Bad checkpoint name"):
        saver.save(1, {}, name="7")
    with pytest.raises(CheckpointError, match="Bad checkpoint step"):
        saver.save("7", {})
    with pytest.raises(CheckpointError, match="Bad max_to_keep"):
        CheckpointSaver(tmp_path, backend="numpy", max_to_keep=-1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(60)
def test_tensorflow_slot_says_how_to_install(tmp_path):
    pytest.importorskip  # keep flake quiet
    try:
        import tensorflow  # noqa: F401
        pytest.skip("tensorflow is installed here")
    except ImportError:
        pass
    with pytest.raises(BackendNotInstalledError, match="pip install tensorflow"):
        CheckpointSaver(tmp_path, backend="tensorflow")


@pytest.mark.timeout(60)
def test_unknown_backend_suggests_the_close_name(tmp_path):
    from RLA.errors import RLAError

    with pytest.raises(RLAError, match="did you mean 'torch'"):
        CheckpointSaver(tmp_path, backend="troch")


@pytest.mark.timeout(30)
def test_the_fix_fits_what_is_left_in_the_folder(tmp_path):
    """Only 'best' left: the fix names it; nothing left: the fix says so (not 'pass None')."""
    saver = CheckpointSaver(tmp_path / "c", backend="numpy")
    saver.save(5, {"w": np.ones(1)}, name="best")
    with pytest.raises(CheckpointError) as info:
        saver.load_checkpoint()
    assert "ckp_index='best'" in info.value.fix
    with pytest.raises(CheckpointError) as info:
        CheckpointSaver(tmp_path / "empty", backend="numpy").load_checkpoint()
    assert "saved no checkpoint" in info.value.fix and "ckp_index=None" not in info.value.fix
