"""Extras state the versions RLA supports; the exact CPU torch build lives only in .ci/constraints.txt."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_READ_SETUP = """
import json, sys, setuptools
setuptools.setup = lambda **kw: print(json.dumps({"install": kw["install_requires"], "extras": kw["extras_require"]}))
sys.argv = ["setup.py"]
exec(compile(open("setup.py").read(), "setup.py", "exec"), {"__name__": "__main__", "__file__": "setup.py"})
"""


def setup_requirements() -> dict:
    out = subprocess.run([sys.executable, "-c", _READ_SETUP], cwd=REPO, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_no_requirement_forces_one_exact_version_on_users():
    reqs = setup_requirements()
    every = list(reqs["install"]) + [r for extra in reqs["extras"].values() for r in extra]
    assert [r for r in every if "==" in r.split(";")[0]] == []
    torch = {r for r in every if re.match(r"torch\b", r)}
    assert torch and all(re.fullmatch(r"torch>=\d+\.\d+", r) for r in torch), torch


def test_constraints_pin_the_cpu_build_and_every_install_command_passes_them():
    assert "torch==2.13.0" in (REPO / ".ci" / "constraints.txt").read_text().splitlines()
    commands = re.findall(r"```bash\n(.+?)\n```", (REPO / "README.md").read_text())[:2]
    install_lines = [commands[0]] + [line for line in (REPO / ".ci" / "install-test-deps").read_text().splitlines()
                                     if "pip install" in line and ".[" in line]
    for line in install_lines:
        assert "-c .ci/constraints.txt" in line, line
