"""The SQL compiled from a ``where`` agrees with the Python evaluator (the reference).

For random expressions over a corpus of runs with every kind of value (numbers, numbers
written as text, booleans, None, lists, nested and shadowing keys, NaN, missing keys,
ended/running/legacy runs, archived runs, missing metrics): the rows SQL says *must* match
are a subset of the Python rows, which are a subset of the rows SQL says *may* match; when
the compiler claims exactness the SQL rows are the Python rows; and ``select_runs`` returns
exactly the Python rows.
"""
from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import List, Set, Tuple

import pytest

from RLA.query import Catalog, parse_query, select_runs
from RLA.query.sqlwhere import compile_query
from RLA.query.testing import make_run

NAMES = ["env", "algo", "lr", "seed", "flag", "note", "net.hidden", "tags", "task", "status", "archived",
         "missing", "index", "host"]
METRICS = ["return", "loss", "absent"]
LITERALS = [repr(v) for v in [0, 1, -1, 2, 1e-3, 2e-3, 0.5, 3, 64, 2 ** 60, "Hopper", "sac", "1", "0.001", "abc",
                              "", "nan", "finished", "running", "unknown", "mixed", True, False, None, [1, 2],
                              ["sac", "td3"], [], [0.001, "Hopper"]]] + ["1e999", "-1e999"]
OPS = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agree") / "data"
    when = dt.datetime(2026, 3, 1, 8, 0, 0)
    values = [
        {"env": "Hopper", "algo": "sac", "lr": 1e-3, "seed": 0, "flag": True, "net": {"hidden": 64}},
        {"env": "Walker", "algo": "td3", "lr": 2e-3, "seed": 1, "flag": False, "note": "abc"},
        {"env": "Hopper", "algo": "sac", "lr": "0.001", "seed": "1", "flag": 1, "note": ""},
        {"env": ["Hopper", "Ant"], "algo": "ppo", "lr": None, "seed": True, "tags": [1, 2]},
        {"env": "Ant", "algo": "sac", "lr": float("nan"), "seed": 2, "note": "nan"},
        {"env": "1", "algo": 3, "lr": 1, "seed": 1.0, "flag": "True", "status": "mixed"},
        {"env": "Hopper", "algo": "td3", "lr": 2 ** 60, "seed": -1, "task": "shadow", "archived": 1},
        {"env": "Ant", "algo": "ppo", "lr": 0.5, "seed": 3, "tags": ["sac", "td3"], "net": {"hidden": "64"}},
        {"algo": "sac", "seed": 4, "empty": {}},
    ]
    for i, params in enumerate(values):
        make_run(root, task="agree" if i % 3 else "agree/sub", params=params, tracked=["seed"],
                 curves={"return": [0.0, 10.0 * i - 20], **({"loss": [1.0, 0.5 * i]} if i % 2 else {})},
                 when=when + dt.timedelta(hours=i), status=["finished", "crashed", "killed", "running"][i % 4],
                 archived=i == 7)
    make_run(root, task="agree", params={"env": "Hopper", "algo": "sac", "lr": 0.01, "seed": 5},
             curves={"return": [1.0]}, style="original", when=when + dt.timedelta(days=1))
    make_run(root, task="agree", params={"env": "Walker", "seed": 6}, style="backup", when=when + dt.timedelta(days=2))
    return root


def _random_term(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.55:
        left = rng.choice(NAMES)
    elif kind < 0.8:
        left = f"{rng.choice(['last', 'min', 'max'])}('{rng.choice(METRICS)}')"
    else:
        left = rng.choice(LITERALS)
    op = rng.choice(OPS)
    right = rng.choice(LITERALS)
    if rng.random() < 0.15:
        left, right = right, left  # literal on the left
    if rng.random() < 0.1:
        return rng.choice(NAMES) if rng.random() < 0.5 else f"last('{rng.choice(METRICS)}')"
    if rng.random() < 0.05:
        return f"0 < {rng.choice(['lr', 'seed'])} <= {rng.choice([1, 2, 0.5])}"
    return f"{left} {op} {right}"


def random_expression(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth >= 3 or roll < 0.45:
        return _random_term(rng)
    if roll < 0.6:
        return f"not ({random_expression(rng, depth + 1)})"
    word = "and" if roll < 0.8 else "or"
    return f"({random_expression(rng, depth + 1)}) {word} ({random_expression(rng, depth + 1)})"


def _sql_keys(catalog: Catalog, sql: str, args: Tuple) -> Set[str]:
    return {key for (key,) in catalog.conn.execute(f"SELECT key FROM runs WHERE {sql}", args)}


def _python_keys(rows: List, text: str) -> Set[str]:
    query = parse_query(text)
    return {("arc:" if row.layout.archived else "") + row.layout.relative for row in rows
            if query.matches(row.view())}


@pytest.mark.timeout(300)
def test_sql_and_python_select_the_same_runs_on_random_expressions(corpus: Path) -> None:
    rng = random.Random(23)
    with Catalog(corpus) as catalog:
        everything = select_runs(catalog, archived=None).runs
        inexact = {key for (key,) in catalog.conn.execute("SELECT key FROM runs WHERE exact = 0")}
        assert inexact  # the corpus has values SQLite cannot hold exactly (NaN, 2**60)
        exact_count = 0
        for _ in range(400):
            text = random_expression(rng)
            (may, may_args), (must, must_args) = compile_query(parse_query(text))
            expected = _python_keys(everything, text)
            may_keys, must_keys = _sql_keys(catalog, may, may_args), _sql_keys(catalog, must, must_args)
            assert must_keys <= expected <= may_keys, text
            if may[len("(exact = 0 OR "):] == must[len("(exact = 1 AND "):] and may_args == must_args:
                exact_count += 1
                assert may_keys - inexact == expected - inexact, text
            got = {("arc:" if r.layout.archived else "") + r.layout.relative
                   for r in select_runs(catalog, where=text, archived=None).runs} if _names_known(text) else None
            assert got is None or got == expected, text
        assert exact_count >= 120  # a good share of random expressions is decided by SQL alone


def _names_known(text: str) -> bool:
    """select_runs refuses a name no run has (``missing``, ``absent``): compare the others."""
    return "missing" not in text and "absent" not in text


@pytest.mark.timeout(120)
@pytest.mark.parametrize("text, expected", [
    ("lr == 0.001", {0, 2}), ("seed == 1", {1, 2, 3, 5}), ("seed == '1'", {1, 2, 3, 5}),
    ("lr is None", {3, 8}), ("flag", {0, 2}), ("env in ['Ant', 'Walker']", {1, 4, 7}),
    ("last('return') > 0", {3, 4, 5, 6, 7, 8}), ("status == 'mixed'", {5}), ("task == 'shadow'", {6}),
    ("not net.hidden == 64", {1, 2, 3, 4, 5, 6, 8}),  # run 7 has the text "64"
])
def test_typed_semantics_in_sql_match_the_manual(corpus: Path, text: str, expected: Set[int]) -> None:
    # Run i of the corpus started at 08:00 + i hours; the two legacy runs are left out here.
    rows = select_runs(corpus, where=text, archived=None).runs
    hours = {row.start_time.hour - 8 for row in rows if row.start_time.day == 1}
    assert hours == expected
