"""An alias inside its own anchor (``a: &a [*a]``) is a cycle: refused at once, never walked.

PyYAML registers an anchor before composing its children, so ``*a`` inside ``&a`` makes the
node graph cyclic. The expansion count must notice the cycle; without that check it walks
the cycle forever (growing its stack) and ``load_config`` never returns. Each load runs in a
child process with a memory cap and a timeout, so a regression fails instead of hanging.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CYCLES = {
    "sequence": "a: &a [*a]\n",
    "mapping": "a: &a {x: *a}\n",
    "indirect": "a: &a [1, {b: [2, *a]}]\n",
    "merge_key": "a: &a {<<: *a, x: 1}\n",
    "block": "a: &a\n  - 1\n  - *a\n",
}

_CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from RLA.config import load_config
from RLA.errors import ConfigError
try:
    load_config(sys.argv[1])
except ConfigError as exc:
    print("ConfigError:", exc)
    sys.exit(0)
print("loaded")
sys.exit(3)
"""


def _load_in_child(path: Path) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:  # run() kills the child it started
        pytest.fail(f"load_config({path.name}) did not return within 60 s (walking an alias cycle?)")


@pytest.mark.parametrize("name", sorted(CYCLES))
def test_an_alias_inside_its_own_anchor_is_a_config_error(tmp_path: Path, name: str) -> None:
    config = tmp_path / "rla_config.yaml"
    config.write_text(CYCLES[name])
    done = _load_in_child(config)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ConfigError" in done.stdout and "cycle" in done.stdout and "line 1" in done.stdout, done.stdout


def test_an_alias_used_after_its_anchor_still_loads() -> None:
    """Sharing is not a cycle: an anchor used twice elsewhere, or merged, loads as before."""
    from RLA.config.bounded_yaml import load_bounded

    assert load_bounded("a: &a [1, 2]\nb: [*a, *a]\nc: {<<: {x: 1}}\n") == {"a": [1, 2], "b": [[1, 2], [1, 2]],
                                                                            "c": {"x": 1}}
