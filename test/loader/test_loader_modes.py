"""The three resume modes of ExperimentLoader, in one process."""
from __future__ import annotations

import argparse
import json

import pandas as pd
import pytest
import torch

from RLA.easy_log import logger
from RLA.loader import ExperimentLoader, arg_parser_postprocess, boolean_flag
from RLA.logger.readers import read_tb
from RLA.logger.time_step import time_step_holder
from RLA.manager.run_info import read_run_info


def start_child(mgr):
    time_step_holder.set_time(0)
    return mgr.log_files_gen()


@pytest.mark.timeout(60)
def test_mode1_load_a_pretrained_model_for_another_task(mgr, parent):
    mgr.configure("other_task", rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "torch"},
                  data_root=str(parent.data_root), run_file=[], code_root=str(parent.data_root))
    child = start_child(mgr)
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    load_iter, load_res, hist = loader.load_from_record_date()
    assert load_iter == 9 and torch.equal(load_res["w"], torch.full((2,), 9.0)) and hist == {"eps": 0.9}
    assert time_step_holder.get_time() == 0, "loading for another task keeps the new run's time-step"
    info = read_run_info(child.run_info_file)
    assert info["parent"] == parent.layout.index and info["resumed_from"]["mode"] == "load"
    assert not (child.log_dir / "progress.csv").exists(), "no log is continued without fork_log_files()"


@pytest.mark.timeout(60)
def test_mode1_loads_a_named_or_older_checkpoint_and_selected_variables(mgr, parent):
    start_child(mgr)
    loader = ExperimentLoader(mgr).config(None, parent.layout.index, parent.data_root)
    load_iter, load_res, hist = loader.load_from_record_date(ckp_index=3, variable_list=["eps"])
    assert load_iter == 3 and hist == {"eps": 0.3} and float(load_res["w"][0]) == 3.0


@pytest.mark.timeout(60)
def test_mode2_fork_continues_logs_up_to_the_restored_step(mgr, parent):
    child = start_child(mgr)
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    assert loader.fork_log_files(ckp_index=6) == 6
    load_iter, load_res, _ = loader.load_from_record_date(ckp_index=6)
    assert load_iter == 6 and time_step_holder.get_time() == 6
    for step in range(7, 12):
        time_step_holder.set_time(step)
        logger.record_tabular("loss", float(step))
        logger.dump_tabular()
    mgr.finish()
    csv = pd.read_csv(child.log_dir / "progress.csv")
    assert csv["time-step"].tolist() == list(range(12)) and csv["loss"].tolist() == [float(s) for s in range(12)]
    rows = [json.loads(line) for line in (child.log_dir / "progress.json").read_text().splitlines()]
    assert [r["time-step"] for r in rows] == list(range(12))
    tb = read_tb(str(child.log_dir / "tb"))
    assert tb["loss"].dropna().index.tolist() == list(range(12))
    assert tb["loss"].dropna().tolist() == [float(s) for s in range(12)]
    log_txt = (child.log_dir / "log.txt").read_text()
    assert log_txt.index("Logging to") < log_txt.index("resumed from") and "parent warning" in \
        (child.log_dir / "warn.txt").read_text()
    assert sorted(p.name for p in child.checkpoint_dir.iterdir()) == ["checkpoint-0.pt", "checkpoint-3.pt",
                                                                      "checkpoint-6.pt"]
    assert sorted(p.name for p in child.results_dir.iterdir()) == ["0-fig.png", "3-fig.png", "6-fig.png"]
    info = read_run_info(child.run_info_file)
    assert info["parent"] == parent.layout.index and info["resumed_from"] == {
        "index": parent.layout.index, "step": 6, "mode": "fork"}
    state = json.loads(child.archive_tester_file.read_text())
    assert state["parent"] == parent.layout.index


