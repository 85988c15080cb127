"""bootstrap_ci (means summed run by run, no samples x runs x points copy; percentiles from
rows sorted at once) gives the bands of the former implementation bit for bit, for the same
seed; kept here as the reference."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np
import pytest

from RLA.plot.stats import _nan_percentiles, aggregate, bootstrap_ci, final_stats, resampled_mean


def reference_percentiles(table: np.ndarray, qs: Any) -> Tuple[np.ndarray, np.ndarray]:
    """The former _nan_percentiles: np.percentile of the whole table, NaN columns through
    np.nanpercentile."""
    import warnings

    with_nan = np.isnan(table).any(axis=0)
    out = (
        np.percentile(table, qs, axis=0) if not with_nan.all() else np.full((len(qs), table.shape[1]), np.nan)
    )
    if with_nan.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[:, with_nan] = np.nanpercentile(table[:, with_nan], qs, axis=0)
    return out[0], out[1]


def reference(
    matrix: np.ndarray, how: str = "mean", samples: int = 1000, level: float = 0.95, seed: int = 0
) -> Tuple[np.ndarray, np.ndarray]:
    """The former bootstrap_ci: every chunk of resamples copied whole, then averaged."""
    matrix = np.asarray(matrix, dtype=float)
    runs, points = matrix.shape
    rng = np.random.default_rng(seed)
    chunk = max(1, int(4e6 // max(1, runs * points)))
    has_nan = bool(np.isnan(matrix).any())
    stats = []
    for start in range(0, samples, chunk):
        size = min(chunk, samples - start)
        sample = matrix[rng.integers(0, runs, size=(size, runs))]
        stats.append(sample.mean(axis=1) if how == "mean" and not has_nan else aggregate(sample, how, axis=1))
    alpha = (1 - level) / 2 * 100
    return reference_percentiles(np.concatenate(stats, axis=0), [alpha, 100 - alpha])


def _matrix(runs: int, points: int, seed: int, nan: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # Values of very different sizes: any change in the order of the additions shows in the bits.
    matrix = rng.normal(size=(runs, points)) * 10.0 ** rng.integers(-8, 9, size=(runs, points))
    if nan:
        matrix[rng.random((runs, points)) < 0.2] = np.nan
    return matrix


def _bits(pair: Tuple[np.ndarray, np.ndarray]) -> Tuple[bytes, bytes]:
    return np.asarray(pair[0]).tobytes(), np.asarray(pair[1]).tobytes()


@pytest.mark.parametrize(
    "runs, points, samples",
    [(20, 300, 200), (3, 7, 333), (9, 2, 50), (17, 5, 1), (1, 40, 20), (2, 3, 101), (8, 1, 200), (40, 1, 64)],
)
@pytest.mark.parametrize("how", ["mean", "median", "iqm"])
def test_bootstrap_ci_is_bit_identical_to_the_reference(
    runs: int, points: int, samples: int, how: str
) -> None:
    for seed, nan in ((0, False), (3, False), (5, True)):
        matrix = _matrix(runs, points, seed * 11 + runs, nan)
        got = bootstrap_ci(matrix, how, samples=samples, seed=seed)
        assert _bits(got) == _bits(reference(matrix, how, samples=samples, seed=seed))


def test_chunked_resampling_keeps_the_reference_draws() -> None:
    # 4e6 // (401 * 700) = 14 resamples a chunk: 50 samples are 14, 14, 14 and 8.
    matrix = _matrix(401, 700, 1)
    got = bootstrap_ci(matrix, "mean", samples=50, seed=42)
    assert _bits(got) == _bits(reference(matrix, "mean", samples=50, seed=42))


def test_resampled_mean_adds_in_numpys_order() -> None:
    matrix = _matrix(30, 4, 2)
    picks = np.random.default_rng(0).integers(0, 30, size=(64, 30))
    assert resampled_mean(matrix, picks).tobytes() == matrix[picks].mean(axis=1).tobytes()


def test_final_stats_ci_unchanged() -> None:
    scores = _matrix(25, 1, 4)[:, 0]
    low, high = reference(scores.reshape(-1, 1), "mean", samples=1000, seed=0)
    stats = final_stats(scores)
    assert (stats["ci_low"], stats["ci_high"]) == (float(low[0]), float(high[0]))


def _table(rows: int, columns: int, rng: np.random.Generator) -> np.ndarray:
    """Resample-like values with ties, infinities, NaN and zeros of both signs in some columns."""
    table = rng.normal(size=(rows, columns)) * 10.0 ** rng.integers(-5, 5, size=(rows, columns))
    if rng.random() < 0.3:
        table = np.round(table)  # ties
    for value in (np.inf, -np.inf, np.nan, -0.0, 0.0):
        if rng.random() < 0.25:
            column = rng.integers(0, columns)
            table[rng.random(rows) < rng.random() * 0.5, column] = value
    return table


@pytest.mark.parametrize("rows", [1, 2, 3, 40, 1000, 1999])
def test_percentiles_of_sorted_rows_equal_numpys(rows: int) -> None:
    rng = np.random.default_rng(rows)
    for trial in range(40 if rows < 100 else 8):
        table = _table(rows, int(rng.integers(1, 12)), rng)
        alpha = float(rng.choice([2.5, 0.0, 50.0, 5.0, 33.3, 0.1, rng.random() * 100]))
        qs = [alpha, 100 - alpha]
        assert _bits(_nan_percentiles(table, qs)) == _bits(reference_percentiles(table, qs)), trial


def test_zeros_of_both_signs_keep_numpys_choice() -> None:
    # A SIMD sort may turn +0.0 into -0.0 when both are present: such columns keep numpy's way.
    column = np.array([-1.0, 0.0, -0.0, 0.0, 2.0] * 20)
    table = np.stack([column, np.roll(column, 1), np.abs(column)], axis=1)
    for qs in ([50.0, 50.0], [25.0, 75.0], [30.0, 70.0]):
        assert _bits(_nan_percentiles(table, qs)) == _bits(reference_percentiles(table, qs))


def test_ci_of_a_chart_sized_group_is_unchanged() -> None:
    matrix = _matrix(20, 512, 9)  # a 20-seed group on the dashboard's 512-point grid
    assert _bits(bootstrap_ci(matrix, "mean", samples=1000, seed=0)) == _bits(
        reference(matrix, "mean", seed=0)
    )
