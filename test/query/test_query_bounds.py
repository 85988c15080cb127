"""The query parser is bounded: deep nesting, huge sums and catastrophic regexes are QueryErrors."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from RLA.errors import QueryError
from RLA.query import regex as regex_module
from RLA.query.expr import MAX_DEPTH, MAX_NODES, RowView, check_size, parse_query
from RLA.query.testing import make_run
from rla_scripts.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text", [
    "a == " + "-" * 5000 + "1",                 # 5,000 unary minus signs
    "a == " + "+".join(["b"] * 3000),           # a 3,000-term sum
    "not " * 2400 + "a",                        # 2,400 nots
    "a == " + "-" * (MAX_DEPTH + 5) + "b",      # just past the limit, below Python's own
    "(" * 300 + "a" + ")" * 300,                # past Python's parenthesis limit
    "a in " + "[" * 80 + "]" * 80,              # nested list literals
])
def test_deep_nesting_is_a_query_error_naming_the_limit(text):
    with pytest.raises(QueryError, match="nested too deeply") as info:
        parse_query(text)
    assert f"at most {MAX_DEPTH} levels" in str(info.value) and "Fix:" in str(info.value)


def test_nesting_at_the_limit_still_parses_and_evaluates():
    text = "a == " + "-" * (MAX_DEPTH - 2) + "b"
    query = parse_query(text)
    assert query.matches(RowView({"a": 3.0, "b": 3.0}, {}))


def test_too_many_nodes_is_a_query_error_naming_the_limit():
    import ast
    text = " or ".join(f"a == {i}" for i in range(1700))
    with pytest.raises(QueryError, match=f"at most {MAX_NODES} names") as info:
        check_size(text, ast.parse(text, mode="eval"))
    assert "Query too large" in str(info.value)


def test_a_long_flat_or_and_a_long_list_are_fine():
    query = parse_query(" or ".join(f"a == {i}" for i in range(700)))
    assert query.matches(RowView({"a": 699}, {})) and not query.matches(RowView({"a": 700}, {}))
    assert parse_query("a in [" + ",".join(map(str, range(2000))) + "]").matches(RowView({"a": 1999}, {}))


def test_too_long_is_a_query_error():
    with pytest.raises(QueryError, match="at most 10000 characters"):
        parse_query("a == 1 or " * 2000 + "a == 2")


def _match_in_child(pattern: str, value: str, seconds: float = 60.0) -> str:
    """Match in a child process: a backtracking ``re`` holds the GIL, so only a process
    boundary (killed on timeout) keeps a regression from hanging the suite."""
    code = ("import sys; from RLA.query.expr import parse_query, RowView; "
            "q = parse_query(sys.argv[1]); print(q.matches(RowView({'name': sys.argv[2]}, {})))")
    try:
        done = subprocess.run([sys.executable, "-c", code, f"matches(name, '{pattern}')", value],
                              capture_output=True, text=True, timeout=seconds, cwd=REPO)
    except subprocess.TimeoutExpired:
        pytest.fail(f"matching {pattern!r} did not finish in {seconds} s: catastrophic backtracking")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("pattern", ["^(a+)+$", "(a*)*b", "^(a|aa)*$", "(x+x+)+y"])
def test_catastrophic_patterns_match_in_linear_time_with_re2(pattern):
    value = "a" * 5000 + "!" if "x" not in pattern else "x" * 5000
    assert _match_in_child(pattern, value) == "False"


def test_re2_is_the_engine_when_installed():
    pytest.importorskip("re2")
    assert regex_module.engine() == "re2"
    assert parse_query("matches(env, 'Hop.*v[0-9]+')").matches(RowView({"env": "Hopper-v4"}, {}))


@pytest.mark.parametrize("pattern", [r"(a)\\1", "(?=a)b"])
def test_patterns_re2_cannot_match_in_linear_time_are_query_errors(pattern):
    pytest.importorskip("re2")
    with pytest.raises(QueryError, match="Bad regular expression"):
        parse_query(f"matches(name, '{pattern}')")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("pattern, reason", [
    ("(a+)+$", "inside a repeated group"), ("(a*)*b", "inside a repeated group"),
    ("(a|aa)*$", "alternation inside a repeated group"), ("((ab)+c)+", "inside a repeated group"),
    (r"(a)\\1", "Backreferences"), ("(?!a)b", "lookarounds"), ("a*a*a*a*b", "unbounded quantifiers"),
    ("(", "Bad regular expression"),
])
def test_without_re2_dangerous_patterns_are_refused(monkeypatch, pattern, reason):
    monkeypatch.setattr(regex_module, "_re2", lambda: None)
    with pytest.raises(QueryError, match="regular expression|exponential|refused|quantifiers") as info:
        parse_query(f"matches(name, '{pattern}')")
    assert reason in str(info.value) and "google-re2" in str(info.value) or pattern == "("


def test_without_re2_ordinary_patterns_still_work(monkeypatch):
    monkeypatch.setattr(regex_module, "_re2", lambda: None)
    query = parse_query("matches(env, '^Hop.*-v[0-9]+$') and matches(algo, '(sac|td3)')")
    assert query.matches(RowView({"env": "Hopper-v4", "algo": "td3"}, {}))
    assert not query.matches(RowView({"env": "Walker-v4", "algo": "td3"}, {}))


@pytest.mark.timeout(120)
def test_the_cli_reports_a_bound_as_one_error_line(tmp_path, capsys):
    root = tmp_path / "data"
    make_run(root, params={"a": 1}, curves={"r": [1.0]})
    assert main(["list", "--data-root", str(root), "--where", "not " * 2400 + "a"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rla list: error: Query nested too deeply") and "Traceback" not in err
