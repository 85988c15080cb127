"""RLA.text.count: a number and its noun in the form that number needs."""

from __future__ import annotations

import pytest

from RLA.text import count, plural


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 runs"), (1, "1 run"), (2, "2 runs"), (11, "11 runs"), (-1, "-1 runs")],
)
def test_count_takes_the_singular_for_exactly_one(n, expected):
    assert count(n, "run") == expected


def test_count_uses_the_given_plural_for_irregular_words():
    assert [count(n, "entry", "entries") for n in (0, 1, 3)] == ["0 entries", "1 entry", "3 entries"]
    assert count(2, "data type") == "2 data types" and count(1, "data type") == "1 data type"


def test_plural_is_the_noun_alone_and_reads_float_one_as_one():
    assert (plural(1, "day"), plural(1.0, "day"), plural(1.5, "day"), plural(0, "is", "are")) == (
        "day",
        "day",
        "days",
        "are",
    )
