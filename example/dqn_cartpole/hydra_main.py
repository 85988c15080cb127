"""The DQN example under Hydra: every job (of a multirun sweep too) is one RLA run.

    pip install -c .ci/constraints.txt -e ".[torch,hydra]" gymnasium
    python example/dqn_cartpole/hydra_main.py -m lr=5e-4,1e-3 seed=0,1,2 total_steps=5000
    rla list --data-root example/dqn_cartpole/data --task dqn_hydra --where 'lr == 0.001' --metrics eval/return
    rla plot --data-root example/dqn_cartpole/data --task dqn_hydra --split-keys lr --metrics eval/return

The composed config (``conf/config.yaml`` + overrides) is the run's hyper-parameters
(``net.hidden`` is a dotted key in queries), the overridden keys name the run, and
``run.json`` records the job's Hydra output folder (which gets ``rla_run.json`` back).
"""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hydra  # noqa: E402

from RLA import exp_manager, logger, time_step_holder  # noqa: E402
from RLA.integrations.hydra_run import rla_hydra  # noqa: E402


def report(metrics: Dict[str, Any], step: int, checkpoint: Optional[Dict[str, Any]] = None,
           variables: Optional[Dict[str, Any]] = None, buffer: Any = None) -> None:
    """One row of the run (and, with ``checkpoint``, the replay snapshot + checkpoint of the step)."""
    time_step_holder.set_time(step)
    for key, value in metrics.items():
        logger.record_tabular(key, value)
    logger.dump_tabular()
    if checkpoint is not None:
        exp_manager.save_replay_buffer(buffer, keep_last=3)
        exp_manager.save_checkpoint(checkpoint, related_variable=variables)


@hydra.main(config_path="conf", config_name="config", version_base=None)
@rla_hydra(task="dqn_hydra", rla_config=os.path.join(HERE, "rla_config.yaml"),
           data_root=os.environ.get("RLA_DATA_ROOT") or os.path.join(HERE, "data"))
def main(cfg: Any) -> float:
    from omegaconf import OmegaConf

    from loop import train

    config = OmegaConf.to_container(cfg, resolve=True)
    config["hidden"] = config.pop("net")["hidden"]
    best = train(config, report, lambda buffer: (None, {}, {}))
    print(f"best greedy return {best:.1f}; run {exp_manager.index}")
    return best


if __name__ == "__main__":
    main()