@pytest.mark.timeout(60)
def test_mode2_fork_tells_tensorboard_to_drop_the_parents_later_steps(mgr, parent):
    """The continued event files end with a SessionLog START at the step after the resume
    point: TensorBoard discards every older event after it (public tensorboardX API only)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.compat.proto.event_pb2 import SessionLog

    child = start_child(mgr)
    ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root).fork_log_files(ckp_index=6)
    mgr.finish()
    starts = [event.step for path in sorted((child.log_dir / "tb").rglob("*tfevents*"))
              for event in EventFileLoader(str(path)).Load()
              if event.HasField("session_log") and event.session_log.status == SessionLog.START]
    assert starts == [7]


@pytest.mark.timeout(60)
def test_mode2_fork_leaves_the_parent_untouched(mgr, parent):
    def snapshot():
        return {p: p.read_bytes() for kind in ("log", "checkpoint", "results")
                for p in sorted(parent.layout.path(kind).rglob("*")) if p.is_file()}

    before = snapshot()
    start_child(mgr)
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    loader.fork_log_files()
    loader.load_from_record_date()
    mgr.finish()
    assert snapshot() == before


@pytest.mark.timeout(60)
def test_mode2_restores_rng_so_the_random_stream_continues(mgr, parent):
    first = start_child(mgr)
    time_step_holder.set_time(100)
    mgr.save_checkpoint()
    expected = torch.rand(3)
    start_child(mgr)
    loader = ExperimentLoader(mgr).config("toy", first.record_date, parent.data_root)
    loader.fork_log_files()
    assert loader.load_from_record_date()[0] == 100
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.timeout(60)
def test_mode3_import_hyper_parameters_keeps_overwritten_keys(mgr, parent):
    mgr.set_hyper_param(lr=0.5, seed=3, loaded_date=parent.layout.record_date, loaded_task_name="toy")
    loader = ExperimentLoader(mgr)
    args = loader.import_hyper_parameters(hp_to_overwrite=["lr"])
    assert isinstance(args, argparse.Namespace)
    assert args.lr == 0.5 and args.seed == 3 and args.loaded_date == parent.layout.record_date
    assert mgr.hyper_param["lr"] == 0.5, "the manager is not changed"
    assert ExperimentLoader(mgr).import_hyper_parameters().lr == 0.1, "past values win by default"


@pytest.mark.timeout(60)
def test_mode3_sync_timestep_sets_the_past_checkpoint_step(mgr, parent):
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    time_step_holder.set_time(0)
    loader.import_hyper_parameters(sync_timestep=True)
    assert time_step_holder.get_time() == 9


@pytest.mark.timeout(60)
def test_fork_adopts_the_past_hyper_parameters_except_overwritten(mgr, parent):
    mgr.set_hyper_param(lr=0.9, seed=3, loaded_date="", loaded_task_name="")
    child = start_child(mgr)
    ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root).fork_log_files(
        hp_to_overwrite=["lr"])
    assert mgr.hyper_param["lr"] == 0.9
    assert read_run_info(child.run_info_file)["hyper_params"]["lr"] == 0.9


@pytest.mark.timeout(60)
def test_argparse_defaults_mean_start_fresh(mgr):
    parser = argparse.ArgumentParser()
    boolean_flag(parser, "use-gpu", default=True)
    arg_parser_postprocess(parser)
    args = parser.parse_args([])
    assert args.use_gpu is True and parser.parse_args(["--no-use-gpu"]).use_gpu is False
    assert parser.parse_args(["--use-gpu"]).use_gpu is True
    mgr.set_hyper_param(seed=3, **vars(args))
    layout = mgr.log_files_gen()
    loader = ExperimentLoader(mgr)
    assert not loader.is_valid_config
    assert loader.fork_log_files() is None
    assert loader.load_from_record_date() == (0, {}, {})
    assert vars(loader.import_hyper_parameters()) == {"seed": 3, **vars(args)}
    assert read_run_info(layout.run_info_file)["parent"] is None


@pytest.mark.timeout(60)
def test_loaded_date_from_the_command_line_selects_the_run(mgr, parent):
    mgr.set_hyper_param(lr=0.1, seed=3, loaded_date=parent.layout.record_date, loaded_task_name="")
    start_child(mgr)
    load_iter, _, _ = ExperimentLoader(mgr).load_from_record_date()
    assert load_iter == 9


@pytest.mark.timeout(60)
def test_the_original_module_faces_import(mgr):
    from RLA import ExperimentLoader as top
    from RLA.easy_log.exp_loader import ExperimentLoader as face, exp_loader

    assert top is face is ExperimentLoader and isinstance(exp_loader, ExperimentLoader)


@pytest.mark.timeout(60)
def test_a_resumed_run_can_be_resumed_again_before_its_own_replay_save(mgr):
    """A -> B -> C: B resumes A at step 6 and stops before saving a buffer; C resumes B and
    still finds the step-6 replay snapshot (B carried A's snapshots up to its step)."""
    import numpy as np

    from RLA.replay_buffer import ReplayBuffer

    def buffer(n):
        buf = ReplayBuffer(64, seed=1)
        buf.add({"x": np.arange(n, dtype=np.float32).reshape(-1, 1)})
        return buf

    a = start_child(mgr)
    mgr.new_saver(max_to_keep=None)
    for step in (3, 6, 9):
        time_step_holder.set_time(step)
        mgr.save_checkpoint({"w": torch.full((2,), float(step))})
        mgr.save_replay_buffer(buffer(step))
    mgr.finish()
    b = start_child(mgr)
    loader = ExperimentLoader(mgr).config("toy", a.record_date, mgr.data_root)
    assert loader.fork_log_files(ckp_index=6) == 6
    assert sorted(p.name for p in b.replay_dir.iterdir() if not p.name.startswith("seg")) == \
        ["step-3", "step-6"]
    mgr.finish()  # B ends before any save of its own
    start_child(mgr)
    loader = ExperimentLoader(mgr).config("toy", b.record_date, mgr.data_root)
    loader.fork_log_files()
    loader.load_from_record_date()
    restored = loader.load_replay_buffer(ReplayBuffer(64, seed=2))
    assert restored is not None
    assert len(restored) == 6 and restored.storage.arrays["x"][:6, 0].tolist() == list(range(6))
    assert (a.replay_dir / "step-9").is_dir(), "the parent keeps everything"


@pytest.mark.timeout(60)
def test_fork_carries_named_checkpoints_saved_up_to_its_step(mgr):
    """'best' (saved at step 4) comes over to a fork at step 6 and loads from the new run;
    'final' (step 9) was saved after the resume point and stays with the old run."""
    a = start_child(mgr)
    mgr.new_saver(max_to_keep=None)
    for step in range(10):
        time_step_holder.set_time(step)
        if step % 3 == 0:
            mgr.save_checkpoint({"w": torch.full((2,), float(step))})
        if step == 4:
            mgr.save_checkpoint({"w": torch.full((2,), 4.0)}, name="best")
    mgr.save_checkpoint({"w": torch.full((2,), 9.0)}, name="final")
    mgr.finish()
    b = start_child(mgr)
    loader = ExperimentLoader(mgr).config("toy", a.record_date, mgr.data_root)
    assert loader.fork_log_files(ckp_index=6) == 6
    names = sorted(p.name for p in b.checkpoint_dir.iterdir())
    assert names == ["checkpoint-0.pt", "checkpoint-3.pt", "checkpoint-6.pt", "checkpoint-best.pt"]
    mgr.finish()
    best = ExperimentLoader(mgr).config("toy", b.record_date, mgr.data_root)
    step, models, _ = best.load_from_record_date(ckp_index="best", verbose=False)
    assert step == 4 and float(models["w"][0]) == 4.0


@pytest.mark.timeout(60)
def test_sync_timestep_is_the_step_a_resume_restores_not_a_later_named_save(mgr):
    """Numbered checkpoints at 3 and 6, 'best' saved at 8: the resume restores step 6, and
    sync_timestep says 6 too (it said 8, the run's last saved time-step)."""
    a = start_child(mgr)
    for step in (3, 6, 8):
        time_step_holder.set_time(step)
        mgr.save_checkpoint({"w": torch.ones(1)}, name="best" if step == 8 else None)
    mgr.finish()
    loader = ExperimentLoader(mgr).config("toy", a.record_date, mgr.data_root)
    time_step_holder.set_time(0)
    loader.import_hyper_parameters(sync_timestep=True)
    assert time_step_holder.get_time() == 6
    assert loader.load_from_record_date(verbose=False)[0] == 6
