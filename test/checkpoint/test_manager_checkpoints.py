"""exp_manager.new_saver / save_checkpoint / load_checkpoint (the CheckpointMixin)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from RLA.errors import CheckpointError, RunStateError
from RLA.logger.time_step import time_step_holder
from RLA.manager.experiment import ExperimentManager
from RLA.manager.run_info import read_run_info


@pytest.fixture
def torch_manager(tmp_path):
    mgr = ExperimentManager()
    mgr.set_hyper_param(seed=0)
    mgr.configure("ckpt_task", rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "torch"},
                  data_root=str(tmp_path / "data"), run_file=[], code_root=str(tmp_path))
    yield mgr
    mgr.finish()
    time_step_holder.set_time(0)


@pytest.mark.timeout(60)
def test_save_uses_the_time_step_and_the_framework_backend(torch_manager):
    torch_manager.log_files_gen()
    time_step_holder.set_time(123)
    path = torch_manager.save_checkpoint({"net": torch.nn.Linear(2, 2).state_dict()})
    assert path.parent == torch_manager.layout.checkpoint_dir and path.name == "checkpoint-123.pt"
    assert torch_manager.checkpoint_dir == str(path.parent) + "/"


@pytest.mark.timeout(60)
def test_framework_none_selects_the_numpy_backend(manager):
    manager.log_files_gen()
    time_step_holder.set_time(4)
    assert manager.save_checkpoint({"w": np.ones(3)}).name == "checkpoint-4.npz"
    time_step_holder.set_time(0)


@pytest.mark.timeout(60)
def test_load_returns_models_and_keeps_related_variables_typed(torch_manager):
    torch_manager.log_files_gen()
    torch_manager.new_saver(max_to_keep=2)
    net = torch.nn.Linear(3, 1)
    for step in (1, 2, 3):
        time_step_holder.set_time(step)
        torch_manager.save_checkpoint({"net": net.state_dict()}, related_variable={"best": np.float32(step),
                                                                                  "hist": (step, "x")})
    step, models = torch_manager.load_checkpoint()
    assert step == 3 and torch.equal(models["net"]["weight"], net.weight.detach())
    assert torch_manager.loaded_variables == {"best": np.float32(3), "hist": (3, "x")}
    assert type(torch_manager.loaded_variables["best"]) is np.float32
    assert torch_manager.saver.steps() == [2, 3]
    assert torch_manager.load_checkpoint(2)[0] == 2


@pytest.mark.timeout(60)
def test_related_variables_and_step_reach_the_resume_state_and_run_json(torch_manager):
    layout = torch_manager.log_files_gen()
    time_step_holder.set_time(9)
    torch_manager.save_checkpoint(related_variable={"epsilon": 0.25})
    state = json.loads(layout.archive_tester_file.read_text())
    assert state["custom_data"]["epsilon"] == 0.25 and state["custom_data"]["time-step"] == 9
    assert read_run_info(layout.run_info_file)["last_checkpoint"] == {"step": 9, "file": "checkpoint-9.pt"}


@pytest.mark.timeout(60)
def test_save_without_arguments_works_as_in_the_readme(torch_manager):
    torch_manager.log_files_gen()
    torch_manager.new_saver()
    torch_manager.save_checkpoint()
    assert torch_manager.load_checkpoint() == (0, {})


@pytest.mark.timeout(60)
def test_named_best_checkpoint_is_kept_and_loadable(torch_manager):
    torch_manager.log_files_gen()
    torch_manager.new_saver(max_to_keep=1)
    time_step_holder.set_time(5)
    torch_manager.save_checkpoint({"v": torch.ones(1)}, name="best")
    for step in (6, 7):
        time_step_holder.set_time(step)
        torch_manager.save_checkpoint({"v": torch.zeros(1)})
    assert torch_manager.load_checkpoint("best")[0] == 5
    assert torch_manager.saver.names() == ["best"]


@pytest.mark.timeout(60)
def test_var_prefix_limits_what_is_saved(torch_manager):
    torch_manager.log_files_gen()
    torch_manager.new_saver(var_prefix="actor")
    torch_manager.save_checkpoint({"actor/pi": torch.ones(1), "critic/q": torch.ones(1)})
    assert list(torch_manager.load_checkpoint()[1]) == ["actor/pi"]


@pytest.mark.timeout(60)
def test_a_second_run_in_the_process_does_not_inherit_the_saver_options(torch_manager, tmp_path):
    """Run 1 filters by var_prefix and keeps 1 torch file; run 2 (framework none, no
    new_saver) saves every model, as .npz, with the default rotation."""
    torch_manager.log_files_gen()
    torch_manager.new_saver(var_prefix="pi", max_to_keep=1)
    torch_manager.save_checkpoint({"pi": torch.ones(1)})
    torch_manager.configure("other", rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "none"},
                            data_root=str(tmp_path / "data"), run_file=[],
                            code_root=str(tmp_path))
    torch_manager.log_files_gen()
    for step in (1, 2):
        time_step_holder.set_time(step)
        torch_manager.save_checkpoint({"q_net": np.arange(3.0), "target": np.zeros(3)})
    names = sorted(p.name for p in torch_manager.layout.checkpoint_dir.glob("checkpoint-*"))
    assert names == ["checkpoint-1.npz", "checkpoint-2.npz"]
    assert sorted(torch_manager.load_checkpoint()[1]) == ["q_net", "target"]


@pytest.mark.timeout(60)
def test_restore_rng_continues_the_saved_random_stream(torch_manager):
    torch_manager.log_files_gen()
    torch_manager.save_checkpoint()
    expected = (random.random(), np.random.rand(), torch.rand(2))
    torch_manager.load_checkpoint(restore_rng=True)
    got = (random.random(), np.random.rand(), torch.rand(2))
    assert expected[:2] == got[:2] and torch.equal(expected[2], got[2])


@pytest.mark.timeout(60)
def test_restore_rng_without_saved_state_is_an_error(torch_manager):
    torch_manager.log_files_gen()
    torch_manager.new_saver(save_rng=False)
    torch_manager.save_checkpoint()
    with pytest.raises(CheckpointError, match="no RNG state"):
        torch_manager.load_checkpoint(restore_rng=True)


@pytest.mark.timeout(60)
def test_a_new_run_saves_into_its_own_folder(torch_manager):
    first = torch_manager.log_files_gen()
    torch_manager.new_saver(max_to_keep=1)
    torch_manager.save_checkpoint()
    second = torch_manager.log_files_gen()
    path = torch_manager.save_checkpoint()
    assert path.parent == second.checkpoint_dir != first.checkpoint_dir
    assert torch_manager.saver.max_to_keep == 1
    assert list(first.checkpoint_dir.iterdir()) != []


@pytest.mark.timeout(60)
def test_checkpoints_need_a_run(torch_manager):
    with pytest.raises(RunStateError, match="log_files_gen"):
        torch_manager.save_checkpoint()
    with pytest.raises(RunStateError, match="log_files_gen"):
        torch_manager.new_saver()
