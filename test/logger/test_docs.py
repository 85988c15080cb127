"""The examples of docs/readme/logger.md run as written."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "readme" / "logger.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S) if DOC.exists() else []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from RLA.logger import output_formats

    monkeypatch.chdir(tmp_path)
    try:
        exec(compile(BLOCKS[index], f"{DOC.name}[{index}]", "exec"), {"__name__": "__doc_example__"})
    finally:
        output_formats.unregister("forwarder")


def test_doc_has_examples() -> None:
    assert len(BLOCKS) >= 3
