"""The DQN sweep (3 seeds x 2 learning rates) on Ray Tune: every trial is one RLA run.

    pip install -c .ci/constraints.txt -e ".[torch,ray]" gymnasium
    python example/dqn_cartpole/tune_sweep.py --data-root ./data            # 30 000 steps per trial
    python example/dqn_cartpole/tune_sweep.py --data-root ./data --quick    # 5 000 steps per trial
    rla list --data-root ./data --task dqn_tune --where 'lr == 0.0005' --metrics eval/return
    rla plot --data-root ./data --task dqn_tune --split-keys lr --metrics eval/return --band ci

``--asha`` adds an ASHA scheduler (its early-stopped trials are listed as ``killed``);
``--max-failures N`` lets Tune retry a failed trial from its last checkpoint (the same run).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from RLA.integrations import ray_tune as rla_tune  # noqa: E402

TASK = "dqn_tune"
QUICK = {"total_steps": 5000, "eval_interval": 1000, "eval_episodes": 10, "learning_starts": 500,
         "checkpoint_interval": 1000}
FULL = {"total_steps": 30000, "eval_interval": 2500, "eval_episodes": 20, "checkpoint_interval": 5000}


def trial(config: Dict[str, Any]) -> None:
    """One Tune trial: the example's DQN loop, reporting through RLA."""
    sys.path.insert(0, HERE)  # the trial runs in a Ray worker
    from loop import train

    train(config, rla_tune.report, lambda buffer: rla_tune.restore(buffer=buffer))


def main() -> None:
    from ray import tune

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", default=os.path.join(HERE, "data"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--asha", action="store_true", help="stop weak trials early (ASHA)")
    parser.add_argument("--max-failures", type=int, default=1)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--total-steps", type=int, default=None, help="override the steps per trial")
    args = parser.parse_args()
    steps = {} if args.total_steps is None else {"total_steps": args.total_steps}
    space = {**(QUICK if args.quick else FULL), **steps, "seed": tune.grid_search([0, 1, 2]),
             "lr": tune.grid_search([5e-4, 1e-3])}
    scheduler = tune.schedulers.ASHAScheduler(time_attr="training_iteration", grace_period=10) \
        if args.asha else None
    import ray

    ray.init(num_cpus=args.cpus, include_dashboard=False)
    tuner = tune.Tuner(
        rla_tune.trainable(trial, task=TASK, param_space=space, data_root=args.data_root,
                           rla_config=os.path.join(HERE, "rla_config.yaml")),
        param_space=space,
        tune_config=tune.TuneConfig(metric="train/episode_return", mode="max", scheduler=scheduler),
        run_config=tune.RunConfig(storage_path=os.path.join(os.path.abspath(args.data_root), "ray_results"),
                                  failure_config=tune.FailureConfig(max_failures=args.max_failures), verbose=1))
    results = tuner.fit()
    best = results.get_best_result()
    print(f"best trial: lr={best.config['lr']} seed={best.config['seed']} run {best.metrics['rla_index']}")
    ray.shutdown()


if __name__ == "__main__":
    main()
