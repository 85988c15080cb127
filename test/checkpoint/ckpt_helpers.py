"""Helpers of the checkpoint tests: a value of every supported type and a deep, typed comparison."""
from __future__ import annotations

import collections
from pathlib import Path
from typing import Any, Dict

import numpy as np


def rich_state() -> Dict[str, Any]:
    """A checkpoint state with every kind of value the codec promises to keep."""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    optim = torch.optim.Adam(net.parameters(), lr=1e-3)
    net(torch.ones(2, 3)).sum().backward()
    optim.step()
    return {
        "models": {"net": net.state_dict(), "optim": optim.state_dict()},
        "related_variable": {
            "tuple": (1, 2.5, "x", None), "set": {1, 2, 3}, "frozen": frozenset({"a"}),
            "deque": collections.deque([1, 2], maxlen=5), "bytes": b"\x00\xff",
            "int_keys": {1: "a", (2, 3): "b"}, "odict": collections.OrderedDict(b=1, a=2),
            "np_f32": np.float32(1.5), "np_i64": np.int64(-7), "np_bool": np.bool_(True),
            "arr": np.arange(6, dtype=np.int16).reshape(2, 3), "strings": np.array(["ab", "c"]),
            "big_endian": np.arange(3, dtype=">f8"), "u16": np.arange(4, dtype=np.uint16),
            "bf16": torch.arange(4, dtype=torch.bfloat16), "nan": float("nan"), "inf": float("-inf"),
            "huge_int": 2 ** 80, "complex": 1 + 2j, "path": Path("a/b"), "nested": [{"k": [1, (2,)]}],
            "empty_arr": np.zeros((0, 3)), "scalar_tensor": torch.tensor(3.0),
        },
    }


def assert_same(a: Any, b: Any, where: str = "") -> None:
    """Deep equality that also checks types, dtypes and NaN positions."""
    import torch

    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and a == b, where
    elif isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple, collections.deque)):
        assert len(a) == len(b), where
        if isinstance(a, collections.deque):
            assert a.maxlen == b.maxlen
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and a != a:
        assert b != b, where
    else:
        assert a == b, where
