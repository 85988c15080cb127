"""TensorBoard output read back with TensorBoard's own event reader."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from RLA.easy_log import logger
from RLA.logger.time_step import time_step_holder

pytestmark = pytest.mark.timeout(60)
EventAccumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator").EventAccumulator


def accumulate(log_dir: Path) -> EventAccumulator:
    acc = EventAccumulator(str(log_dir / "tb"), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def run_steps(log_dir: Path) -> None:
    logger.configure(str(log_dir), ["csv", "tensorboard"],
                     hyper_params={"lr": 3e-4, "env": "Hopper-v4", "net": {"sizes": [64, 64]}})
    for i in range(5):
        time_step_holder.set_time(i * 1000)
        logger.record_tabular("perf/reward", float(i) * 2)
        logger.record_tabular("loss", np.float32(1.0 / (i + 1)))
        logger.record_tabular("phase", "warmup" if i < 2 else "train")
        logger.record_tabular("hist", np.arange(3))
        if i >= 3:
            logger.record_tabular("late", i)
        logger.dump_tabular()
    logger.reset()


def test_scalars_land_at_the_time_step(tmp_path: Path) -> None:
    run_steps(tmp_path)
    acc = accumulate(tmp_path)
    scalars = acc.Tags()["scalars"]
    assert sorted(scalars) == ["late", "loss", "perf/reward"]
    reward = acc.Scalars("perf/reward")
    assert [e.step for e in reward] == [0, 1000, 2000, 3000, 4000]
    assert [e.value for e in reward] == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert [e.step for e in acc.Scalars("late")] == [3000, 4000]
    assert acc.Scalars("loss")[1].value == pytest.approx(0.5)


def test_non_numeric_values_are_skipped_with_one_warning_per_key(tmp_path: Path) -> None:
    run_steps(tmp_path)
    warnings = (tmp_path / "warn.txt").read_text().splitlines()
    assert len(warnings) == 2
    assert "key 'phase' has a non-numeric value (str)" in warnings[0]
    assert "key 'hist' has a non-numeric value (ndarray)" in warnings[1]
    import pandas as pd
    assert list(pd.read_csv(tmp_path / "progress.csv")["phase"]) == ["warmup"] * 2 + ["train"] * 3


def test_hyper_parameters_recorded_once(tmp_path: Path) -> None:
    run_steps(tmp_path)
    acc = accumulate(tmp_path)
    tensors = acc.Tags()["tensors"]
    assert "hyperparameters/text_summary" in tensors
    events = acc.Tensors("hyperparameters/text_summary")
    assert len(events) == 1
    text = events[0].tensor_proto.string_val[0].decode()
    assert "| lr | 0.0003 |" in text and "| env | Hopper-v4 |" in text
    plugins = acc.PluginTagToContent("hparams")
    assert "_hparams_/session_start_info" in plugins and "_hparams_/experiment" in plugins
    from tensorboard.plugins.hparams import plugin_data_pb2
    data = plugin_data_pb2.HParamsPluginData.FromString(plugins["_hparams_/session_start_info"])
    hps = data.session_start_info.hparams
    assert hps["lr"].number_value == pytest.approx(3e-4)
    assert hps["env"].string_value == "Hopper-v4"
    assert hps["net.sizes"].string_value == "[64, 64]"


def test_get_tbx_writer_is_the_summary_writer(tmp_path: Path) -> None:
    from tensorboardX import SummaryWriter
    logger.configure(str(tmp_path), ["tensorboard"])
    writer = logger.get_tbx_writer()
    assert isinstance(writer, SummaryWriter)
    writer.add_histogram("weights", np.random.default_rng(0).normal(size=100), 5)
    logger.reset()
    assert "weights" in accumulate(tmp_path).Tags()["histograms"]


def test_time_columns_are_not_tensorboard_scalars(tmp_path: Path) -> None:
    run_steps(tmp_path)
    scalars = accumulate(tmp_path).Tags()["scalars"]
    assert "time-step" not in scalars and "timestamp" not in scalars
