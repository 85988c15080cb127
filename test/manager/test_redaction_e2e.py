"""One real run with secrets everywhere: no form of any secret reaches the data root or the remote copy."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
import yaml

from RLA.manager.experiment import ExperimentManager
from RLA.redaction import MARKER
from redaction_forms import NASTY, encodings

pytestmark = pytest.mark.timeout(240)

REMOTE_PASSWORD = NASTY  # RLA_REMOTE_PASSWORD
CONFIG_PASSWORD = "Cfg'Yaml\"pw: #1 \\ end"  # REMOTE_SETTING.password in rla_config.yaml
ARG_PASSWORD = "pw-Arg`\"'2026&%"  # --password on the command line
API_TOKEN = "tok_ABCdef123456789"  # api_token=... on the command line (and in the run's name)
WANDB_KEY = "WANDBKEY-long-0042"  # --wandb-api-key=..., not a hyper-parameter; the script logs it
SHORT_ARG = "sh0rt6"  # --hf_token: shorter than REDACT.min_length, hidden by its key only
SHORT_HP = "d8!pw6"  # nested.db.passwd: shorter than REDACT.min_length, hidden by its key only
SECRETS = {"remote": REMOTE_PASSWORD, "config": CONFIG_PASSWORD, "arg": ARG_PASSWORD, "token": API_TOKEN,
           "wandb": WANDB_KEY, "short_arg": SHORT_ARG, "short_hp": SHORT_HP}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


def _project(tmp_path: Path, remote: Path) -> Path:
    """A git project whose uncommitted change and rla_config.yaml hold the secrets in several quotings."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "settings.py").write_text("DEBUG = True\n")
    (project / "train.py").write_text("print('train')\n")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "init")
    forms = encodings(REMOTE_PASSWORD)
    (project / "settings.py").write_text(  # uncommitted: lands in git_diff.patch
        f"DEBUG = True\nPASSWORD = {REMOTE_PASSWORD!r}\nJSON = {json.dumps({'pw': REMOTE_PASSWORD})!r}\n"
        f"CMD = \"sshpass -p {forms['shell_single']} ssh\"\nURL = 'ftp://u:{forms['url']}@host/'\n"
        f"TOKEN = {API_TOKEN!r}\n")
    config = {"LOG_USED": ["stdout", "log", "csv", "json", "tensorboard"], "DL_FRAMEWORK": "torch",
              "SEND_LOG_FILE": True, "BACKUP_CONFIG": {"backup_code_dir": ["."]}, "REDACT": {"min_length": 8},
              "REMOTE_SETTING": {"file_transfer_protocol": "local", "remote_data_root": str(remote),
                                 "password": CONFIG_PASSWORD,
                                 "sync_types": ["log", "code", "checkpoint", "results", "archive_tester"]}}
    text = yaml.safe_dump(config, default_style=None, allow_unicode=True, width=1 << 30)
    config_forms = encodings(CONFIG_PASSWORD)
    text += f"# single-quoted copy: '{config_forms['yaml_single']}'\n# double: \"{config_forms['yaml_double']}\"\n"
    (project / "rla_config.yaml").write_text(text)
    return project


def _secret_forms() -> Dict[str, List[bytes]]:
    out = {}
    for name, secret in SECRETS.items():
        out[name] = sorted({form.encode("utf-8") for form in encodings(secret).values()})
    return out


def _train(mgr: ExperimentManager, args: argparse.Namespace) -> None:
    import torch

    from RLA.easy_log import logger
    from RLA.easy_log.time_step import time_step_holder

    logger.info(f"args: {args}")
    logger.info("wandb: " + " ".join(arg for arg in sys.argv if arg.startswith("--wandb")))
    logger.warn(f"connecting with {REMOTE_PASSWORD} and {args.api_token}")
    for step in range(3):
        time_step_holder.set_time(step)
        logger.record_tabular("reward", float(step))
        logger.record_tabular("note", f"pw={args.password} url=ftp://u:{encodings(REMOTE_PASSWORD)['url']}@h")
        logger.dump_tabular()
    mgr.new_saver(max_to_keep=2)
    mgr.save_checkpoint({"policy": torch.nn.Linear(2, 2).state_dict()}, related_variable={"epoch": 3})


def test_no_form_of_any_secret_reaches_the_data_root_or_the_remote(tmp_path, monkeypatch, capsys):
    remote = tmp_path / "remote_db"
    project = _project(tmp_path, remote)
    monkeypatch.setenv("RLA_REMOTE_PASSWORD", REMOTE_PASSWORD)
    monkeypatch.setattr(sys, "argv", ["train.py", "--password", ARG_PASSWORD, f"api_token={API_TOKEN}",
                                      "--seed", "3", f"--wandb-api-key={WANDB_KEY}", "--hf_token", SHORT_ARG])
    parser = argparse.ArgumentParser()
    parser.add_argument("--password")
    parser.add_argument("--seed", type=int)
    args, rest = parser.parse_known_args()
    args.api_token = rest[0].split("=", 1)[1]
    hyper = dict(vars(args), same_as_remote=REMOTE_PASSWORD, nested={"db": {"passwd": SHORT_HP}})

    mgr = ExperimentManager()
    mgr.set_hyper_param(**hyper)
    mgr.add_record_param(["seed", "api_token"])
    mgr.configure("redact_task", rla_config=str(project / "rla_config.yaml"), data_root=str(tmp_path / "data"),
                  run_file=[str(project / "train.py")])
    mgr.log_files_gen()
    mgr.print_args()
    _train(mgr, args)
    mgr.sync_log_file()
    mgr.finish()
    assert mgr.hyper_param == hyper  # what the script reads is unchanged

    files = [p for root in (tmp_path / "data", remote) for p in root.rglob("*") if p.is_file()]
    kinds = {p.relative_to(root).parts[0] for root in (tmp_path / "data", remote) for p in root.rglob("*")
             if p.is_file() and root in p.parents}
    assert {"log", "code", "checkpoint", "archive_tester"} <= kinds
    names = {p.name for p in files}
    assert {"run.json", "backup.txt", "parameter.json", "log.txt", "warn.txt", "progress.csv", "progress.json",
            "git_diff.patch", "rla_config.yaml", "settings.py"} <= names
    assert any(name.startswith("events.out.tfevents") for name in names)
    assert any(p.parts[-2:] == ("redact_task", p.name) or "archive_tester" in p.parts for p in files)
    leaks = []
    captured = capsys.readouterr()
    for name, forms in _secret_forms().items():
        for form in forms:
            for path in files:
                if form in path.read_bytes() or form in str(path).encode():
                    leaks.append((name, form, str(path)))
            if form in (captured.out + captured.err).encode():
                leaks.append((name, form, "stdout/stderr"))
    assert not leaks, leaks[:10]
    pushed = mgr.layout.moved(data_root=remote)
    info = json.loads((pushed.log_dir / "run.json").read_text())
    assert info["hyper_params"]["password"] == MARKER and info["hyper_params"]["api_token"] == MARKER
    assert info["hyper_params"]["same_as_remote"] == MARKER
    assert info["hyper_params"]["nested"]["db"]["passwd"] == MARKER
    assert info["hyper_params"]["seed"] == 3 and MARKER in info["command"]
    assert MARKER.encode() in (pushed.code_dir / "git_diff.patch").read_bytes()
