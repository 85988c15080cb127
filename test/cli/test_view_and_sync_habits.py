"""``rla view`` lists numbered files in number order; ``rla sync pull --help`` shows only what pull takes."""
from __future__ import annotations

import json

import pytest

from RLA.layout import find_run
from rla_scripts.cli import main

pytestmark = pytest.mark.timeout(60)


def test_view_orders_checkpoints_by_their_numbers(db, capsys):
    layout = find_run(db, "demo/2026/11/01/10-00-00-000000")
    folder = layout.path("checkpoint")
    for step in (100, 20, 3, 1000):
        (folder / f"checkpoint-{step}.pt").write_bytes(b"x")
    assert main(["view", "demo/2026/11/01/10-00-00-000000", "--data-root", str(db), "--format", "json"]) == 0
    entries = json.loads(capsys.readouterr().out)["files"]["checkpoint"]["entries"]
    numbered = [e for e in entries if e.startswith("checkpoint-")]
    assert numbered == ["checkpoint-3.pt", "checkpoint-20.pt", "checkpoint-100.pt", "checkpoint-1000.pt"]
    assert main(["view", "demo/2026/11/01/10-00-00-000000", "--data-root", str(db)]) == 0
    assert "checkpoint-3.pt, checkpoint-20.pt, checkpoint-100.pt, checkpoint-1000.pt" in capsys.readouterr().out


def _help(capsys, *words: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(["sync", *words, "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def test_pull_help_lists_only_the_options_pull_takes(capsys):
    pull = _help(capsys, "pull")
    assert "--where" not in pull and "--status" not in pull
    assert all(option in pull for option in ("--task", "--regex", "--since", "--until", "--types", "RUN"))
    push = _help(capsys, "push")
    assert "--where" in push and "--status" in push


@pytest.mark.parametrize("option", [["--where", "lr > 1"], ["--status", "finished"]])
def test_pull_explains_why_it_refuses_where_and_status(tmp_path, capsys, option):
    assert main(["sync", "pull", "--data-root", str(tmp_path / "p"), *option]) == 1
    err = capsys.readouterr().err
    assert "selects by name and time only" in err and "rla list --where" in err
