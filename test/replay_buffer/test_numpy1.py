"""The replay-buffer tests again, under numpy 1.x (setup.py allows numpy >= 1.22).

numpy 1 promotes scalars by value where numpy 2 uses their type: integer arithmetic that is
exact under one can wrap around under the other (it did once, in the widening of narrowed
integer chunks). ``.ci/install-test-deps`` builds a side venv with numpy 1.x that sees every
other installed package; this test runs the replay tests whose outcome rests on numpy's
arithmetic (``PROMOTION_TESTS``) with its interpreter.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
VENV = Path(os.environ.get("RLA_NUMPY1_VENV") or Path(tempfile.gettempdir()) / "rla-numpy1-venv")

# The tests re-run under numpy 1: those whose result depends on how numpy promotes scalars and
# mixed integer types (numpy 1 by value, numpy 2 by type, NEP 50), not the whole folder:
# - narrowed integer chunks widened back into their field's type (the bug this file caught:
#   numpy 1 added in the stored type and 256 came back 0), in the current and older formats;
# - schema conversion of Python scalars, lists and typed arrays into the field dtypes;
# - episode ids (rank bits and counters, int64 arithmetic with Python ints) and TED's
#   successor comparisons and exception slots;
# - sampler arithmetic (priorities ** alpha, IS weights, sum trees in float64 against float32);
# - the reshard plan's positions (write_count - size + first_pos) and a resharded load.
# Crash, fault-point, async, trigger, O_DIRECT, manifest and CLI tests exercise processes and
# files the same way under either numpy; they run once, in the main suite.
PROMOTION_TESTS = [
    "test_narrow_integers.py",
    "test_format_versions.py",
    "test_roundtrip.py",
    "test_episodes.py",
    "test_ted.py",
    "test_samplers.py",
    "test_sharding.py::test_plan_is_deterministic_balanced_and_never_splits",
]


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
    selected = [str(HERE / name) for name in PROMOTION_TESTS]
    out = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *selected],
                         capture_output=True, text=True, timeout=560, cwd=HERE.parents[1], env=env)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout.splitlines()[-1]
