"""``rla init`` ignores the data root itself, never a project's own folders, and names the installed backend."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rla_scripts.cli import main


def git_ignored(repo: Path, relative: str) -> bool:
    """Whether git itself ignores ``relative`` in ``repo`` (git check-ignore)."""
    result = subprocess.run(["git", "-C", str(repo), "check-ignore", "-q", "--no-index", relative],
                            capture_output=True, timeout=30)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode == 0


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    return tmp_path


@pytest.mark.timeout(60)
def test_init_ignores_the_data_root_but_not_source_folders_named_like_data_types(repo):
    assert main(["init", str(repo)]) == 0
    for source in ("src/log/handler.py", "code/model.py", "results/table.py", "pkg/checkpoint/io.py",
                   "replay/buffer.py", "arc/x.py", "archive_tester/t.py"):
        assert not git_ignored(repo, source), source
    for data in ("data/log/task/2026/01/01/run/log.txt", "data/.trash/x", "data/.rla_index.sqlite"):
        assert git_ignored(repo, data), data


@pytest.mark.timeout(60)
def test_init_removes_the_unanchored_entries_an_older_init_wrote(repo, capsys):
    old = "*.pyc\n**/log/**\n# RLA database (rla init)\n**/code/**\n**/log/**\nmine/\n.trash/\n"
    (repo / ".gitignore").write_text(old)
    assert main(["init", str(repo), "--dry-run"]) == 0
    assert "would remove 3 entries an older rla init wrote" in capsys.readouterr().out
    assert (repo / ".gitignore").read_text() == old
    assert main(["init", str(repo)]) == 0
    # the user's own line above RLA's block stays; RLA's block keeps the user's addition
    assert (repo / ".gitignore").read_text().splitlines() == [
        "*.pyc", "**/log/**", "# RLA database (rla init)", "/data/", "mine/"]


@pytest.mark.timeout(60)
def test_init_anchors_an_existing_configs_data_root(repo, capsys):
    (repo / "rla_config.yaml").write_text("DATA_ROOT: ./runs/db\n")
    assert main(["init", str(repo)]) == 0
    assert "/runs/db/" in (repo / ".gitignore").read_text().splitlines()
    assert git_ignored(repo, "runs/db/log/x") and not git_ignored(repo, "runs/other.py")


@pytest.mark.timeout(60)
def test_init_adds_nothing_for_a_data_root_outside_the_project(repo, capsys):
    (repo / "rla_config.yaml").write_text("DATA_ROOT: ../elsewhere\n")
    assert main(["init", str(repo)]) == 0
    assert "is outside" in capsys.readouterr().out
    assert not (repo / ".gitignore").exists()


@pytest.mark.timeout(60)
def test_init_names_numpy_backend_when_torch_is_missing(repo, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert main(["init", str(repo)]) == 0
    assert "DL_FRAMEWORK: none, as torch is not installed" in capsys.readouterr().out
    from RLA.config import load_config
    assert load_config(repo / "rla_config.yaml").DL_FRAMEWORK == "none"


@pytest.mark.timeout(60)
def test_init_names_torch_when_it_is_installed(repo):
    pytest.importorskip("torch")
    assert main(["init", str(repo)]) == 0
    from RLA.config import load_config
    assert load_config(repo / "rla_config.yaml").DL_FRAMEWORK == "torch"
