"""The query language: every operator, typing rules, and rejected input."""
from __future__ import annotations

import pytest

from RLA.errors import QueryError
from RLA.query.expr import RowView, parse_query

ROW = RowView({"env": "Hopper", "lr": 3e-4, "seed": 3, "algo": "sac", "use_gae": True,
               "net.hidden": 64, "legacy_lr": "0.001", "arch": [64, 64], "host": "gpu1"},
              {"return": [120.0, -5.0, 150.0]})


@pytest.mark.parametrize("text, expected", [
    ("env == 'Hopper'", True), ("env == 'Walker'", False),
    ("env != 'Walker'", True), ("env != 'Hopper'", False),
    ("lr < 1e-3", True), ("lr < 1e-4", False),
    ("lr <= 3e-4", True), ("lr <= 2e-4", False),
    ("seed > 2", True), ("seed > 3", False),
    ("seed >= 3", True), ("seed >= 4", False),
    ("algo in ['sac', 'td3']", True), ("algo in ['ppo']", False),
    ("algo not in ['ppo']", True), ("algo not in ['sac']", False),
    ("env == 'Hopper' and seed == 3", True), ("env == 'Hopper' and seed == 4", False),
    ("env == 'Walker' or seed == 3", True), ("env == 'Walker' or seed == 4", False),
    ("not env == 'Walker'", True), ("not (env == 'Hopper')", False),
    ("1e-4 <= lr < 1e-3", True), ("1e-4 <= lr < 2e-4", False),
    ("last('return') > 100", True), ("last('return') > 130", False),
    ("min('return') < 0", True), ("max('return') >= 150", True), ("max('return') > 150", False),
    ("net.hidden == 64", True),
    ("legacy_lr == 0.001", True), ("legacy_lr > 1e-4", True),
    ("arch == [64, 64]", True),
    ("missing is None", True), ("lr is not None", True), ("missing == 1", False), ("missing > 0", False),
    ("use_gae", True), ("use_gae and lr < 1", True),
    ("matches(host, '^gpu[0-9]$')", True), ("matches(env, 'Walk')", False),
    ("seed * 2 == 6", True), ("lr / 3 < 1e-4 + 1e-9", True), ("-seed == -3", True),
    ("'Hop' in env", True),
])
def test_operator(text, expected):
    assert parse_query(text).matches(ROW) is expected


def test_names_and_metrics_are_collected():
    query = parse_query("env == 'a' and net.hidden > 1 and last('return') > 0")
    assert query.names == {"env", "net.hidden"}
    assert query.metrics == {"return"}


def test_syntax_error_shows_a_caret_at_the_position():
    with pytest.raises(QueryError) as info:
        parse_query("lr >= 1e-4 and and seed == 1")
    message = str(info.value)
    assert "Syntax error" in message
    lines = message.splitlines()
    text_line = next(line for line in lines if "lr >= 1e-4 and and" in line)
    caret_line = lines[lines.index(text_line) + 1]
    assert caret_line.index("^") == text_line.index("and seed") 


def test_single_equals_gets_a_hint():
    with pytest.raises(QueryError, match="use == \\(not =\\)"):
        parse_query("env = 'Hopper'")


@pytest.mark.parametrize("text, fragment", [
    ("__import__('os').system('echo hi')", "Unknown function"),
    ("open('x')", "Unknown function"),
    ("(lambda: 1)()", "Unknown function"),
    ("env[0] == 'H'", "Not a literal"),
    ("last(name) > 1", "one quoted metric"),
    ("env.upper() == 'X'", "Unknown function"),
    ("[x for x in y]", "Unsupported expression"),
])
def test_constructs_outside_the_grammar_are_rejected(text, fragment):
    with pytest.raises(QueryError, match=fragment):
        parse_query(text)


def test_empty_query_is_an_error():
    with pytest.raises(QueryError, match="Empty query"):
        parse_query("   ")


def test_bad_regex_in_matches_is_an_error():
    with pytest.raises(QueryError, match="Bad regular expression"):
        parse_query("matches(env, '(')")
