"""Turn query results (numpy scalars, NaN, timestamps, tuples) into strict JSON values."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any


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
