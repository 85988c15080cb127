"""A project file hidden by an unanchored rule of an older `rla init` is named in a warning at log_files_gen()."""
from __future__ import annotations

from pathlib import Path

import pytest

from RLA.manager.experiment import ExperimentManager


def project(tmp_path: Path, gitignore: str) -> Path:
    root = tmp_path / "project"
    (root / "src" / "log").mkdir(parents=True)
    (root / "src" / "log" / "handler.py").write_text("x = 1\n")
    (root / "src" / "train.py").write_text("y = 2\n")
    (root / "src" / "notes.tmp").write_text("z\n")
    (root / ".gitignore").write_text(gitignore)
    (root / "rla_config.yaml").write_text(
        "LOG_USED: [log]\nDL_FRAMEWORK: none\nBACKUP_CONFIG:\n  backup_code_dir: [src]\n")
    return root


def run_once(root: Path, tmp_path: Path) -> Path:
    mgr = ExperimentManager()
    mgr.set_hyper_param(seed=0)
    mgr.configure("demo", rla_config=str(root / "rla_config.yaml"), data_root=str(root / "data"), run_file=[])
    try:
        layout = mgr.log_files_gen()
    finally:
        mgr.finish()
    return layout.log_dir / "warn.txt"


@pytest.mark.timeout(60)
def test_a_source_folder_hidden_by_an_old_rla_rule_is_named_in_a_warning(tmp_path):
    root = project(tmp_path, "*.tmp\n# RLA database (rla init)\n**/log/**\n**/code/**\n")
    warn_txt = run_once(root, tmp_path)
    text = warn_txt.read_text()
    assert "src/log" in text and "'**/log/**'" in text and "rla init" in text
    assert "notes.tmp" not in text  # the user's own rule is not RLA's business
    # one warning: src/log only (the data root inside the project, skipped anyway, is not reported)
    assert text.count("left out of git") == 1


@pytest.mark.timeout(60)
def test_no_warning_with_the_anchored_entry(tmp_path):
    root = project(tmp_path, "*.tmp\n# RLA database (rla init)\n/data/\n")
    warn_txt = run_once(root, tmp_path)
    assert not warn_txt.exists() or "rla init" not in warn_txt.read_text()
