"""Runs made by the real experiment manager and logger are listed, queried and plotted."""
from __future__ import annotations

import pytest


@pytest.mark.timeout(120)
def test_a_real_run_is_listed_with_its_params_and_metrics(manager, tmp_path):
    from RLA.easy_log import logger
    from RLA.logger.time_step import time_step_holder
    from RLA.query import list_runs, load_curves

    manager.log_files_gen()
    for step in range(5):
        time_step_holder.set_time(step * 10)
        logger.record_tabular("return", float(step))
        logger.dump_tabular()
    manager.finish()
    frame = list_runs(tmp_path / "data", task="demo_task", where="env_id == 'Hopper-v4' and lr == 0.001")
    assert len(frame) == 1
    row = frame.iloc[0]
    assert row["index"] == manager.index and row["status"] == "finished" and row["seed"] == 1
    assert row["last(return)"] == 4.0 and row["time_step"] == 40
    curves = load_curves(frame, "return")
    assert curves["time-step"].tolist() == [0, 10, 20, 30, 40]
