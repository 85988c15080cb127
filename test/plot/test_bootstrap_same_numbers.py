"""bootstrap_ci (means summed run by run, no samples x runs x points copy) gives the bands of
the former implementation bit for bit, for the same seed; kept here as the reference."""

from __future__ import annotations

from typing import Tuple

import numpy as np
import pytest

from RLA.plot.stats import _nan_percentiles, aggregate, bootstrap_ci, final_stats, resampled_mean


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
    return _nan_percentiles(np.concatenate(stats, axis=0), [alpha, 100 - alpha])


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
