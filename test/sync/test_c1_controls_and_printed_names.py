"""Names a server lists with C1 controls are refused; what ``rla sync`` prints of a name is escaped.

U+0080-U+009F are control characters as much as ESC: on a terminal in 8-bit mode U+009B is
a one-byte CSI, and a file name made of undecodable bytes reaches Python as lone surrogates
(``\\udc9b``) that print back as that raw byte. A plain name excludes them all; names that
remain legal (a bidi override U+202E) are escaped when ``--dry-run`` prints the plan.
"""
from __future__ import annotations

from pathlib import Path
from typing import List

import pytest
import yaml

from RLA.errors import UnsafePathError
from RLA.safe_paths import check_name, check_relative
from RLA.sync.syncer import RunSyncer
from RLA.terminal import escape
from rla_scripts.cli import main
from sync_helpers import RUN_NAMES, TASK, settings

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("name", ["a\x9b31mb", "\x80", "x\x85y", "\x9f"])
def test_c1_control_characters_are_not_plain_names(name: str) -> None:
    with pytest.raises(UnsafePathError, match="control character"):
        check_name(name)
    with pytest.raises(UnsafePathError, match="control character"):
        check_relative(f"task/{name}")


def test_letters_beyond_ascii_stay_plain_names() -> None:
    assert check_name("\u00e9t\u00e9 \u65e5\u672c \u00a0x") == "\u00e9t\u00e9 \u65e5\u672c \u00a0x"


def test_a_pulled_file_named_with_a_c1_control_is_skipped(make_run, tmp_path: Path) -> None:
    server = tmp_path / "main_db"
    run = make_run(RUN_NAMES[0], root=server)
    (run.log_dir / "csi\x9b2J.txt").write_bytes(b"owned\n")
    warnings: List[str] = []
    report = RunSyncer(settings(file_transfer_protocol="local", remote_data_root=str(server)),
                       tmp_path / "pulled", warn=warnings.append).pull()
    assert report.files_skipped == 1 and report.files_received > 0
    assert not [p for p in (tmp_path / "pulled").rglob("*") if "\x9b" in p.name]
    assert any("csi\\x9b2J.txt" in w and "not a plain file name" in w for w in warnings), warnings


@pytest.mark.parametrize("text, shown", [("a\udc9b31m", "a\\x9b31m"), ("\udcff\udcfe", "\\xff\\xfe"),
                                          ("x\ud800", "x\\ud800"), ("\x9b", "\\x9b")])
def test_undecodable_bytes_print_as_their_escaped_byte(text: str, shown: str) -> None:
    assert escape(text) == shown
    escape(text).encode("ascii")  # nothing left that a terminal could take for a control


def test_dry_run_escapes_the_names_it_prints(make_run, tmp_path: Path, capsys) -> None:
    server = tmp_path / "main_db"
    run = make_run(RUN_NAMES[0], root=server)
    (run.log_dir / "evil\u202etxt.exe").write_bytes(b"x")
    config = tmp_path / "project" / "rla_config.yaml"
    config.parent.mkdir()
    config.write_text(yaml.safe_dump({"REMOTE_SETTING": {"file_transfer_protocol": "local",
                                                         "remote_data_root": str(server)}}))
    assert main(["sync", "pull", "--data-root", str(tmp_path / "pulled"), "--config", str(config),
                 "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "evil\\u202etxt.exe" in out and "\u202e" not in out
    assert f"{TASK}/2026/03/04" in out
