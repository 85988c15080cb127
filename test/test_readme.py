"""The README is current, and CI runs exactly the README's test command."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def readme_commands() -> list:
    text = (REPO / "README.md").read_text()
    return re.findall(r"```bash\n(.+?)\n```", text)[:2]


def test_readme_is_built_from_its_parts():
    result = subprocess.run([sys.executable, str(REPO / "docs" / "build_readme.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_readme_opens_with_the_example_and_the_test_commands():
    example, tests = readme_commands()
    assert "example/simplest_code/main.py" in example and "pip install" in example
    assert "pytest" in tests


def test_ci_runs_exactly_the_readme_test_command():
    _, tests = readme_commands()
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert tests in ci
