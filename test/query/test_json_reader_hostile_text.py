"""JSON text crafted against the reader itself: the depth scan stays linear, lone surrogates are refused.

* The depth pre-scan skips strings with a regex. A string that never ends, full of escaped
  quotes (``"\\"\\"\\"...``), made that regex retry from every quote to the end of the file:
  32 KB took 10 s, so a 16 MiB ``run.json`` hung ``rla list`` for the whole database.
* ``"\\ud800"`` is valid JSON but no UTF-8 text: it made ``list_runs`` fail for everyone
  (pyarrow and SQLite cannot encode it). Such a document is unreadable, like invalid UTF-8.
"""
from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from RLA.safe_read import UnreadableFileError, nesting_depth, read_json

#: Unterminated strings of escapes, with enough brackets after them to pass the cheap count.
HOSTILE_SCANS = {
    "escaped_quotes": b'"' + b'\\"' * (256 << 10) + b"[]" * 65,
    "escaped_quotes_in_array": b"[" * 10 + b'"a' + b'\\"' * (256 << 10) + b"{}" * 65,
}

_CHILD = """
import sys
from RLA.safe_read import nesting_depth
data = open(sys.argv[1], "rb").read()
print(nesting_depth(data, 64))
"""


@pytest.mark.parametrize("name", sorted(HOSTILE_SCANS))
def test_the_depth_scan_of_an_unterminated_string_of_escapes_ends(tmp_path: Path, name: str) -> None:
    """512 KiB that took the old scan about 40 minutes: done well inside a generous watchdog."""
    path = tmp_path / "run.json"
    path.write_bytes(HOSTILE_SCANS[name])
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the JSON depth scan did not finish within 60 s on 512 KiB (quadratic string skipping?)")
    assert done.returncode == 0, done.stderr
    with pytest.raises(UnreadableFileError, match="not valid JSON"):
        read_json(path)


def test_brackets_inside_strings_still_do_not_count() -> None:
    text = b'{"a": "[[[[\\"{{{{", "b": ' + b"[" * 64 + b"]" * 64 + b"}"
    assert nesting_depth(text, 70) == 65
    assert nesting_depth(b'["' + b"[" * 100 + b'"]', 64) == 1
    assert nesting_depth(b"[" * 65 + b'"unterminated', 64) == 65


@pytest.mark.parametrize("text", [b'{"a": "\\ud800"}', b'{"a": ["x", "\\uDFFF"]}', b'{"\\udc9b": 1}',
                                  b'{"a": "\\ud83d"}', b'["\\ude00\\ud83d"]'])
def test_a_lone_surrogate_escape_makes_the_file_unreadable(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(text)
    with pytest.raises(UnreadableFileError, match="surrogate"):
        read_json(path)


@pytest.mark.parametrize("text, value", [(b'{"a": "\\ud83d\\ude00"}', {"a": "\U0001F600"}),
                                         (b'{"a": "\\\\ud800"}', {"a": "\\ud800"}),
                                         (b'{"a": "\\u00e9\\u202e"}', {"a": "\u00e9\u202e"})])
def test_surrogate_pairs_and_escaped_backslashes_are_fine(tmp_path: Path, text: bytes, value: object) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(text)
    assert read_json(path) == value


@pytest.mark.timeout(120)
def test_a_run_json_with_a_lone_surrogate_is_skipped_and_the_others_listed(tmp_path: Path) -> None:
    from RLA.query import list_runs
    from RLA.query.testing import make_run

    good = [make_run(tmp_path, params={"kind": "good", "seed": i}) for i in range(2)]
    bad = make_run(tmp_path, params={"kind": "bad", "seed": 9})
    (bad.log_dir / "run.json").write_bytes(b'{"status": "finished", "host": "\\udfff", '
                                           b'"hyper_params": {"kind": "\\ud800"}}')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = list_runs(tmp_path)
    assert sorted(frame["index"]) == sorted(run.index for run in good)
    assert "surrogate" in dict(frame.attrs["skipped"])[bad.index]
