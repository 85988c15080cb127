"""The replay-buffer tests again, under numpy 1.x (setup.py allows numpy >= 1.22).

numpy 1 promotes scalars by value where numpy 2 uses their type: integer arithmetic that is
exact under one can wrap around under the other (it did once, in the widening of narrowed
integer chunks). ``.ci/install-test-deps`` builds a side venv with numpy 1.x that sees every
other installed package; this test runs ``test/replay_buffer`` with its interpreter.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
VENV = Path(os.environ.get("RLA_NUMPY1_VENV") or Path(tempfile.gettempdir()) / "rla-numpy1-venv")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_replay_buffer_suite_passes_under_numpy_1():
    if os.environ.get("RLA_NUMPY1_INNER"):
        pytest.skip("this is the numpy 1 run")
    python = VENV / "bin" / "python"
    if not python.exists():
        if os.environ.get("CI"):
            pytest.fail(f"no numpy 1 venv at {VENV}: .ci/install-test-deps builds it")
        pytest.skip(f"no numpy 1 venv at {VENV} (run .ci/install-test-deps)")
    version = subprocess.run([str(python), "-c", "import numpy; print(numpy.__version__)"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
    assert version.startswith("1."), version
    env = dict(os.environ, RLA_NUMPY1_INNER="1")  # the inner run must not recurse
    out = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE),
                          f"--ignore={HERE / 'test_numpy1.py'}"],
                         capture_output=True, text=True, timeout=560, cwd=HERE.parents[1], env=env)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout.splitlines()[-1]
