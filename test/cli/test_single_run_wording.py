"""A command on one run says "1 run", "1 data type", "1 entry" (not "1 runs", "1 entries")."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from RLA.layout import TRASH
from RLA.ops.testing import make_database
from rla_scripts.cli import main


@pytest.mark.timeout(60)
def test_single_run_delete_and_restore_say_one_run(tmp_path: Path, capsys):
    root = tmp_path / "data"
    run = make_database(root, runs=2, files=1, size=64)[0]
    assert main(["delete", "--data-root", str(root), run.index, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "\n1 run to delete" in out and "1 runs" not in out
    assert main(["delete", "--data-root", str(root), run.index, "--yes"]) == 0
    capsys.readouterr()
    assert main(["trash", "list", "--data-root", str(root)]) == 0
    assert "\n1 run in the trash" in capsys.readouterr().out
    assert main(["trash", "restore", run.index, "--data-root", str(root), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "\n1 run to restore" in out and "1 runs" not in out
    assert main(["trash", "empty", "--data-root", str(root), "--dry-run"]) == 0
    assert "\n1 trash folder to remove for good" in capsys.readouterr().out
    assert len(list((root / TRASH).iterdir())) == 1  # dry runs changed nothing


@pytest.mark.timeout(60)
def test_a_run_with_one_data_type_says_one_data_type(tmp_path: Path, capsys):
    root = tmp_path / "data"
    run = make_database(root, runs=1, files=1, size=64)[0]
    for data_type, path in run.existing_paths().items():
        if data_type != "log":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    assert main(["delete", "--data-root", str(root), run.index, "--dry-run"]) == 0
    assert "(1 data type: " in capsys.readouterr().out


@pytest.mark.timeout(60)
def test_init_that_adds_one_entry_says_one_entry(tmp_path: Path, capsys):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    assert main(["init", str(tmp_path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would add 1 entry to " in out and "entries" not in out
