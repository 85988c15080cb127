"""The original project's README snippets run unchanged (TensorFlow lines aside)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SNIPPET_CONFIGURE = """
from RLA.easy_log.tester import exp_manager
kwargs = {'env_id': 'Hopper-v2', 'lr': 1e-3}
exp_manager.set_hyper_param(**kwargs) # kwargs are the hyper-parameters for your experiment
exp_manager.add_record_param(["env_id"]) # add parts of hyper-parameters to name the index of data items for better readability.
task_name = 'demo_task' # define your task
rla_data_root = '../' # the place to store the data items.
exp_manager.configure(task_name, private_config_path='../../../rla_config.yaml', data_root=rla_data_root)
exp_manager.log_files_gen() # initialize the data items.
exp_manager.print_args()
"""

SNIPPET_SCALARS = """
from RLA.easy_log import logger
from RLA.easy_log.time_step import time_step_holder
for i in range(1000):
    # time-steps (iterations)
    time_step_holder.set_time(i)
    # scalar variable
    value = 1
    logger.record_tabular("k", value)
"""

SNIPPET_CHECKPOINTS = """
from RLA.easy_log.tester import exp_manager
exp_manager.new_saver()
for i in range(1000):
    if i % 10 == 0:
        exp_manager.save_checkpoint()
"""

SNIPPET_FIGURE = """
from RLA.easy_log.complex_data_recorder import MatplotlibRecorder as mpr
def plot_func():
    import matplotlib.pyplot as plt
    plt.plot([1,1,1], [2,2,2])
mpr.pretty_plot_wrapper('func', plot_func, xlabel='x', ylabel='y', title='react test', )
"""

SNIPPET_SYNC = """
for i in range(1000):
    # your trianing code.
    exp_manager.sync_log_file()
"""

SNIPPET_TOP_LEVEL = """
from RLA import exp_manager, logger, time_step_holder, MatplotlibRecorder, ExperimentLoader, plot_func
"""


@pytest.mark.timeout(120)
def test_seed_readme_snippets_run_unchanged(tmp_path, subprocess_env):
    # The snippet's relative paths: config three levels up, data root one level up.
    work = tmp_path / "proj" / "a" / "b"
    work.mkdir(parents=True)
    (tmp_path / "proj" / "rla_config.yaml").write_text(textwrap.dedent("""
        LOG_USED: [stdout, log, csv, tensorboard]
        DL_FRAMEWORK: torch
        SEND_LOG_FILE: False
        REMOTE_SETTING:
          ftp_server: ''
          username: ''
          password: ''
          remote_data_root: ''
    """))
    (tmp_path / "proj" / "a" / "b").joinpath("x").mkdir()
    script = "\n".join([SNIPPET_CONFIGURE, SNIPPET_SCALARS, "logger.dump_tabular()", SNIPPET_CHECKPOINTS,
                        SNIPPET_FIGURE, SNIPPET_SYNC, SNIPPET_TOP_LEVEL])
    (work / "x" / "main.py").write_text(script)
    result = subprocess.run([sys.executable, "main.py"], cwd=work / "x", env=subprocess_env,
                            capture_output=True, text=True, timeout=110)
    assert result.returncode == 0, result.stderr[-3000:]
    data_root = work  # '../' from work/x
    logs = list((data_root / "log" / "demo_task").glob("*/*/*/*&env_id=Hopper-v2"))
    assert len(logs) == 1
    assert (logs[0] / "progress.csv").read_text().count("\n") >= 2
    checkpoints = list((data_root / "checkpoint" / "demo_task").rglob("checkpoint-*"))
    assert checkpoints  # rotation keeps the newest ones
    figures = list((data_root / "results" / "demo_task").rglob("*func.png"))
    assert figures
