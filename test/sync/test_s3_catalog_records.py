"""Records built from a store catalog's texts equal the records the query reads from the run's folder.

No server: each run is made on disk, its catalog entry built as a push builds it, sent
through the catalog object's bytes (gzip'ed JSON) and parsed back as a reader parses it;
the record the reader builds from the entry's texts (:func:`RLA.query.external.record_from_texts`)
must equal :func:`RLA.query.records.read_record` of the folder, problems included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from RLA.layout import RunLayout
from RLA.query.external import record_from_texts
from RLA.query.records import read_record
from RLA.query.testing import make_run
from RLA.sync.catalog_publish import build_entry
from RLA.sync.catalog_seed import _Places, _texts
from RLA.sync.store_catalog import CatalogError, dump_object, parse_object

TYPES = ("log", "code", "archive_tester")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _info(run: RunLayout, data: bytes) -> None:
    _write(run.log_dir / "run.json", data)


def _params(run: RunLayout, data: bytes) -> None:
    (run.log_dir / "run.json").unlink()
    _write(run.code_dir / "parameter.json", data)


def _tester(run: RunLayout) -> None:
    _params(run, b"{}")
    _write(run.archive_tester_file, json.dumps({"hyper_param": {"lr": 0.1}, "tracked_keys": ["lr"]}).encode())


CRAFTED: Dict[str, Callable[[RunLayout], None]] = {
    "run.json not an object": lambda run: _info(run, b"[1, 2]"),
    "run.json not JSON": lambda run: _info(run, b"{nope"),
    "run.json too deep": lambda run: _info(run, b"[" * 200 + b"]" * 200),
    "run.json with a NUL byte": lambda run: _info(run, b'{"status": "a\x00b"}'),
    "run.json with a lone surrogate": lambda run: _info(run, b'{"status": "\\ud800"}'),
    "status of the wrong type": lambda run: _info(run, b'{"status": 5, "start_time": []}'),
    "hyper_params of the wrong type": lambda run: _info(run, b'{"status": "finished", "hyper_params": [1]}'),
    "parameter.json not an object": lambda run: _params(run, b"3"),
    "parameter.json nested": lambda run: _params(run, json.dumps({"net": {"h": 64, "act": "relu"}}).encode()),
    "too many hyper-parameters": lambda run: _params(
        run, json.dumps({f"k{i}": i for i in range(10_001)}).encode()
    ),
    "archive_tester params": lambda run: _tester(run),
}
STYLES = ("current", "original", "backup", "name", "synced")


def _roundtrip(run: RunLayout) -> Any:
    """The entry of ``run`` as a reader gets it: built by the pusher, through the object's bytes."""
    entry = build_entry(run, TYPES)
    (parsed,) = parse_object(dump_object([entry]), "entries/x")
    return parsed


def _same_record(run: RunLayout, cache: Path) -> None:
    entry = _roundtrip(run)
    local = RunLayout(cache, run.task, run.date, run.name, run.archived)
    built = record_from_texts(local, _texts(_Places(cache), entry), entry.progress)
    expected = read_record(run, "", full_info=False)
    assert built.__dict__ == expected.__dict__


@pytest.mark.parametrize("style", STYLES)
def test_each_run_style_gives_the_record_of_its_folder(tmp_path: Path, style: str) -> None:
    """Current, original, backup.txt-only, name-only and synced runs: the same record, metrics included."""
    run = make_run(
        tmp_path / "src", style=style, params={"lr": 0.001, "seed": 3}, curves={"r": [1.0, 3.0, 2.0]}
    )
    _same_record(run, tmp_path / "cache")


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted_files_give_the_same_problems_as_on_disk(tmp_path: Path, case: str) -> None:
    """A damaged or hostile file carried as text is refused exactly as read from disk (same problems)."""
    run = make_run(tmp_path / "src", params={"lr": 0.001}, curves={"r": [1.0]})
    CRAFTED[case](run)
    _same_record(run, tmp_path / "cache")


def test_an_archived_run_is_read_under_arc(tmp_path: Path) -> None:
    """An archived run's entry keeps its place under arc/ (its texts land where the query reads them)."""
    run = make_run(tmp_path / "src", params={"lr": 0.5}, curves={"r": [1.0]}, archived=True)
    entry = _roundtrip(run)
    assert entry.archived and entry.key == f"arc:{run.relative}"
    _same_record(run, tmp_path / "cache")


def test_a_text_that_is_not_utf8_is_refused_by_the_reader() -> None:
    """A carried text with a lone surrogate (valid JSON, but no file holds it): CatalogError."""
    import gzip

    raw = (
        b'{"version": 1, "runs": {"demo/2026/01/01/10-00-00-000000": {"stamp": 1, "texts": '
        b'{"log/run.json": ["\\ud800", null]}, "progress": null, "progress_mtime": null, "fetch": []}}}'
    )
    with pytest.raises(CatalogError, match="catalog"):
        parse_object(gzip.compress(raw), "entries/x")


def test_text_files_keep_the_readers_size_caps() -> None:
    """A carried file over the reader's cap is refused as a file on disk would be (the catalog's own cap is lower)."""
    from RLA.query.external import TextFiles
    from RLA.safe_read import UnreadableFileError

    files = TextFiles({"/c/log/x": b"12345"}, None)
    assert files.data(Path("/c/log/x"), 5) == b"12345"
    with pytest.raises(UnreadableFileError):
        files.data(Path("/c/log/x"), 4)
    with pytest.raises(FileNotFoundError):
        files.data(Path("/c/log/y"), 4)
    assert files.present(Path("/c/log/x")) and not files.present(Path("/c/log/y"))


@pytest.mark.parametrize("made", ["a folder", "a link"])
def test_a_folder_made_meanwhile_by_another_refresh_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made: str
) -> None:
    """Two refreshes of one cache: a folder the other made after our lstat is accepted, a link is refused."""
    import os

    from RLA.errors import UnsafePathError
    from RLA.sync import catalog_files

    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    cache.mkdir()
    elsewhere.mkdir()
    target = cache / "log"
    real_mkdir = os.mkdir

    def racing_mkdir(path: str, *args: object) -> None:
        if made == "a folder":
            real_mkdir(path)
        else:
            os.symlink(elsewhere, path)
        real_mkdir(path)  # FileExistsError, as when the other refresh won

    monkeypatch.setattr(catalog_files.os, "mkdir", racing_mkdir)
    folders = catalog_files.Folders(cache)
    if made == "a folder":
        assert folders.ensure(str(target)) == str(target) and target.is_dir()
    else:
        with pytest.raises(UnsafePathError):
            folders.ensure(str(target))
