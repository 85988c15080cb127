"""Benchmark of incremental sync to a loopback sshd: RLA vs rsync -a over ssh vs re-upload-all.

    python -m bench.bench_sync            # 200 runs (issue 5 workload)
    python -m bench.bench_sync --quick    # 40 runs, fewer repetitions

Workload: N runs (log/code/results/archive_tester files, ~110 kB each) are synced once;
then, per repetition, 10 runs grow by 1 % (appends to progress.csv, log.txt and the
TensorBoard events file) and 2 runs are added, and every method syncs again into its own
copy on the same sshd (same key, same host-key check). Times are medians over the
repetitions; bytes are counted twice: payload (file bytes the method wrote) and wire
(client→server bytes through a counting TCP proxy in front of sshd, SSH overhead included,
measured once per method). Writes ``bench/results/sync.json``.
"""
from __future__ import annotations

from bench import common

import argparse
import datetime as _dt
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

RESULTS = Path(__file__).resolve().parent / "results" / "sync.json"
TYPES = ("log", "code", "results", "archive_tester")
TASK = "bench_task"


# ----------------------------------------------------------------------------- servers
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def start_sshd(work: Path) -> Tuple[subprocess.Popen, int]:
    """OpenSSH sshd on a free loopback port with a throwaway host key and client key."""
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(work / name)], check=True)
    shutil.copy(work / "client_key.pub", work / "authorized_keys")
    port = free_port()
    (work / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {work / 'host_key'}\nPidFile {work / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {work / 'authorized_keys'}\nPermitRootLogin yes\nStrictModes no\nUsePAM no\n"
        "PasswordAuthentication no\nSubsystem sftp internal-sftp\nLogLevel ERROR\n")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(work / "sshd_config")],
                            stderr=subprocess.DEVNULL)
    wait_port(port)
    algo, key = (work / "host_key.pub").read_text().split()[:2]
    (work / "known_hosts").write_text(f"[127.0.0.1]:{port} {algo} {key}\n")
    return proc, port


def proxy_main(listen: int, target: int, out: str) -> None:
    """A counting TCP proxy (run as a subprocess): writes {"up", "down"} bytes on SIGTERM."""
    counts = {"up": 0, "down": 0}
    lock = threading.Lock()

    def pump(src: socket.socket, dst: socket.socket, key: str) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                with lock:
                    counts[key] += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stop(*_: Any) -> None:
        Path(out).write_text(json.dumps(counts))
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen))
    server.listen(64)
    while True:
        client, _ = server.accept()
        upstream = socket.create_connection(("127.0.0.1", target))
        for a, b, k in ((client, upstream, "up"), (upstream, client, "down")):
            threading.Thread(target=pump, args=(a, b, k), daemon=True).start()


class CountingProxy:
    """Context manager: a proxy subprocess in front of sshd; ``.up`` = client→server bytes."""

    def __init__(self, target: int, work: Path) -> None:
        self.port, self.target, self.out = free_port(), target, work / f"proxy-{time.time_ns()}.json"
        self.up = self.down = 0

    def __enter__(self) -> "CountingProxy":
        self.proc = subprocess.Popen([sys.executable, "-m", "bench.bench_sync", "--proxy", str(self.port),
                                      str(self.target), str(self.out)], cwd=Path(__file__).resolve().parents[1])
        wait_port(self.port)
        return self

    def __exit__(self, *exc: Any) -> None:
        time.sleep(0.2)  # let the last packets through
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=10)
        counts = json.loads(self.out.read_text())
        self.up, self.down = counts["up"], counts["down"]


