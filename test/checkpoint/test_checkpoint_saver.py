"""CheckpointSaver: round trips per backend, rotation, named checkpoints, foreign files."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest
import torch

from RLA.checkpoint import CheckpointSaver
from RLA.errors import CheckpointError

from ckpt_helpers import assert_same, rich_state


@pytest.mark.timeout(60)
def test_round_trip_keeps_every_type(tmp_path, backend):
    state = rich_state()
    saver = CheckpointSaver(tmp_path, backend=backend)
    saver.save(42, state)
    step, loaded = saver.load()
    assert step == 42
    assert_same(state, loaded)


@pytest.mark.timeout(60)
def test_restored_state_dict_loads_into_a_fresh_model(tmp_path, backend):
    torch.manual_seed(1)
    net = torch.nn.Linear(5, 2)
    CheckpointSaver(tmp_path, backend=backend).save(1, {"net": net})  # a module is stored as its state dict
    fresh = torch.nn.Linear(5, 2)
    fresh.load_state_dict(CheckpointSaver(tmp_path, backend=backend).load()[1]["net"])
    x = torch.randn(3, 5)
    assert torch.equal(fresh(x), net(x))


@pytest.mark.timeout(60)
def test_file_names_follow_the_step_and_backend_extension(tmp_path, backend):
    path = CheckpointSaver(tmp_path, backend=backend).save(7, {})
    assert path.name == f"checkpoint-7.{'pt' if backend == 'torch' else 'npz'}"
    assert stat.S_IMODE(path.stat().st_mode) & 0o044, "published checkpoints are readable by the group/others"


@pytest.mark.timeout(60)
def test_torch_file_loads_with_plain_torch_load_weights_only(tmp_path):
    path = CheckpointSaver(tmp_path, backend="torch").save(3, {"w": np.ones(2)})
    payload = torch.load(path, weights_only=True)
    assert "rla_header" in payload


@pytest.mark.timeout(60)
def test_rotation_keeps_the_newest_max_to_keep(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend, max_to_keep=2)
    for step in (10, 20, 30, 40):
        saver.save(step, {"s": step})
    assert saver.steps() == [30, 40]


@pytest.mark.timeout(60)
def test_saving_twice_at_one_step_keeps_the_file(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend, max_to_keep=1)
    saver.save(5, {"v": 1})
    saver.save(5, {"v": 2})
    assert saver.steps() == [5]
    assert saver.load() == (5, {"v": 2})


@pytest.mark.timeout(60)
def test_rotation_never_deletes_what_it_just_wrote_even_if_older(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend, max_to_keep=1)
    saver.save(100, {})
    saver.save(50, {})
    assert saver.steps() == [50]


@pytest.mark.timeout(60)
def test_max_to_keep_zero_or_none_keeps_everything(tmp_path, backend):
    for keep in (0, None):
        saver = CheckpointSaver(tmp_path / str(keep), backend=backend, max_to_keep=keep)
        for step in range(5):
            saver.save(step, {})
        assert saver.steps() == [0, 1, 2, 3, 4]


@pytest.mark.timeout(60)
def test_named_checkpoints_stay_outside_rotation(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend, max_to_keep=1)
    saver.save(3, {"score": 9}, name="best")
    for step in (4, 5, 6):
        saver.save(step, {})
    assert saver.names() == ["best"] and saver.steps() == [6]
    assert saver.load("best") == (3, {"score": 9})
    assert saver.load()[0] == 6, "a named checkpoint is never the 'newest' numbered one"


@pytest.mark.timeout(60)
def test_foreign_files_in_the_folder_are_ignored(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend, max_to_keep=1)
    for name in ("notes.txt", "checkpoint", "checkpoint-.pt", "checkpoint-x.y.pt", "model.pt", "checkpoint-3.pt.bak"):
        (tmp_path / name).write_text("not mine")
    (tmp_path / "checkpoint-9.index").mkdir()
    saver.save(1, {"a": 1})
    saver.save(2, {"a": 2})
    assert saver.load() == (2, {"a": 2})
    assert (tmp_path / "notes.txt").read_text() == "not mine" and (tmp_path / "model.pt").exists()


@pytest.mark.timeout(60)
def test_stale_temp_files_are_ignored_by_load_and_removed_by_the_next_save(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend)
    saver.save(1, {"a": 1})
    ext = saver.extension
    stale = tmp_path / f".checkpoint-2.{ext}.abc123.tmp"
    stale.write_bytes(b"half a file")
    assert saver.load() == (1, {"a": 1})
    assert stale.exists(), "loading never changes the folder"
    CheckpointSaver(tmp_path, backend=backend).save(3, {})
    assert not stale.exists()


@pytest.mark.timeout(60)
def test_legacy_plain_torch_save_file_is_read_as_saved(tmp_path):
    torch.save({"policy": {"w": torch.ones(2)}}, tmp_path / "checkpoint-12.pt")
    loaded = CheckpointSaver(tmp_path, backend="torch").load_checkpoint()
    assert loaded.legacy and loaded.step == 12
    assert torch.equal(loaded.state["policy"]["w"], torch.ones(2))


@pytest.mark.timeout(60)
def test_load_with_an_int_string_index(tmp_path, backend):
    saver = CheckpointSaver(tmp_path, backend=backend)
    saver.save(8, {"x": 1})
    assert saver.load("8") == (8, {"x": 1})
