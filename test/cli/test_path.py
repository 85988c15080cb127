"""``rla path RUN`` prints a run's folder quoted for the shell; the shell gets back the real folder."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rla_scripts.cli import main


@pytest.mark.timeout(60)
def test_path_is_quoted_so_a_shell_reaches_the_run_folder(db, capsys):
    assert main(["path", "2026/11/01/10-00-00-000000", "--data-root", str(db)]) == 0
    quoted = capsys.readouterr().out.strip()
    assert "&" in quoted and quoted.startswith("'")
    listed = subprocess.run(["bash", "-c", f"ls {quoted}"], capture_output=True, text=True, timeout=30)
    assert listed.returncode == 0 and "run.json" in listed.stdout


@pytest.mark.timeout(60)
def test_path_of_another_data_type_and_raw(db, capsys):
    assert main(["path", "2026/11/01/10-00-01", "--type", "code", "--raw", "--data-root", str(db)]) == 0
    out = capsys.readouterr().out.strip()
    assert "/code/demo/2026/11/01/10-00-01-000000_" in out and not out.startswith("'")


@pytest.mark.timeout(60)
def test_path_of_a_missing_data_type_names_the_ones_the_run_has(db, capsys):
    assert main(["path", "2022/03/01", "--type", "replay", "--data-root", str(db)]) == 1
    err = capsys.readouterr().err
    assert "has no replay data" in err and "log" in err


@pytest.mark.timeout(60)
def test_path_refuses_a_selector_that_leaves_the_data_root(db, capsys):
    assert main(["path", "../../etc", "--data-root", str(db)]) != 0
    assert "refused" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_the_documented_command_substitution_reaches_the_run_folder(db):
    """``cd "$(rla path RUN --raw)"`` (README, --help) works; the quoted form keeps its quotes there."""
    rla = f'"{sys.executable}" -m rla_scripts.cli path 2026/11/01/10-00-00-000000 --data-root "{db}"'
    raw = subprocess.run(
        ["bash", "-c", f'cd "$({rla} --raw)" && ls'], capture_output=True, text=True, timeout=30
    )
    assert raw.returncode == 0 and "run.json" in raw.stdout, raw.stderr
    quoted = subprocess.run(["bash", "-c", f'cd "$({rla})"'], capture_output=True, text=True, timeout=30)
    assert quoted.returncode != 0  # why the manual says --raw inside $(...)
