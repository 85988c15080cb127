"""Bookkeeping options are not recorded as hyper-parameters, and resume still works (#18 item 8).

``arg_parser_postprocess`` adds ``--info``, ``--loaded_date`` and ``--loaded_task_name``; the SB3
example passes ``--data_root``; ``set_hyper_param(**vars(args))`` used to record all four as
hyper-parameters (a ``loaded_date`` column in ``rla list``, a different "hyper-parameter" for
every resume).
"""
from __future__ import annotations

import argparse
import json

import pytest

from RLA.loader import ExperimentLoader, arg_parser_postprocess
from RLA.manager.experiment import ExperimentManager
from RLA.manager.run_info import read_run_info
from RLA.query import list_runs

BOOKKEEPING = {"info", "loaded_date", "loaded_task_name", "data_root"}
CONFIG = {"LOG_USED": ["log", "csv", "tensorboard"], "DL_FRAMEWORK": "torch"}


def script_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data_root")
    arg_parser_postprocess(parser)
    return parser.parse_args(list(argv))


def start(tmp_path, args: argparse.Namespace, track=("seed",)) -> ExperimentManager:
    manager = ExperimentManager()
    manager.set_hyper_param(**vars(args))
    manager.add_record_param(list(track))
    manager.configure("toy", rla_config=dict(CONFIG), data_root=args.data_root, run_file=[],
                      code_root=str(tmp_path))
    return manager


@pytest.mark.timeout(120)
def test_bookkeeping_is_kept_out_of_every_recorded_hyper_parameter_set(tmp_path):
    data = str(tmp_path / "data")
    manager = start(tmp_path, script_args("--data_root", data, "--info", "first try"))
    layout = manager.log_files_gen()
    manager.print_args()
    manager.finish()
    info = read_run_info(layout.run_info_file)
    assert set(info["hyper_params"]) == {"lr", "seed"}
    assert info["bookkeeping"] == {"info": "first try", "loaded_date": "", "loaded_task_name": "",
                                   "data_root": data}
    assert set(json.loads((layout.code_dir / "parameter.json").read_text())) == {"lr", "seed"}
    assert "loaded_date" not in (layout.log_dir / "backup.txt").read_text()
    assert set(json.loads(layout.archive_tester_file.read_text())["hyper_param"]) == {"lr", "seed"}
    frame = list_runs(data)
    assert not BOOKKEEPING & set(frame.columns), sorted(frame.columns)
    assert manager.hyper_param["loaded_date"] == "", "the script's own values stay readable"


@pytest.mark.timeout(120)
def test_a_tracked_bookkeeping_key_is_a_hyper_parameter(tmp_path):
    manager = start(tmp_path, script_args("--data_root", str(tmp_path / "data"), "--info", "ablation"),
                    track=("info", "seed"))
    layout = manager.log_files_gen()
    manager.finish()
    info = read_run_info(layout.run_info_file)
    assert info["hyper_params"]["info"] == "ablation" and "info=ablation" in layout.name
    assert "info" not in info["bookkeeping"]


@pytest.mark.timeout(120)
def test_more_bookkeeping_keys_per_manager(tmp_path):
    manager = start(tmp_path, script_args("--data_root", str(tmp_path / "data")))
    manager.bookkeeping_keys = manager.bookkeeping_keys + ("lr",)
    layout = manager.log_files_gen()
    manager.finish()
    assert set(read_run_info(layout.run_info_file)["hyper_params"]) == {"seed"}


@pytest.mark.timeout(180)
def test_resume_reads_the_selection_and_returns_what_scripts_expect(tmp_path):
    import torch

    from RLA.logger.time_step import time_step_holder

    data = str(tmp_path / "data")
    parent = start(tmp_path, script_args("--data_root", data, "--lr", "0.5", "--info", "parent"))
    old = parent.log_files_gen()
    parent.new_saver(max_to_keep=None)
    time_step_holder.set_time(7)
    parent.save_checkpoint({"w": torch.zeros(1)})
    parent.finish()

    child = start(tmp_path, script_args("--data_root", data, "--loaded_date", old.record_date, "--info", "resumed"))
    loader = ExperimentLoader(child)
    args = loader.import_hyper_parameters()
    assert args.lr == 0.5, "the past run's hyper-parameters win"
    assert (args.loaded_date, args.info, args.data_root, args.loaded_task_name) == \
        (old.record_date, "resumed", data, ""), "the current bookkeeping values are returned"
    child.set_hyper_param(**vars(args))
    layout = child.log_files_gen()
    assert loader.fork_log_files() == 7
    child.finish()
    time_step_holder.set_time(0)
    info = read_run_info(layout.run_info_file)
    assert info["parent"] == old.index and set(info["hyper_params"]) == {"lr", "seed"}
    assert info["bookkeeping"]["loaded_date"] == old.record_date


@pytest.mark.timeout(180)
def test_a_run_recorded_with_bookkeeping_as_hyper_parameters_still_resumes(tmp_path):
    data = str(tmp_path / "data")
    parent = start(tmp_path, script_args("--data_root", data))
    parent.bookkeeping_keys = ()  # what runs recorded before: everything as a hyper-parameter
    old = parent.log_files_gen()
    parent.finish()
    assert read_run_info(old.run_info_file)["hyper_params"]["data_root"] == data
    moved = str(tmp_path / "elsewhere")
    child = start(tmp_path, script_args("--data_root", moved, "--loaded_date", old.index, "--info", "new"))
    child.data_root = parent.data_root  # the same database, opened from another path
    args = ExperimentLoader(child).import_hyper_parameters()
    assert (args.data_root, args.info, args.loaded_date) == (moved, "new", old.index), \
        "the past run's recorded bookkeeping never overrides the current values"
