"""A task starting with ``arc:`` is refused where runs are made: the query index keys an archived
run ``arc:<task>/...``, so a run in such a task would be read back as another (archived) run and
silently left out of ``list_runs``."""

from pathlib import Path

import pytest

from RLA.errors import RLAError
from RLA.layout import check_task
from RLA.safe_paths import UnsafePathError


@pytest.mark.parametrize("task", ["arc:demo", "arc:", "arc:a/b"])
def test_a_task_spelling_an_archived_key_is_refused(task: str) -> None:
    with pytest.raises(UnsafePathError, match="index key of an archived run"):
        check_task(task)


@pytest.mark.parametrize("task", ["arc", "arcade/x", "a/arc:b", "archive"])
def test_tasks_that_only_look_alike_are_kept(task: str) -> None:
    assert check_task(task) == task


def test_a_run_is_not_started_in_such_a_task(tmp_path: Path) -> None:
    from RLA.easy_log.tester import exp_manager

    exp_manager.set_hyper_param(seed=0)
    with pytest.raises(RLAError, match="index key of an archived run"):
        exp_manager.configure(
            "arc:demo",
            rla_config={"LOG_USED": ["csv"], "DL_FRAMEWORK": "none"},
            data_root=str(tmp_path / "data"),
            run_file=[],
            code_root=str(tmp_path),
        )
        exp_manager.log_files_gen()
    assert not list((tmp_path / "data").rglob("progress.csv"))
