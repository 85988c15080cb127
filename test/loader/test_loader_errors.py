"""Bad input to the loader: a specific RLAError with the path and a fix; the database unchanged."""
from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

from RLA.errors import CheckpointError, RLAError, RunNotFoundError, RunStateError
from RLA.loader import ExperimentLoader
from RLA.logger.time_step import time_step_holder


def database(root: Path) -> Dict[str, bytes]:
    """Every file of the database except the heartbeat-bearing run.json of the live run."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "run.json"}


@pytest.fixture
def child(mgr, parent):
    time_step_holder.set_time(0)
    return mgr.log_files_gen()


@pytest.mark.timeout(60)
def test_missing_run_names_the_data_root(mgr, parent, child):
    before = database(parent.data_root)
    loader = ExperimentLoader(mgr).config("toy", "1999/01/01/00-00-00-000000", parent.data_root)
    with pytest.raises(RunNotFoundError, match="1999/01/01") as info:
        loader.load_from_record_date()
    assert str(parent.data_root) in str(info.value) and "Fix:" in str(info.value)
    with pytest.raises(RunNotFoundError):
        loader.fork_log_files()
    assert database(parent.data_root) == before


@pytest.mark.timeout(60)
def test_missing_data_root_is_a_run_not_found_error(mgr, tmp_path):
    loader = ExperimentLoader(mgr).config("toy", "2024/01/01/00-00-00-000000", tmp_path / "nowhere")
    with pytest.raises(RunNotFoundError, match="does not exist"):
        loader.import_hyper_parameters()


@pytest.mark.timeout(60)
def test_missing_checkpoint_step_lists_the_saved_steps(mgr, parent, child):
    before = database(parent.data_root)
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    with pytest.raises(CheckpointError, match="has no checkpoint") as info:
        loader.fork_log_files(ckp_index=5)
    assert "0, 3, 6, 9" in str(info.value) and str(parent.layout.checkpoint_dir) in str(info.value)
    assert database(parent.data_root) == before, "a failed fork changes nothing, in the parent or the new run"


@pytest.mark.timeout(60)
def test_corrupt_checkpoint_fails_the_fork_before_any_file_changes(mgr, parent, child):
    newest = parent.layout.checkpoint_dir / "checkpoint-9.pt"
    newest.write_bytes(newest.read_bytes()[:100])
    before = database(parent.data_root)
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    with pytest.raises(CheckpointError, match="corrupt or truncated") as info:
        loader.fork_log_files(ckp_index=9)
    assert str(newest) in str(info.value)
    assert database(parent.data_root) == before


@pytest.mark.timeout(60)
def test_checkpoint_of_another_backend_says_which_backend(mgr, parent, child):
    import numpy as np

    from RLA.checkpoint import CheckpointSaver

    for path in parent.layout.checkpoint_dir.iterdir():
        path.unlink()
    CheckpointSaver(parent.layout.checkpoint_dir, backend="numpy").save(4, {"models": {"w": np.ones(2)}})
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    with pytest.raises(CheckpointError, match="'numpy' backend") as info:
        loader.load_from_record_date()
    assert "backend='numpy'" in str(info.value) and str(parent.layout.checkpoint_dir) in str(info.value)
    load_iter, load_res, _ = loader.load_from_record_date(backend="numpy")
    assert load_iter == 4 and load_res["w"].tolist() == [1.0, 1.0]


@pytest.mark.timeout(60)
def test_unknown_variable_is_an_error(mgr, parent, child):
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    with pytest.raises(CheckpointError, match=r"\['nope'\] were not saved"):
        loader.load_from_record_date(variable_list=["nope"])


@pytest.mark.timeout(60)
def test_overwriting_an_unknown_hyper_parameter_is_an_error(mgr, parent):
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    with pytest.raises(RLAError, match="'learning_rate'"):
        loader.import_hyper_parameters(hp_to_overwrite=["learning_rate"])


@pytest.mark.timeout(60)
def test_fork_needs_a_current_run(mgr, parent):
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    with pytest.raises(RunStateError, match="log_files_gen"):
        loader.fork_log_files()


@pytest.mark.timeout(60)
def test_a_run_cannot_be_forked_into_itself(mgr, parent, child):
    loader = ExperimentLoader(mgr).config("toy", child.record_date, parent.data_root)
    with pytest.raises(RLAError, match="into itself"):
        loader.fork_log_files()


@pytest.mark.timeout(60)
def test_loading_another_step_after_fork_is_refused(mgr, parent, child):
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    loader.fork_log_files(ckp_index=6)
    with pytest.raises(RLAError, match="same ckp_index"):
        loader.load_from_record_date(ckp_index=3)


@pytest.mark.timeout(60)
def test_legacy_pickle_state_is_never_unpickled(mgr, parent, child):
    state = parent.layout.archive_tester_file
    state.with_suffix(".pkl").write_bytes(b"\x80\x04not really a pickle")
    state.unlink()
    (parent.layout.log_dir / "run.json").unlink()
    loader = ExperimentLoader(mgr).config("toy", parent.layout.record_date, parent.data_root)
    with pytest.raises(RLAError, match="pickled state"):
        loader.import_hyper_parameters()


@pytest.mark.timeout(30)
def test_a_selected_run_before_configure_is_an_error_not_a_silent_fresh_start():
    from RLA.manager.experiment import ExperimentManager
    manager = ExperimentManager()
    manager.set_hyper_param(lr=0.5, loaded_date="task/2026/11/02/10-00-00-000000")
    loader = ExperimentLoader(manager)
    for call in (loader.import_hyper_parameters, loader.fork_log_files,
                 loader.load_from_record_date):
        with pytest.raises(RLAError, match="no data root is known"):
            call()
    manager.set_hyper_param(lr=0.5, loaded_date="")  # nothing selected: start fresh, quietly
    assert vars(loader.import_hyper_parameters()) == {"lr": 0.5, "loaded_date": ""}
