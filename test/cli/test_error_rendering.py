"""Command-line errors: the query's caret sits on its own line, and values from outside stay escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from rla_scripts.cli import main


@pytest.mark.timeout(60)
def test_a_syntax_error_shows_the_query_and_the_caret_on_their_own_lines(db: Path, capsys) -> None:
    assert main(["list", "--data-root", str(db), "--where", "lr >= 1e-4 and (seed"]) == 2
    lines = capsys.readouterr().err.splitlines()
    query = next(i for i, line in enumerate(lines) if line.strip() == "lr >= 1e-4 and (seed")
    assert lines[query + 1].index("^") == lines[query].index("(")  # the bracket never closed
    assert "\\n" not in "".join(lines)


@pytest.mark.timeout(60)
def test_control_characters_in_the_query_are_escaped_and_the_caret_follows_them(db: Path, capsys) -> None:
    assert main(["list", "--data-root", str(db), "--where", 'algo == "a\x1b[2Jb" and (seed']) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err
    lines = err.splitlines()
    shown = next(i for i, line in enumerate(lines) if line.strip() == 'algo == "a\\x1b[2Jb" and (seed')
    assert lines[shown + 1].index("^") == lines[shown].index("(seed")  # counted on the escaped text


@pytest.mark.timeout(60)
def test_a_line_break_inside_the_query_cannot_fake_a_line(db: Path, capsys) -> None:
    assert main(["list", "--data-root", str(db), "--where", 'algo == "a\nfake: ok" and (seed']) == 2
    lines = capsys.readouterr().err.splitlines()
    assert not any(line.startswith("fake: ok") for line in lines)
    assert any('"a\\nfake: ok"' in line for line in lines)


def test_line_breaks_in_other_errors_stay_escaped() -> None:
    from RLA.errors import RLAError
    from RLA.terminal import render_error

    error = RLAError("bad run\nfake: line", expected="x", found="run\x1b[2Jname", fix="y")
    assert render_error(error) == "bad run\\nfake: line. Expected: x. Found: run\\x1b[2Jname. Fix: y."
