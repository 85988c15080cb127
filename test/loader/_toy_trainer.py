"""A deterministic toy trainer: the resume recipe of docs/readme/checkpoints.md, run by the tests.

python _toy_trainer.py --data_root D --steps N [--loaded_date YYYY/MM/DD/HH-MM-SS-ffffff]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from RLA.easy_log import logger
from RLA.easy_log.exp_loader import arg_parser_postprocess, exp_loader
from RLA.easy_log.tester import exp_manager
from RLA.easy_log.time_step import time_step_holder

parser = argparse.ArgumentParser()
parser.add_argument("--data_root", required=True)
parser.add_argument("--steps", type=int, default=40)
parser.add_argument("--save_every", type=int, default=5)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--sleep", type=float, default=0.0)
arg_parser_postprocess(parser)  # adds --loaded_date / --loaded_task_name (default: start fresh)
args = parser.parse_args()

torch.set_num_threads(1)
torch.manual_seed(args.seed)
np.random.seed(args.seed)
exp_manager.set_hyper_param(**vars(args))
exp_manager.add_record_param(["seed"])
exp_manager.configure("toy", rla_config={"LOG_USED": ["stdout", "csv", "tensorboard"], "DL_FRAMEWORK": "torch"},
                      data_root=args.data_root, run_file=[], code_root=args.data_root)
exp_manager.log_files_gen()
exp_manager.new_saver(max_to_keep=2)

model = torch.nn.Linear(4, 1)
optim = torch.optim.Adam(model.parameters(), lr=0.05)
w_true = torch.tensor([[1.0, -2.0, 3.0, 0.5]])

# ---- resume: 3 added lines (no-ops unless --loaded_date is given) ----
exp_loader.fork_log_files()                                    # continue the old run's logs
start, ckpt, _ = exp_loader.load_from_record_date()            # its newest checkpoint, time-step, RNG
if ckpt: model.load_state_dict(ckpt["model"]); optim.load_state_dict(ckpt["optim"]); start += 1  # noqa: E701,E702
# ---- and the loop starts at `start` instead of 0 ----

for step in range(start, args.steps):
    time_step_holder.set_time(step)
    x = torch.randn(16, 4)
    noise = float(np.random.randn())
    loss = ((model(x) - x @ w_true.T - 0.1 * noise) ** 2).mean()
    optim.zero_grad()
    loss.backward()
    optim.step()
    logger.record_tabular("loss", loss.item())
    logger.record_tabular("noise", noise)
    logger.dump_tabular()
    if step % args.save_every == 0:
        exp_manager.save_checkpoint({"model": model.state_dict(), "optim": optim.state_dict()})
    print(f"STEP {step}", flush=True)
    time.sleep(args.sleep)