# ----------------------------------------------------------------------------- workload
def make_run(root: Path, i: int, rng: random.Random) -> None:
    """One run of ~110 kB across the synced data types."""
    from RLA.layout import RunLayout

    name = f"{i // 3600 % 24:02d}-{i // 60 % 60:02d}-{i % 60:02d}-{i:06d}_127.0.0.1_&seed={i}"
    layout = RunLayout(root, TASK, "2026/03/04", name)
    files = {
        layout.log_dir / "progress.csv": "time-step,reward,loss\n" + "".join(
            f"{s},{rng.random():.6f},{rng.random():.6f}\n" for s in range(1700)),
        layout.log_dir / "log.txt": "".join(f"step {s}: ok\n" for s in range(600)),
        layout.log_dir / "run.json": json.dumps({"index": layout.index, "status": "running"}) + "\n",
        layout.log_dir / "tb" / f"events.out.tfevents.{i}.host": rng.randbytes(30_000),
        layout.code_dir / "train.py": "import RLA\n" * 300,
        layout.code_dir / "pkg" / "model.py": "x = 1\n" * 500,
        layout.code_dir / "parameter.json": json.dumps({"seed": i, "lr": 1e-3}) + "\n",
        layout.results_dir / "10-curve.png": rng.randbytes(20_000),
        layout.archive_tester_file: json.dumps({"state": i}) + "\n",
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            path.write_text(data)
        else:
            path.write_bytes(data)


def run_size(root: Path, i: int) -> int:
    """Bytes of run ``i`` across the synced data types."""
    day = "2026/03/04"
    total = 0
    for data_type in TYPES:
        for path in (root / data_type / TASK / day).glob(f"*&seed={i}*"):
            files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
            total += sum(f.stat().st_size for f in files)
    return total


def grow(root: Path, indices: List[int], rng: random.Random) -> int:
    """Append 1 % of each run's size to its logs; returns the bytes appended."""
    added = 0
    for i in indices:
        budget = max(1, run_size(root, i) // 100)
        run_dir = next((root / "log" / TASK / "2026" / "03" / "04").glob(f"*&seed={i}"))
        parts = {"progress.csv": int(budget * 0.6), "log.txt": int(budget * 0.2)}
        parts["tb"] = budget - sum(parts.values())
        with open(run_dir / "progress.csv", "a") as handle:
            text = "".join(f"9{rng.randrange(10**6)},{rng.random():.6f},{rng.random():.6f}\n" for _ in range(400))
            handle.write(text[:parts["progress.csv"]])
        with open(run_dir / "log.txt", "a") as handle:
            handle.write(("step N: ok\n" * 1000)[:parts["log.txt"]])
        with open(next((run_dir / "tb").glob("events*")), "ab") as handle:
            handle.write(rng.randbytes(parts["tb"]))
        added += budget
    return added


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for t in TYPES if (root / t).exists() for p in (root / t).rglob("*") if p.is_file())


def same_tree(a: Path, b: Path) -> bool:
    """``diff -r`` of every synced data type."""
    return all(subprocess.run(["diff", "-rq", str(a / t), str(b / t)], capture_output=True).returncode == 0
               for t in TYPES)


# ----------------------------------------------------------------------------- methods
class Env:
    def __init__(self, work: Path, port: int) -> None:
        self.work, self.port = work, port
        self.src = work / "src"
        self.ssh = (f"ssh -p {{port}} -i {work / 'client_key'} -o UserKnownHostsFile={work / 'known_hosts'} "
                    f"-o StrictHostKeyChecking=yes -o BatchMode=yes -o HostKeyAlias=[127.0.0.1]:{port}")

    def settings(self, remote: Path, port: int):
        from RLA.config.fields import validate_section
        from RLA.config.remote import RemoteSettings

        return validate_section(RemoteSettings, {
            "file_transfer_protocol": "sftp", "ftp_server": "127.0.0.1", "port": port, "username": "root",
            "key_filename": str(self.work / "client_key"), "known_hosts": str(self.work / "known_hosts"),
            "allow_agent": False, "remote_data_root": str(remote), "retries": 0}, "<bench>")


def rla_sync(env: Env, remote: Path, port: int) -> int:
    from RLA.layout import iter_run_dirs
    from RLA.sync.syncer import RunSyncer

    # The sftp target differs per port (proxy or not); keep one manifest per remote copy.
    settings = env.settings(remote, env.port)
    syncer = RunSyncer(settings, env.src)
    if port != env.port:
        from RLA.sync.sftp import SFTPTransport

        syncer._connect = lambda: SFTPTransport("127.0.0.1", port, "root", key_filename=settings.key_filename,
                                                allow_agent=False, known_hosts=str(env.work / "known_hosts_proxy"))
    return syncer.push(list(iter_run_dirs(env.src))).bytes_sent


def rsync_sync(env: Env, remote: Path, port: int) -> int:
    remote.mkdir(parents=True, exist_ok=True)
    cmd = ["rsync", "-a", "--stats", "-e", env.ssh.format(port=port)] + [str(env.src / t) for t in TYPES] + \
          [f"root@127.0.0.1:{remote}/"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return int(re.search(r"Total bytes sent: ([\d,]+)", out).group(1).replace(",", ""))


def reupload_sync(env: Env, remote: Path, port: int) -> int:
    """The original's pattern: every file of every run uploaded again (here over one connection)."""
    from RLA.sync.sftp import SFTPTransport

    known = env.work / ("known_hosts" if port == env.port else "known_hosts_proxy")
    sent = 0
    with SFTPTransport("127.0.0.1", port, "root", key_filename=str(env.work / "client_key"), allow_agent=False,
                       known_hosts=str(known)) as t:
        for t_name in TYPES:
            base = env.src / t_name
            for path in sorted(base.rglob("*")):
                if path.is_file():
                    rpath = str(remote / path.relative_to(env.src))
                    t.makedirs(os.path.dirname(rpath))
                    sent += t.put(path, rpath)
    return sent


METHODS: Dict[str, Callable[[Env, Path, int], int]] = {
    "original (re-upload all)": reupload_sync, "rsync -a over ssh": rsync_sync, "RLA sftp": rla_sync}


def timed(fn: Callable[[], int]) -> Tuple[float, int]:
    start = time.perf_counter()
    sent = fn()
    return time.perf_counter() - start, sent


def machine_info() -> Dict[str, Any]:
    ssh = subprocess.run(["ssh", "-V"], capture_output=True, text=True).stderr.strip()
    rsync = subprocess.run(["rsync", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return common.machine_info(["paramiko"], extra={"ssh": ssh, "rsync": rsync})



def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 runs, 3 repetitions")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--proxy", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.proxy:
        proxy_main(int(args.proxy[0]), int(args.proxy[1]), args.proxy[2])
        return 0
    n_runs = args.runs or (40 if args.quick else 200)
    reps = args.reps or (3 if args.quick else 5)
    rng = random.Random(0)
    work = Path(tempfile.mkdtemp(prefix="rla-bench-sync-"))
    sshd, port = start_sshd(work)
    env = Env(work, port)
    try:
        for i in range(n_runs):
            make_run(env.src, i, rng)
        total = tree_bytes(env.src)
        print(f"{n_runs} runs, {total / 1e6:.1f} MB in {sum(1 for t in TYPES for p in (env.src / t).rglob('*') if p.is_file())} files")
        initial = {}
        for name, fn in METHODS.items():
            initial[name] = timed(lambda: fn(env, work / f"dst-{name[:5]}", port))
            print(f"initial  {name:26s} {initial[name][0]:7.2f} s {initial[name][1]:>12,} B")
        next_id = n_runs
        times: Dict[str, List[float]] = {name: [] for name in METHODS}
        payload: Dict[str, List[int]] = {name: [] for name in METHODS}
        appended: List[int] = []
        for rep in range(reps):
            grown = rng.sample(range(n_runs), 10)
            added = grow(env.src, grown, rng)
            for _ in range(2):
                make_run(env.src, next_id, rng)
                added += run_size(env.src, next_id)
                next_id += 1
            appended.append(added)
            for name, fn in METHODS.items():
                seconds, sent = timed(lambda: fn(env, work / f"dst-{name[:5]}", port))
                times[name].append(seconds)
                payload[name].append(sent)
            print(f"rep {rep}: appended {added:,} B; " + "; ".join(
                f"{n}: {times[n][-1]:.2f} s {payload[n][-1]:,} B" for n in METHODS))
        # Wire bytes: one more change, each method through the counting proxy.
        grown = rng.sample(range(n_runs), 10)
        wire_appended = grow(env.src, grown, rng)
        for _ in range(2):
            make_run(env.src, next_id, rng)
            wire_appended += run_size(env.src, next_id)
            next_id += 1
        wire: Dict[str, int] = {}
        for name, fn in METHODS.items():
            with CountingProxy(port, work) as proxy:
                kh = work / "known_hosts_proxy"
                kh.write_text((work / "known_hosts").read_text().replace(f"[127.0.0.1]:{port}",
                                                                          f"[127.0.0.1]:{proxy.port}"))
                fn(env, work / f"dst-{name[:5]}", proxy.port)  # rsync's ssh checks via HostKeyAlias
            wire[name] = proxy.up
        # No-change sync: everything is up to date now.
        nochange = {name: statistics.median(timed(lambda: fn(env, work / f"dst-{name[:5]}", port))[0]
                                            for _ in range(3)) for name, fn in METHODS.items()
                    if not name.startswith("original")}
        cli_cfg = work / "rla_config.yaml"
        cli_cfg.write_text(json.dumps({"REMOTE_SETTING": {
            "file_transfer_protocol": "sftp", "ftp_server": "127.0.0.1", "port": port, "username": "root",
            "key_filename": str(work / "client_key"), "known_hosts": str(work / "known_hosts"),
            "allow_agent": False, "remote_data_root": str(work / "dst-RLA s")}}))
        cli = [sys.executable, "-m", "rla_scripts.cli", "sync", "push", "--data-root", str(env.src),
               "--config", str(cli_cfg)]
        repo = Path(__file__).resolve().parents[1]
        subprocess.run(cli, cwd=repo, check=True, capture_output=True)  # builds the query index once
        nochange["RLA CLI (`rla sync push`, process start included)"] = statistics.median(
            timed(lambda: subprocess.run(cli, cwd=repo, check=True, capture_output=True).returncode)[0]
            for _ in range(3))
        ok = all(same_tree(env.src, work / f"dst-{name[:5]}") for name in METHODS)
    finally:
        sshd.terminate()
        sshd.wait(timeout=10)
    med_appended = statistics.median(appended)
    rsync_t = statistics.median(times["rsync -a over ssh"])
    rows = []
    for name in METHODS:
        t = statistics.median(times[name])
        p = statistics.median(payload[name])
        rows.append({"method": name, "incremental s (median)": round(t, 3), "time / rsync": round(t / rsync_t, 2),
                     "payload bytes (median)": int(p), "payload / appended": round(p / med_appended, 3),
                     "wire bytes (client→server)": wire[name], "wire / appended": round(wire[name] / wire_appended, 3),
                     "initial sync s": round(initial[name][0], 2),
                     "no-change sync s": round(nochange[name], 3) if name in nochange else None})
    rla = rows[-1]
    goals = {
        "RLA bytes <= 1.2x appended": f"payload {rla['payload / appended']}x, wire {rla['wire / appended']}x: "
                                      f"{'met' if rla['wire / appended'] <= 1.2 else 'NOT met'}",
        "no-change sync of all runs < 1 s": f"{nochange['RLA sftp']:.3f} s library call, "
                                           f"{nochange['RLA CLI (`rla sync push`, process start included)']:.3f} s CLI: "
                                           f"{'met' if nochange['RLA sftp'] < 1 else 'NOT met'}",
        "time <= 1.5x rsync": f"{rla['time / rsync']}x: {'met' if rla['time / rsync'] <= 1.5 else 'NOT met'}",
        "remote trees identical to the source": "yes" if ok else "NO",
    }
    print()
    for row in rows:
        print("  ".join(f"{k}={v}" for k, v in row.items()))
    print(f"RLA CLI no-change: {nochange['RLA CLI (`rla sync push`, process start included)']:.3f} s")
    print("\ngoals:\n" + "\n".join(f"  {k}: {v}" for k, v in goals.items()))
    report = {"area": "sync", "date": _dt.datetime.now().isoformat(timespec="seconds"), "machine": machine_info(),
              "workload": {"runs": n_runs, "initial_bytes": total, "reps": reps, "grown_runs_per_rep": 10,
                           "new_runs_per_rep": 2, "appended_bytes_median": med_appended, "quick": args.quick},
              "rows": rows, "goals": goals, "no_change_seconds": nochange,
              "notes": ["loopback sshd (OpenSSH, ed25519 keys, host key checked) on the same machine; every "
                        "method syncs log, code, results and archive_tester into its own copy",
                        "payload = file bytes written (rsync: its 'Total bytes sent', protocol included); wire = "
                        "client→server TCP bytes through a counting proxy (SSH handshake and framing included), "
                        "measured on one extra change of the same size",
                        "original = every file re-uploaded over ONE connection; upstream RLA also opened a new "
                        "connection per file, which is slower still",
                        "RLA times are library calls in a warm process (paramiko import excluded); rsync times "
                        "include starting ssh; the CLI row includes Python start-up and the query index"]}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {RESULTS}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
