"""How long training waits for sync_log_file(): background mode against the foreground call.

    python -m bench.bench_sync_background

The server is unreachable (a closed port on 127.0.0.1) and the transfer retries twice with a
0.3 s backoff, so a foreground push takes about 0.9 s before it fails. Three rounds of
"log two rows, sync" are timed with ``background: true`` and with the foreground call; the
goal (moved here from a unit test) is that the background rounds take well under 0.5 s,
that is a small fraction of the foreground ones. Prints both times and their ratio.
"""
from __future__ import annotations

import socket
import tempfile
import time
from pathlib import Path

import yaml

GOAL_SECONDS = 0.5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rounds(root: Path, background: bool) -> float:
    """Seconds spent in three rounds of logging and sync_log_file()."""
    from RLA.easy_log import logger
    from RLA.manager.experiment import ExperimentManager

    project = root / ("bg" if background else "fg")
    project.mkdir(parents=True)
    remote = {"ftp_server": "127.0.0.1", "port": free_port(), "remote_data_root": "/srv/db",
              "background": background, "retries": 2, "backoff": 0.3}
    (project / "rla_config.yaml").write_text(yaml.safe_dump(
        {"LOG_USED": ["log", "csv"], "DL_FRAMEWORK": "none", "SEND_LOG_FILE": True, "REMOTE_SETTING": remote}))
    mgr = ExperimentManager()
    mgr.set_hyper_param(seed=0)
    mgr.add_record_param(["seed"])
    mgr.configure("bench_sync", rla_config=str(project / "rla_config.yaml"), data_root=str(project / "data"),
                  run_file=[])
    mgr.log_files_gen()
    started = time.perf_counter()
    for _ in range(3):
        for step in range(2):
            logger.record_tabular("reward", float(step))
            logger.dump_tabular()
        mgr.sync_log_file(skip_error=True)
    spent = time.perf_counter() - started
    mgr.finish()
    return spent


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        background = rounds(Path(tmp), background=True)
        foreground = rounds(Path(tmp), background=False)
    print(f"background: {background:.3f} s for 3 rounds (goal < {GOAL_SECONDS} s): "
          f"{'met' if background < GOAL_SECONDS else 'MISSED'}")
    print(f"foreground: {foreground:.3f} s; background / foreground = {background / foreground:.3f}")


if __name__ == "__main__":
    main()
