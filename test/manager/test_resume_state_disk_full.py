"""The run's resume state on a full disk: a DiskFullError, and the previous state stays whole."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from RLA.errors import DiskFullError
from RLA.manager.experiment import ExperimentManager

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from small_disk import fill, free_space, small_disk  # noqa: E402,F401,F811

pytestmark = pytest.mark.timeout(120)


def test_a_state_that_does_not_fit_leaves_the_previous_one_whole(small_disk, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setattr(sys, "argv", ["train.py"])
    mgr = ExperimentManager()
    mgr.set_hyper_param(seed=1)
    mgr.configure(
        "full",
        rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "none"},
        data_root=str(small_disk / "data"),
        run_file=[],
    )
    layout = mgr.log_files_gen()
    mgr.add_custom_data("note", "first", mode="replace")
    mgr.save_state()
    fill(small_disk, leave=64_000)
    try:
        mgr.add_custom_data("blob", "y" * 400_000, mode="replace")
        with pytest.raises(DiskFullError):
            mgr.save_state()
        state = json.loads(layout.archive_tester_file.read_text())  # whole: the old file, not half a new one
        assert state["custom_data"] == {"note": "first"} and state["index"] == layout.index
    finally:
        free_space(small_disk)
        mgr.finish()
