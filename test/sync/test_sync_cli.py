"""``rla sync push|pull`` through the real dispatcher."""
from __future__ import annotations

import yaml

import pytest

from rla_scripts.cli import main
from sync_helpers import RUN_NAMES, tree

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "project" / "rla_config.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump({"REMOTE_SETTING": {"file_transfer_protocol": "local",
                                                       "remote_data_root": str(tmp_path / "main_db")}}))
    return path


def test_push_dry_run_then_push_then_pull(make_run, config, tmp_path, capsys) -> None:
    """--dry-run lists steps and sends nothing; push sends; pull --since fetches by time."""
    make_run(RUN_NAMES[0], date="2026/03/04")
    make_run(RUN_NAMES[1], date="2026/05/06")
    data = str(tmp_path / "data")
    assert main(["sync", "push", "--data-root", data, "--config", str(config), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "upload" in out and "would transfer" in out and not (tmp_path / "main_db").exists()
    assert main(["sync", "push", "--data-root", data, "--config", str(config), "--regex", "2026/05/*"]) == 0
    assert "1 run, 1 changed" in capsys.readouterr().out
    assert main(["sync", "push", "--data-root", data, "--config", str(config)]) == 0
    assert tree(tmp_path / "main_db") == tree(tmp_path / "data")
    pulled = tmp_path / "pulled"
    assert main(["sync", "pull", "--data-root", str(pulled), "--config", str(config), "--until", "2026/04/01"]) == 0
    assert set(tree(pulled)) == {k for k in tree(tmp_path / "data") if "2026/03/04" in k}


def test_types_option_adds_checkpoints(make_run, config, tmp_path) -> None:
    """--types log,checkpoint pushes checkpoints on request."""
    make_run()
    assert main(["sync", "push", "--data-root", str(tmp_path / "data"), "--config", str(config),
                 "--types", "log,checkpoint"]) == 0
    assert (tmp_path / "main_db" / "checkpoint").is_dir() and not (tmp_path / "main_db" / "code").exists()


def test_errors_are_one_line_without_traceback(make_run, config, tmp_path, capsys) -> None:
    """A bad --types value and an empty pull selection exit non-zero with one line."""
    make_run()
    assert main(["sync", "push", "--data-root", str(tmp_path / "data"), "--config", str(config),
                 "--types", "logs"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "logs" in err
    assert main(["sync", "pull", "--data-root", str(tmp_path / "p"), "--config", str(config),
                 "--task", "nope"]) != 0
    assert "No run" in capsys.readouterr().err


def test_max_file_size_option_skips_big_files_with_a_warning(make_run, config, tmp_path, capsys) -> None:
    """--max-file-size 1K: files over 1 KiB stay home (warned on stderr); a bad size is a one-line error."""
    make_run()
    data = str(tmp_path / "data")
    assert main(["sync", "push", "--data-root", data, "--config", str(config), "--max-file-size", "1K"]) == 0
    captured = capsys.readouterr()
    assert "max_file_size" in captured.err and "skipped" in captured.out
    sent = tree(tmp_path / "main_db")
    assert sent and all(len(v) <= 1024 for v in sent.values())
    assert any(len(v) > 1024 for v in tree(tmp_path / "data").values())
    assert main(["sync", "pull", "--data-root", str(tmp_path / "p"), "--config", str(config),
                 "--max-file-size", "12X"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--max-file-size" in err
