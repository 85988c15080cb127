"""``rla buffer inspect`` prints a snapshot's manifest text with control characters made visible.

A replay snapshot can arrive by ``rla sync pull`` (``sync_types: [..., replay]``); its
MANIFEST.json chooses the provenance text inspect prints. ``ESC ] 0 ; ... BEL`` retitles the
terminal (or writes the clipboard), ``ESC [ 2 J`` clears it: they reached the terminal raw.
"""
from __future__ import annotations

import json
from pathlib import Path

from helpers import fill, make
from rla_scripts.cli import main


def test_inspect_shows_escape_sequences_of_a_crafted_manifest_as_text(tmp_path: Path, capsys) -> None:
    buf = make(sampler="prioritized")
    fill(buf, 20)
    snap = Path(buf.dumps(tmp_path / "store"))
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    manifest["provenance"] = {"operation": "save\x1b]0;owned\x07", "source": "\x1b[2J\u202eevil\x9b31m"}
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))
    assert main(["buffer", "inspect", str(snap)]) == 0
    out = capsys.readouterr().out
    assert "provenance: save\\x1b]0;owned\\x07 of \\x1b[2J\\u202eevil\\x9b31m" in out
    assert not any(ch in out for ch in "\x1b\x07\u202e\x9b")
    assert main(["buffer", "inspect", "--json", str(snap)]) == 0
    assert "\x1b" not in capsys.readouterr().out  # JSON escapes by construction
