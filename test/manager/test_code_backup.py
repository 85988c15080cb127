"""Code backup: source and lib modes, gitignore semantics, run files, secrets and git facts."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from RLA.errors import ConfigError
from RLA.manager.experiment import ExperimentManager


def make_project(root: Path) -> Path:
    files = {
        "src/train.py": "print('train')\n",
        "src/model/net.py": "NET = 1\n",
        "src/model/net.pyc": "binary",
        "src/model/keep.pyc": "kept by negation",
        "src/build/out.o": "object",
        "src/data/big.bin": "anchored dir below src is kept",
        "data/raw.csv": "anchored at root: ignored",
        "src/notes.tmp": "ignored",
        "build/lib/mylib/__init__.py": "LIB = 1\n",
        "run.py": "print('run')\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / ".gitignore").write_text("*.pyc\n!keep.pyc\nbuild/\n/data\n*.tmp\n# comment\n")
    return root


def run_backup(project: Path, data_root: Path, config: str, **configure) -> Path:
    (project / "rla_config.yaml").write_text(config)
    mgr = ExperimentManager()
    mgr.configure("t", rla_config=str(project / "rla_config.yaml"), data_root=str(data_root), **configure)
    layout = mgr.log_files_gen()
    mgr.finish()
    return layout.code_dir


def copied(code_dir: Path) -> set:
    return {p.relative_to(code_dir).as_posix() for p in code_dir.rglob("*") if p.is_file()}


def test_source_mode_applies_gitignore_semantics(tmp_path):
    project = make_project(tmp_path / "p")
    code = run_backup(project, tmp_path / "db", "LOG_USED: [csv]\nBACKUP_CONFIG: {backup_code_dir: [src, data]}\n",
                      run_file=str(project / "run.py"))
    files = copied(code)
    assert {"src/train.py", "src/model/net.py", "src/model/keep.pyc", "src/data/big.bin", "run.py"} <= files
    assert "src/model/net.pyc" not in files          # *.pyc
    assert not any(f.startswith("src/build/") for f in files)  # directory pattern build/
    assert not any(f.startswith("data/") for f in files)       # anchored /data
    assert "src/notes.tmp" not in files


def test_explicit_ignore_file_overrides_the_config(tmp_path):
    project = make_project(tmp_path / "p")
    (project / "only_py.ignore").write_text("*.py\n")
    code = run_backup(project, tmp_path / "db", "LOG_USED: [csv]\nBACKUP_CONFIG: {backup_code_dir: [src]}\n",
                      ignore_file_path=str(project / "only_py.ignore"), run_file=[])
    files = copied(code)
    assert "src/train.py" not in files and "src/model/net.pyc" in files


def test_lib_mode_copies_the_built_library(tmp_path):
    project = make_project(tmp_path / "p")
    code = run_backup(project, tmp_path / "db", "LOG_USED: [csv]\nPROJECT_TYPE: {backup_code_by: lib}\n",
                      run_file=str(project / "run.py"))
    files = copied(code)
    assert "mylib/__init__.py" in files and "run.py" in files and "src/train.py" not in files


def test_missing_backup_dir_is_a_config_error(tmp_path):
    project = make_project(tmp_path / "p")
    with pytest.raises(ConfigError, match="does not exist"):
        run_backup(project, tmp_path / "db", "LOG_USED: [csv]\nBACKUP_CONFIG: {backup_code_dir: [nope]}\n",
                   run_file=[])


def test_data_root_inside_the_project_is_not_backed_up(tmp_path):
    project = make_project(tmp_path / "p")
    (project / "rla_config.yaml").write_text("LOG_USED: [csv]\nBACKUP_CONFIG: {backup_code_dir: ['.']}\n")
    for _ in range(2):  # the second backup must not copy the first run
        code = run_backup(project, project / "db", (project / "rla_config.yaml").read_text(), run_file=[])
    assert not any(f.startswith("db/") for f in copied(code))


def test_secrets_never_reach_the_code_backup(tmp_path, monkeypatch):
    project = make_project(tmp_path / "p")
    (project / "src" / "settings.py").write_text("PASSWORD = 'S3cretPassw0rd'\n")
    monkeypatch.setenv("RLA_REMOTE_PASSWORD", "S3cretPassw0rd")
    code = run_backup(project, tmp_path / "db", "LOG_USED: [csv]\nBACKUP_CONFIG: {backup_code_dir: [src]}\n"
                                                "REMOTE_SETTING: {password: OtherSecret99}\n", run_file=[])
    for path in (tmp_path / "db").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"S3cretPassw0rd" not in data and b"OtherSecret99" not in data, path


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


def test_git_commit_branch_dirty_flag_and_diff_are_recorded(tmp_path):
    project = make_project(tmp_path / "p")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    (project / "src" / "train.py").write_text("print('changed')\n")
    code = run_backup(project, tmp_path / "db", "LOG_USED: [csv]\nBACKUP_CONFIG: {backup_code_dir: [src]}\n",
                      run_file=[])
    info = json.loads((code / "git_info.json").read_text())
    assert info["branch"] == "main" and info["dirty"] is True and len(info["commit"]) == 40
    assert "print('changed')" in (code / "git_diff.patch").read_text()
    run_json = json.loads((tmp_path / "db" / "log").glob("t/*/*/*/*/run.json").__next__().read_text())
    assert run_json["git"]["commit"] == info["commit"]
