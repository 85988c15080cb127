"""Per-run value clean-up of the original's ``plot_res_func``: ``y_bound`` and ``remove_outlier``.

The original's ``csv_to_xy`` clipped each run's values above ``y_bound`` to ``y_bound`` and,
with ``remove_outlier=True``, dropped the rows whose z-score (over that run's values of the
metric, after the clipping) is 10 or more: one-sided, only values far above the run's mean
go. Fixed: a run whose values are all equal (standard deviation 0) or that has a single row
keeps its rows (the original's z-score was NaN there and dropped every row).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

OUTLIER_Z = 10.0


@dataclass(frozen=True)
class ValueFilter:
    """Clip values above ``y_bound``, then drop one-sided z-score outliers (``z >= z_limit``)."""

    y_bound: float | None = None
    remove_outlier: bool = False
    z_limit: float = OUTLIER_Z

    def __call__(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(x, y)`` of one run after the clipping and the outlier filter."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if self.y_bound is not None:
            y = np.minimum(y, float(self.y_bound))
        if not self.remove_outlier or y.size < 2:
            return x, y
        std = float(np.std(y, ddof=1))  # pandas' Series.std, as the original used
        if not np.isfinite(std) or std == 0.0:
            return x, y
        keep = (y - float(np.mean(y))) / std < self.z_limit
        return x[keep], y[keep]

    @property
    def active(self) -> bool:
        """Whether the filter changes anything."""
        return self.y_bound is not None or self.remove_outlier
