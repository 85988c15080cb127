"""`rla list/view/plot` on a data root holding crafted runs: the rest is shown, each bad run is
one escaped `warning: skipped` line, nothing hangs, no traceback; names print escaped."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from RLA.query.testing import CRAFTED, make_crafted_runs, make_run
from RLA.terminal import escape
from rla_scripts.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def crafted(tmp_path: Path):
    root = tmp_path / "data"
    root.mkdir()
    good, bad = make_crafted_runs(root)
    return root, good, bad


def rla(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real console entry point in a child process (a hang fails by timeout, not forever)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="300")
    return subprocess.run([sys.executable, "-m", "rla_scripts.cli", *argv], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=REPO)


def _skipped_lines(err: str) -> list:
    return [line for line in err.splitlines() if line.startswith("warning: skipped ")]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("extra", [[], ["--where", "seed >= 0 and kind == 'good'"]])
def test_list_shows_the_good_runs_and_warns_once_per_crafted_run(crafted, extra):
    root, good, bad = crafted
    done = rla("list", "--data-root", str(root), *extra)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    for run in good:
        assert run.index in done.stdout
    lines = _skipped_lines(done.stderr)
    assert len(lines) == len(bad)
    for name, layout in bad.items():
        assert any(f"warning: skipped {layout.index}: " in line and CRAFTED[name][1] in line for line in lines), name
    assert f"{len(good)} runs ({len(bad)} unreadable, skipped)" in done.stdout


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["run_json_100k_deep", "pid_2_70", "progress_fifo", "run_json_symlink_passwd"])
def test_view_of_a_crafted_run_is_a_clear_error(crafted, capsys, name):
    root, _, bad = crafted
    assert main(["view", bad[name].index, "--data-root", str(root)]) == 1
    captured = capsys.readouterr()
    assert f"rla view: error: Run {bad[name].index} is damaged" in captured.err
    assert CRAFTED[name][1] in captured.err
    assert "root:" not in captured.out + captured.err  # /etc/passwd never read through the link


@pytest.mark.timeout(120)
def test_view_of_a_good_run_next_to_crafted_ones_works(crafted, capsys):
    root, good, _ = crafted
    assert main(["view", good[0].index, "--data-root", str(root)]) == 0
    assert "kind = 'good'" in capsys.readouterr().out


@pytest.mark.timeout(300)
def test_plot_draws_the_good_runs_and_warns_once_per_crafted_run(crafted, tmp_path):
    root, good, bad = crafted
    out = tmp_path / "fig.png"
    done = rla("plot", "--data-root", str(root), "--task", "crafted", "--metrics", "return",
               "--split-keys", "kind", "--out", str(out), "--resample", "16", timeout=240)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and out.is_file()
    assert len(_skipped_lines(done.stderr)) == len(bad)
    assert f"kind=good ({len(good)} runs)" in done.stdout


@pytest.mark.timeout(120)
def test_escape_sequences_in_names_and_values_are_printed_escaped(tmp_path, capsys):
    root = tmp_path / "data"
    evil = "x\x1b]0;pwned\x07\x1b[2J\r\u202eevil"
    make_run(root, task="demo", params={"note": evil, "seed": 0}, curves={"r": [1.0]})
    make_run(root, task="demo", params={"note": "plain é 中", "seed": 1}, curves={"r": [1.0]})
    damaged = make_run(root, task="demo", params={"note": "n", "seed": 2}, curves={"r": [1.0]})
    (damaged.log_dir / "run.json").write_text('{"status": "\\u001b[31mred\\u001b[2J", "host": 5}')
    assert main(["list", "--data-root", str(root), "--columns", "index,note"]) == 0
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):
        assert "\x1b" not in text and "\x07" not in text and "\r" not in text and "\u202e" not in text
    assert escape(evil) in captured.out and "plain é 中" in captured.out
    assert "\\x1b[2J" in captured.err and "warning: skipped" in captured.err
    run = [line for line in captured.out.splitlines() if "pwned" in line][0].split()[0]
    assert main(["view", run, "--data-root", str(root)]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and escape(evil) in shown


def test_escape_keeps_plain_text_and_makes_controls_visible():
    assert escape("Hopper-v4 lr=0.001 é 中 🙂") == "Hopper-v4 lr=0.001 é 中 🙂"
    assert escape("a\x1b[2Jb\x9bc\x00\n\t\r\x7f\u202e\u2066") == \
        "a\\x1b[2Jb\\x9bc\\x00\\n\\t\\r\\x7f\\u202e\\u2066"


@pytest.mark.timeout(120)
def test_include_broken_lists_the_crafted_runs_too_and_says_so(crafted, capsys):
    root, good, bad = crafted
    assert main(["list", "--data-root", str(root), "--include-broken", "--columns", "index,status"]) == 0
    captured = capsys.readouterr()
    assert all(layout.index in captured.out for layout in bad.values())
    assert f"{len(good) + len(bad)} runs ({len(bad)} damaged, listed anyway)" in captured.out
    assert sum(line.startswith("warning: damaged ") for line in captured.err.splitlines()) == len(bad)
