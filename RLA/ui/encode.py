"""Turn query results (numpy scalars, NaN, timestamps, tuples) into strict JSON values."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

#: numpy dtype kinds whose 1-d arrays :func:`_numeric_list` converts at once.
NUMERIC_KINDS = ("b", "i", "u", "f")


def _numeric_list(array: Any) -> list:
    """A 1-d numeric numpy array as the list :func:`jsonable` gives item by item (one
    ``tolist`` call, then NaN/inf replaced by ``None``)."""
    import numpy as np

    out = array.tolist()
    if array.dtype.kind == "f":
        for i in np.flatnonzero(~np.isfinite(array)).tolist():
            out[i] = None
    return out


def jsonable(value: Any) -> Any:
    """A JSON-safe copy of ``value``: NaN/inf and NaT become ``None``, times ISO text.

    Strings are returned as they are: escaping is the page's job (it only ever sets
    ``textContent``), so a run name like ``<script>`` arrives as that text.
    """
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat(sep=" ") if isinstance(value, _dt.datetime) else value.isoformat()
    if (
        getattr(value, "ndim", None) == 1
        and getattr(getattr(value, "dtype", None), "kind", "") in NUMERIC_KINDS
    ):
        return _numeric_list(value)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item) and getattr(value, "shape", None) == ():
        return jsonable(item())
    isoformat = getattr(value, "isoformat", None)  # pandas Timestamp / NaT
    if callable(isoformat):
        try:
            import pandas as pd

            if pd.isna(value):
                return None
        except (ImportError, TypeError, ValueError):
            pass
        return str(isoformat(sep=" "))
    tolist = getattr(value, "tolist", None)  # numpy arrays
    if callable(tolist):
        return jsonable(tolist())
    return str(value)
