"""A checkpoint brings the logs up to its step to disk (TensorBoard included)."""
from __future__ import annotations

import pytest

from RLA.easy_log import logger
from RLA.logger.time_step import time_step_holder
from RLA.manager.experiment import ExperimentManager


@pytest.mark.timeout(60)
def test_tensorboard_events_up_to_the_checkpoint_are_on_disk(tmp_path):
    (tmp_path / "rla_config.yaml").write_text("LOG_USED: [csv, tensorboard]\nDL_FRAMEWORK: none\n")
    mgr = ExperimentManager()
    mgr.configure("t", rla_config=str(tmp_path / "rla_config.yaml"), data_root=str(tmp_path / "db"), run_file=[])
    layout = mgr.log_files_gen()
    try:
        for step in range(40):
            time_step_holder.set_time(step)
            logger.record_tabular("loss", 1.0 / (step + 1))
            logger.dump_tabular()
        mgr.save_checkpoint(related_variable={"x": 1})
        scalars = logger.read_tb(str(layout.log_dir / "tb"))  # the run is still going
        assert sorted(scalars["loss"].dropna().index) == list(range(40))
    finally:
        mgr.finish()
