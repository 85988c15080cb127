"""A run continued in place (the restart path of every integration), TensorBoard included."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from RLA import logger, time_step_holder
from RLA.integrations import same_run
from RLA.manager.experiment import ExperimentManager


def _events_steps(tb_dir: Path) -> list:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tb_dir))
    acc.Reload()
    return sorted(event.step for event in acc.Scalars("score"))


@pytest.fixture
def killed_run(tmp_path: Path) -> ExperimentManager:
    manager = ExperimentManager()
    manager.set_hyper_param(seed=0)
    manager.add_record_param(["seed"])
    manager.configure("same", rla_config={"LOG_USED": ["csv", "log", "tensorboard"], "DL_FRAMEWORK": "none"},
                      data_root=tmp_path / "data", run_file=[])
    manager.log_files_gen()
    for step in range(10):
        time_step_holder.set_time(step)
        logger.record_tabular("score", float(step))
        logger.dump_tabular()
        if step in (5, 8):
            manager.save_checkpoint({"w": np.full(2, step)})
    manager.finish(status="crashed", error="boom")
    return manager


def test_continue_run_cuts_every_log_and_keeps_the_run(killed_run: ExperimentManager) -> None:
    layout = killed_run.layout
    same_run.continue_run(killed_run, layout, 5, "test restart")
    assert time_step_holder.get_time() == 5
    info = json.loads(layout.run_info_file.read_text())
    assert info["status"] == "running" and info["restarts"][0]["previous_status"] == "crashed"
    assert pd.read_csv(layout.log_dir / "progress.csv")["time-step"].tolist() == list(range(6))
    assert sorted(p.name for p in layout.checkpoint_dir.iterdir()) == ["checkpoint-5.npz"]
    for step in range(6, 10):
        time_step_holder.set_time(step)
        logger.record_tabular("score", float(step))
        logger.dump_tabular()
    killed_run.finish()
    assert pd.read_csv(layout.log_dir / "progress.csv")["time-step"].tolist() == list(range(10))
    assert _events_steps(layout.log_dir / "tb") == list(range(10))
    assert json.loads(layout.run_info_file.read_text())["status"] == "finished"
    assert "test restart" in (layout.log_dir / "log.txt").read_text()
    assert not (layout.log_dir / same_run.SCRATCH).exists()


def test_a_cut_interrupted_after_its_commit_point_is_repaired(killed_run: ExperimentManager,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    layout = killed_run.layout

    def stop(*args: object) -> None:
        raise KeyboardInterrupt("killed during the cut")

    monkeypatch.setattr(same_run.continuation, "continue_log_dir", stop)
    with pytest.raises(KeyboardInterrupt):
        same_run.continue_run(killed_run, layout, 5, "first try")
    assert not (layout.log_dir / "progress.csv").exists() and (layout.log_dir / same_run.SCRATCH).is_dir()
    monkeypatch.undo()
    same_run.continue_run(killed_run, layout, 5, "second try")
    killed_run.finish()
    assert pd.read_csv(layout.log_dir / "progress.csv")["time-step"].tolist() == list(range(6))
    assert _events_steps(layout.log_dir / "tb") == list(range(6))


def test_a_run_name_from_outside_is_checked(tmp_path: Path) -> None:
    from RLA.safe_paths import UnsafePathError

    with pytest.raises(UnsafePathError):
        same_run.layout_of(tmp_path, "../etc/2026/01/01/x")
