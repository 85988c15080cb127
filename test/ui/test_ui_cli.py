"""rla tag, rla note and rla diff on the demo database."""
from __future__ import annotations

import json

from rla_scripts.cli import main


def test_rla_tag_adds_lists_and_removes(demo, capsys):
    root = str(demo["root"])
    assert main(["tag", demo["first"], "baseline", "v2", "--data-root", root]) == 0
    assert capsys.readouterr().out.strip().endswith("baseline v2")
    assert main(["tag", demo["first"], "v2", "--remove", "--data-root", root]) == 0
    main(["tag", demo["first"], "--data-root", root])
    assert capsys.readouterr().out.strip().splitlines()[-1].endswith(": baseline")
    assert main(["tag", demo["first"], "bad tag", "--data-root", root]) == 2
    assert "Bad tag" in capsys.readouterr().err


def test_rla_note_sets_shows_and_clears(demo, capsys):
    root = str(demo["root"])
    main(["note", demo["first"], "diverged at 1M steps", "--data-root", root])
    main(["note", demo["first"], "--data-root", root])
    assert capsys.readouterr().out.splitlines()[-1] == "diverged at 1M steps"
    main(["note", demo["first"], "--clear", "--data-root", root])
    assert "(no note)" in capsys.readouterr().out


def test_rla_diff_shows_params_metrics_and_code(demo, capsys):
    assert main(["diff", demo["first"], demo["second"], "--data-root", str(demo["root"])]) == 0
    out = capsys.readouterr().out
    assert "seed: 0 -> 1" in out and "-SEED = 0" in out and "+SEED = 1" in out and "last(return)" in out
    assert "lr:" not in out  # equal hyper-parameters are not listed
    main(["diff", demo["first"], demo["second"], "--data-root", str(demo["root"]), "--format", "json"])
    assert json.loads(capsys.readouterr().out)["params"] == {"seed": [0, 1]}
