"""A run continued in place (reattach: a requeued job, a restored trial) shows as running at once."""
from __future__ import annotations

import pytest

from RLA.manager.experiment import ExperimentManager
from RLA.query import list_runs
from RLA.query.testing import age_tree


@pytest.mark.timeout(120)
def test_a_reattached_settled_run_is_listed_as_running_without_verify(manager, minimal_config, tmp_path):
    data_root = tmp_path / "data"
    layout = manager.log_files_gen()
    manager.finish()
    age_tree(data_root)
    assert list_runs(data_root)["status"].tolist() == ["finished"]
    age_tree(data_root)  # settled and its listings trusted: a plain query no longer stats its files
    assert list_runs(data_root)["status"].tolist() == ["finished"]

    again = ExperimentManager()
    again.set_hyper_param(env_id="Hopper-v4", lr=0.001, seed=1)
    again.configure("demo_task", rla_config=str(minimal_config), data_root=str(data_root), run_file=[])
    try:
        again.reattach(layout)
        assert list_runs(data_root)["status"].tolist() == ["running"]
    finally:
        again.finish()
    assert list_runs(data_root)["status"].tolist() == ["finished"]
