"""ema_rows (every row's forward and backward passes run together) smooths each row exactly
as ema does on its own, bit for bit: rows of unequal length, gaps, infinities, short rows."""

from __future__ import annotations

import numpy as np
import pytest

from RLA.plot.resample import ema, ema_rows, stack


def _rows(rng: np.random.Generator, rows: int, points: int) -> np.ndarray:
    matrix = rng.normal(size=(rows, points)) * 10.0 ** rng.integers(-6, 6, size=(rows, points))
    for i in range(rows):
        if rng.random() < 0.5:  # its own span (runs of unequal length)
            lo = int(rng.integers(0, points))
            matrix[i, :lo] = np.nan
            matrix[i, int(rng.integers(lo, points + 1)) :] = np.nan
        if rng.random() < 0.2:
            matrix[i, rng.random(points) < 0.2] = np.nan  # gaps inside the span
        if rng.random() < 0.1:
            matrix[i, rng.random(points) < 0.2] = np.inf
    return matrix


@pytest.mark.parametrize("decay", [0.0, -1.0, 0.5, 1.0, 3.0, 50.0, 7.3])
def test_ema_rows_equals_ema_of_each_row(decay: float) -> None:
    rng = np.random.default_rng(int(decay * 10) + 11)
    for trial in range(60):
        matrix = _rows(rng, int(rng.integers(0, 9)), int(rng.integers(1, 40)))
        expected = np.vstack([ema(row, decay) for row in matrix]) if len(matrix) else matrix
        got = ema_rows(matrix, decay)
        assert got.shape == expected.shape and got.tobytes() == expected.tobytes(), trial


def test_stack_smooths_a_chart_sized_group_as_before() -> None:
    rng = np.random.default_rng(3)
    curves = [(np.arange(1000.0) * 10, rng.normal(size=1000).cumsum()) for _ in range(20)]
    grid = np.linspace(0, 9990, 512)
    raw, smooth = stack(curves, grid, 2.0)
    assert smooth.tobytes() == np.vstack([ema(row, 2.0) for row in raw]).tobytes()
    assert not np.shares_memory(smooth, raw)
