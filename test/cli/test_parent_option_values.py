"""An option written before a sub-command keeps its value when the sub-command defines it too.

``rla index --data-root X rebuild`` lost X: argparse copied ``rebuild``'s own default (None)
over it. The fix is general (:func:`rla_scripts.argv.keep_parent_values`), so the test walks
every parser of ``rla`` and checks each option shared by a parser and one below it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Iterator, List, Tuple

from RLA.query.testing import make_run
from rla_scripts.cli import build_parser, main


def _shared_options(
    parser: argparse.ArgumentParser, path: List[str]
) -> Iterator[Tuple[List[str], argparse.Action, argparse.ArgumentParser]]:
    """``(words to the child, the parent's action, the child)`` for each shared option."""
    own = {a.dest: a for a in parser._actions if a.option_strings and a.dest != "help"}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                for item in child._actions:
                    if item.option_strings and item.dest in own:
                        yield path + [name], own[item.dest], child
                yield from _shared_options(child, path + [name])


def test_an_option_before_the_sub_command_is_kept_for_every_shared_option() -> None:
    parser = build_parser()
    shared = list(_shared_options(parser, []))
    assert shared, "rla index and rla index rebuild both take --data-root"
    for words, action, _child in shared:
        if action.nargs == 0:  # a flag: written before the sub-command, it stays set
            args = parser.parse_args(words[:-1] + [action.option_strings[0], words[-1]])
            assert getattr(args, action.dest) == action.const, words
            continue
        args = parser.parse_args(words[:-1] + [action.option_strings[0], "/the/value", words[-1]])
        assert getattr(args, action.dest) == "/the/value", (words, action.dest)
        after = parser.parse_args(words + [action.option_strings[0], "/after"])
        assert getattr(after, action.dest) == "/after", (words, action.dest)
        neither = parser.parse_args(words)
        assert getattr(neither, action.dest) == action.default, (words, action.dest)


def test_rla_index_data_root_before_rebuild_indexes_that_root(tmp_path: Path, capsys, monkeypatch) -> None:
    root = tmp_path / "db"
    make_run(root, task="t", params={"lr": 1})
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RLA_DATA_ROOT", raising=False)
    assert main(["index", "--data-root", str(root), "rebuild"]) == 0
    out = capsys.readouterr().out
    assert "indexed 1 run " in out and str(root) in out
