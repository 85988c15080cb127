"""Durable saves: each checkpoint and JSON state file is fsynced, renamed, then its folder fsynced."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from RLA.checkpoint import CheckpointSaver
from RLA.fs import atomic_write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from write_order import WriteOrder  # noqa: E402


def test_atomic_write_json_fsyncs_the_temp_then_renames_then_fsyncs_the_folder(tmp_path: Path,
                                                                               monkeypatch) -> None:
    order = WriteOrder(monkeypatch)
    atomic_write_json(tmp_path / "run.json", {"status": "running"})
    atomic_write_json(tmp_path / "run.json", {"status": "finished"})  # replacing an existing file
    order.assert_durable(tmp_path / "run.json")


def test_checkpoint_save_fsyncs_the_file_then_renames_then_fsyncs_the_folder(tmp_path: Path, backend: str,
                                                                              monkeypatch) -> None:
    saver = CheckpointSaver(tmp_path / "ckpt", backend=backend, max_to_keep=1)
    order = WriteOrder(monkeypatch)
    path = saver.save(5, {"w": np.arange(10.0)})
    order.assert_durable(path)
