"""A full disk while a run's code is copied: a DiskFullError naming the file, no half copy,
and the secrets of a copied file never reach the disk in clear, not even for a moment."""
from __future__ import annotations

import errno
import sys
from pathlib import Path

import pytest

from RLA.errors import DiskFullError
from RLA.manager import code_backup
from RLA.manager.code_backup import backup_code
from RLA.manager.experiment import ExperimentManager
from RLA.redaction import MARKER, RedactionPolicy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from small_disk import fill, small_disk  # noqa: E402,F401

pytestmark = pytest.mark.timeout(120)
BIG = 1_200_000


def _project(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "big.py").write_bytes(b"x = 1\n" * (BIG // 6))
    (project / "rla_config.yaml").write_text("LOG_USED: [log, csv]\nDL_FRAMEWORK: none\n"
                                             "BACKUP_CONFIG: {backup_code_dir: [big.py]}\n")
    return project


def test_a_full_disk_during_the_code_backup_is_a_disk_full_error_and_no_half_file(tmp_path, small_disk,
                                                                                     monkeypatch):
    """It was a bare OSError from shutil, and a truncated big.py stayed in the snapshot."""
    project = _project(tmp_path)
    monkeypatch.setattr(sys, "argv", ["train.py"])
    mgr = ExperimentManager()
    mgr.set_hyper_param(seed=1)
    mgr.configure("full", rla_config=str(project / "rla_config.yaml"), data_root=str(small_disk / "data"))
    fill(small_disk, leave=200_000)  # room for the run's folders and run.json, not for big.py
    with pytest.raises(DiskFullError, match="big.py") as info:
        mgr.log_files_gen()
    assert info.value.errno == errno.ENOSPC and info.value.free is not None
    code_dirs = list((small_disk / "data" / "code").rglob("*"))
    assert not [p for p in code_dirs if p.is_file()], "a half-written copy was left"


def test_a_copied_file_never_holds_the_secret_on_disk(tmp_path, monkeypatch):
    """Copy then redact left the secret in clear until the rewrite (a kill in between kept it):
    every byte written to the snapshot is checked as it is written."""
    secret = "CopySecret-31337"
    src = tmp_path / "src"
    src.mkdir()
    (src / "settings.py").write_text(f"TOKEN = {secret!r}\n" * 1000)
    (src / "settings.py").chmod(0o640)
    written = []
    real = code_backup.atomic_file

    def spying(path, durable=True):
        context = real(path, durable)

        class Spy:
            def __enter__(self):
                handle = context.__enter__()
                original = handle.write
                handle.write = lambda data: written.append(bytes(data)) or original(data)
                return handle

            def __exit__(self, *exc):
                return context.__exit__(*exc)
        return Spy()

    monkeypatch.setattr(code_backup, "atomic_file", spying)
    monkeypatch.setattr(code_backup.shutil, "copy2", lambda *a, **k: pytest.fail("copied unredacted"))
    code = tmp_path / "code"
    code.mkdir()
    copied = backup_code(code, tmp_path, "source", ["src"], "", [], [],
                         redaction=RedactionPolicy(values=[secret]))
    assert copied == [code / "src" / "settings.py"]
    assert written and not any(secret.encode() in piece for piece in written)
    assert (code / "src" / "settings.py").read_text() == f"TOKEN = '{MARKER}'\n" * 1000
    assert (code / "src" / "settings.py").stat().st_mode & 0o777 == 0o640
