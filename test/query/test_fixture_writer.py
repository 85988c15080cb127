"""The fixture writer (RLA.query.testing) writes plain numbers that pandas reads as numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd

from RLA.query.testing import write_progress


def test_numpy_floats_are_written_as_plain_numbers(tmp_path):
    path = tmp_path / "progress.csv"
    write_progress(path, {"return": [np.float64(0.5), np.float32(1.5), 2.5]}, [0, 1, 2])
    assert "np." not in path.read_text()
    frame = pd.read_csv(path)
    assert frame["return"].dtype.kind == "f" and frame["return"].tolist() == [0.5, 1.5, 2.5]
