"""Hydra multirun (basic launcher, a real ``python app.py -m`` subprocess): one task, one run per job."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
import pytest

pytest.importorskip("hydra")

pytestmark = pytest.mark.timeout(180)
TASK = "hydra_sweep"

APP = '''
import hydra
from RLA import logger, time_step_holder
from RLA.integrations.hydra_run import rla_hydra


@hydra.main(config_path="conf", config_name="config", version_base=None)
@rla_hydra(task="hydra_sweep", rla_config={"LOG_USED": ["csv", "log"], "DL_FRAMEWORK": "none"},
           data_root="data")
def main(cfg):
    for step in range(5):
        time_step_holder.set_time(step)
        logger.record_tabular("score", cfg.optim.lr * step + cfg.seed)
        logger.dump_tabular()
    if cfg.seed == 1 and cfg.optim.lr == 0.2:
        raise RuntimeError("this job fails")


if __name__ == "__main__":
    main()
'''
CONFIG = '''
defaults:
  - env: cartpole
  - _self_
seed: 0
optim:
  lr: 0.1
  betas: [0.9, 0.999]
net:
  hidden: 64
  width: ${net.hidden}
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hydra")
    (folder / "conf" / "env").mkdir(parents=True)
    (folder / "app.py").write_text(APP)
    (folder / "conf" / "config.yaml").write_text(textwrap.dedent(CONFIG))
    (folder / "conf" / "env" / "cartpole.yaml").write_text("id: CartPole-v1\n")
    (folder / "conf" / "env" / "acrobot.yaml").write_text("id: Acrobot-v1\n")
    return folder


def _hydra(project: Path, *args: str, subprocess_env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "app.py", *args], cwd=project, capture_output=True, text=True,
                          timeout=120, env=subprocess_env)


def _runs(root: Path) -> List[Dict[str, Any]]:
    runs = [json.loads(f.read_text()) for f in sorted((root / "log" / TASK).rglob("run.json"))]
    return sorted(runs, key=lambda info: (info["hyper_params"]["optim"]["lr"], info["hyper_params"]["seed"]))


@pytest.fixture(scope="module")
def multirun(project: Path) -> Dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))  # this checkout
    done = _hydra(project, "-m", "optim.lr=0.1,0.2", "seed=0,1", "hydra.sweep.dir=sweep_out",
                  subprocess_env=env)
    return {"proc": done, "runs": _runs(project / "data"), "env": env}


def test_a_sweep_is_one_task_with_one_run_per_job(multirun: Dict[str, Any]) -> None:
    runs = multirun["runs"]
    assert len(runs) == 4, multirun["proc"].stderr[-2000:]
    assert {run["task"] for run in runs} == {TASK}
    assert sorted(run["hydra"]["job_num"] for run in runs) == [0, 1, 2, 3]


def test_the_composed_config_is_the_hyper_parameters(multirun: Dict[str, Any]) -> None:
    params = multirun["runs"][0]["hyper_params"]
    assert params["optim"] == {"lr": 0.1, "betas": [0.9, 0.999]}
    assert params["net"] == {"hidden": 64, "width": 64}  # interpolation resolved
    assert params["env"] == {"id": "CartPole-v1"} and params["hydra_choices"] == {"env": "cartpole"}


def test_command_line_overrides_are_the_tracked_keys(multirun: Dict[str, Any]) -> None:
    for run in multirun["runs"]:
        assert run["tracked_keys"] == ["optim.lr", "seed"]
        params = run["hyper_params"]
        assert run["name"].endswith(f"&optim.lr={params['optim']['lr']}&seed={params['seed']}")


def test_statuses_follow_the_jobs(multirun: Dict[str, Any]) -> None:
    statuses = [(run["hyper_params"]["optim"]["lr"], run["hyper_params"]["seed"], run["status"])
                for run in multirun["runs"]]
    assert statuses == [(0.1, 0, "finished"), (0.1, 1, "finished"), (0.2, 0, "finished"), (0.2, 1, "crashed")]
    assert multirun["runs"][-1]["error"] == "RuntimeError: this job fails"


def test_the_hydra_output_folder_is_linked_both_ways(multirun: Dict[str, Any], project: Path) -> None:
    for run in multirun["runs"]:
        output = Path(run["hydra"]["output_dir"])
        assert output.parent == (project / "sweep_out").resolve()
        assert (output / ".hydra" / "overrides.yaml").is_file()
        back = json.loads((output / "rla_run.json").read_text())
        assert back["index"] == run["index"] and Path(back["log_dir"], "run.json").is_file()
        assert not any(path.is_symlink() for path in Path(back["log_dir"]).iterdir())


def test_rla_list_where_on_a_dotted_key(multirun: Dict[str, Any], project: Path,
                                        capsys: pytest.CaptureFixture) -> None:
    from rla_scripts.cli import main

    assert main(["list", "--data-root", str(project / "data"), "--task", TASK, "--where", "optim.lr == 0.2",
                 "--columns", "status,seed", "--format", "csv"]) == 0
    table = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert sorted(table["seed"]) == [0, 1]


def test_a_config_group_override_is_tracked_by_its_choice(multirun: Dict[str, Any], project: Path) -> None:
    done = _hydra(project, "env=acrobot", "seed=5", subprocess_env=multirun["env"])
    assert done.returncode == 0, done.stderr[-2000:]
    run, = [r for r in _runs(project / "data") if r["hyper_params"]["seed"] == 5]
    assert run["tracked_keys"] == ["hydra_choices.env", "seed"]
    assert run["hyper_params"]["env"] == {"id": "Acrobot-v1"}
    assert run["hydra"]["mode"] == "RUN" and run["status"] == "finished"
