"""rla fsck on a crafted tree (FIFOs, dangling links, link loops named like runs or partial
copies) finishes, reports only what it owns and removes only the partial copy."""
from __future__ import annotations

import os
import threading
from typing import Any, List

import pytest

from RLA.ops import testing
from rla_scripts.cli import main

PART = ".rla-20261125-120000-1-abcdef.part.0123456789ab"


def _main_within(argv: List[str], seconds: float = 30) -> Any:
    result: List[Any] = []
    worker = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"rla {' '.join(argv)} hangs"
    return result[0]


@pytest.mark.timeout(90)
def test_fsck_on_fifos_and_links_named_like_runs_finishes_and_touches_only_the_partial(tmp_path, capsys):
    root = tmp_path / "data"
    testing.make_database(root, runs=2, files=1, size=16)
    before = {run: testing.manifest_of(run) for run in testing._runs(root)}
    day = next(iter(before)).log_dir.parent
    os.mkfifo(day / "10-00-09-000000_10.0.0.1_&seed=9")
    os.symlink("/nonexistent", day / "10-00-08-000000_10.0.0.1_&seed=8")
    os.symlink(day, day / "loop")
    os.mkfifo(day / PART)
    (root / ".trash").mkdir()
    os.mkfifo(root / ".trash" / "20261125-120000-1-abcdef")
    assert _main_within(["fsck", "--data-root", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"partial   log/demo/2026/11/01/{PART}" in out and "1 partial" in out, out
    assert _main_within(["fsck", "--repair", "--data-root", str(root)]) == 0
    assert not os.path.lexists(day / PART)
    for name in ("10-00-09-000000_10.0.0.1_&seed=9", "10-00-08-000000_10.0.0.1_&seed=8", "loop"):
        assert os.path.lexists(day / name)
    assert all(testing.manifest_of(run) == manifest for run, manifest in before.items())
