"""Fixtures of the loader tests: a manager with csv+json+tensorboard and a finished parent run."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from RLA.layout import RunLayout
from RLA.logger.time_step import time_step_holder
from RLA.manager.experiment import ExperimentManager

CONFIG = {"LOG_USED": ["log", "csv", "json", "tensorboard"], "DL_FRAMEWORK": "torch"}


@dataclass
class Parent:
    """The finished run the tests resume: rows at steps 0..9, checkpoints at 0, 3, 6, 9."""

    layout: RunLayout
    data_root: Path


@pytest.fixture
def mgr(tmp_path) -> Iterator[ExperimentManager]:
    manager = ExperimentManager()
    manager.set_hyper_param(lr=0.1, seed=3, loaded_date="", loaded_task_name="")
    manager.add_record_param(["seed"])
    manager.configure("toy", rla_config=dict(CONFIG), data_root=str(tmp_path / "data"), run_file=[],
                      code_root=str(tmp_path))
    yield manager
    manager.finish()
    time_step_holder.set_time(0)


@pytest.fixture
def parent(mgr) -> Parent:
    """Run A: logs ``loss = step`` at steps 0..9, saves a checkpoint every 3 steps, a figure at each save."""
    import torch

    from RLA.easy_log import logger

    layout = mgr.log_files_gen()
    mgr.new_saver(max_to_keep=None)
    for step in range(10):
        time_step_holder.set_time(step)
        logger.record_tabular("loss", float(step))
        logger.dump_tabular()
        if step % 3 == 0:
            mgr.save_checkpoint({"w": torch.full((2,), float(step))}, related_variable={"eps": step / 10})
            (layout.results_dir / f"{step}-fig.png").write_bytes(b"png")
    logger.warn("parent warning")
    mgr.finish()
    return Parent(layout, Path(mgr.data_root))
