"""The checkpoint tree codec: any saved value <-> a JSON skeleton plus a list of array leaves.

Backends store the skeleton (plain JSON, no pickle) and the leaves (numpy arrays and torch
tensors) in their own container. Python types survive the round trip: tuples, sets, deques,
``OrderedDict``, dicts with non-string keys, bytes, numpy scalars and arrays, torch tensors.

A tagged node looks like ``{"__rla__": "<tag>", ...}``. A plain dict whose keys are all
strings (and none is ``"__rla__"``) is stored as a JSON object.
"""

from __future__ import annotations

import base64
import collections
import json
import zlib
from pathlib import Path, PurePath
from typing import Any, Dict, List, Tuple

import numpy as np

from RLA.errors import CheckpointError

TAG = "__rla__"


def is_tensor(obj: Any) -> bool:
    """True for a torch tensor (checked without importing torch)."""
    return type(obj).__module__.startswith("torch") and hasattr(obj, "detach") and hasattr(obj, "dtype")


def leaf_bytes(leaf: Any) -> memoryview:
    """The raw bytes of an array leaf (a zero-copy view where possible)."""
    if is_tensor(leaf):
        import torch

        flat = leaf.detach().cpu().contiguous().reshape(-1)
        return memoryview(flat.view(torch.uint8).numpy()) if flat.numel() else memoryview(b"")
    arr = np.ascontiguousarray(leaf).reshape(-1)
    return arr.view(np.uint8).data if arr.size else memoryview(b"")


def leaf_crc(leaf: Any) -> int:
    """CRC-32 of a leaf's bytes; detects bit rot that zip containers do not check."""
    return zlib.crc32(leaf_bytes(leaf)) & 0xFFFFFFFF


class Encoder:
    """Turn a value into ``(skeleton, leaves)``; one instance per saved tree."""

    def __init__(self) -> None:
        self.leaves: List[Any] = []

    def _leaf(self, kind: str, value: Any, **extra: Any) -> Dict[str, Any]:
        self.leaves.append(value)
        return {TAG: kind, "ref": len(self.leaves) - 1, **extra}

    def encode(self, obj: Any, where: str = "") -> Any:
        """The JSON skeleton of ``obj`` (array leaves are appended to ``self.leaves``)."""
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if type(obj) in (int, float):
            return obj
        if isinstance(obj, np.ndarray):
            if obj.dtype.hasobject:
                raise self._unsupported(obj, where, "a numpy array of Python objects")
            return self._leaf("ndarray", obj)
        if isinstance(obj, np.generic):
            return self._leaf("npscalar", np.asarray(obj))
        if is_tensor(obj):
            return self._leaf("tensor", obj.detach())
        if isinstance(obj, collections.OrderedDict):
            return {TAG: "odict", "items": self._pairs(obj, where)}
        if isinstance(obj, collections.defaultdict):
            return {TAG: "dict", "items": self._pairs(obj, where)}
        if isinstance(obj, dict):
            if all(type(k) is str for k in obj) and TAG not in obj:
                return {k: self.encode(v, f"{where}.{k}") for k, v in obj.items()}
            return {TAG: "dict", "items": self._pairs(obj, where)}
        if isinstance(obj, list):
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]
        if isinstance(obj, tuple):
            if type(obj).__module__.startswith("torch"):  # torch.Size
                obj = tuple(obj)
            return {TAG: "tuple", "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        if isinstance(obj, collections.deque):
            return {
                TAG: "deque",
                "maxlen": obj.maxlen,
                "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)],
            }
        if isinstance(obj, (set, frozenset)):
            items = [self.encode(v, f"{where}{{}}") for v in obj]
            return {TAG: "frozenset" if isinstance(obj, frozenset) else "set", "items": items}
        if isinstance(obj, (bytes, bytearray)):
            return {TAG: "bytes", "b64": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, complex):
            return {TAG: "complex", "re": obj.real, "im": obj.imag}
        if isinstance(obj, int):  # bool/int subclasses such as IntEnum
            return int(obj)
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, PurePath):
            return {TAG: "path", "value": str(obj)}
        if hasattr(obj, "state_dict") and callable(obj.state_dict):
            # nn.Module / optimizer / scheduler: store what load_state_dict() takes back.
            return self.encode(obj.state_dict(), where)
        if hasattr(obj, "__array__"):  # e.g. TensorFlow tensors and variables
            return self._leaf("ndarray", np.asarray(obj))
        raise self._unsupported(obj, where, type(obj).__qualname__)

    def _pairs(self, mapping: Dict[Any, Any], where: str) -> List[List[Any]]:
        return [[self.encode(k, f"{where}<key>"), self.encode(v, f"{where}.{k}")] for k, v in mapping.items()]

    @staticmethod
    def _unsupported(obj: Any, where: str, found: str) -> CheckpointError:
        return CheckpointError(
            f"Cannot store the value at {where.lstrip('.') or '<root>'} in a checkpoint",
            expected="state dicts, tensors, numpy arrays/scalars, and JSON-like values "
            "(dict, list, tuple, set, deque, str, int, float, bool, None, bytes)",
            found=found,
            fix="convert it (e.g. obj.state_dict(), np.asarray(...), or a dict of its fields)",
        )


def encode(obj: Any) -> Tuple[str, List[Any]]:
    """Encode ``obj`` as ``(skeleton JSON text, leaves)``.

    Raises:
        CheckpointError: ``obj`` contains a value that cannot be stored without pickle.
    """
    encoder = Encoder()
    skeleton = encoder.encode(obj)
    return json.dumps(skeleton, allow_nan=True, separators=(",", ":")), encoder.leaves


def decode(skeleton_text: str, leaves: List[Any]) -> Any:
    """Rebuild the value encoded by :func:`encode` from its skeleton and leaves."""

    def build(node: Any) -> Any:
        if isinstance(node, list):
            return [build(v) for v in node]
        if not isinstance(node, dict):
            return node
        tag = node.get(TAG)
        if tag is None:
            return {k: build(v) for k, v in node.items()}
        if tag == "ndarray":
            return leaves[node["ref"]]
        if tag == "npscalar":
            return np.asarray(leaves[node["ref"]])[()]
        if tag == "tensor":
            return leaves[node["ref"]]
        if tag == "odict":
            return collections.OrderedDict((build(k), build(v)) for k, v in node["items"])
        if tag == "dict":
            return {build(k): build(v) for k, v in node["items"]}
        if tag == "tuple":
            return tuple(build(v) for v in node["items"])
        if tag == "deque":
            return collections.deque((build(v) for v in node["items"]), maxlen=node["maxlen"])
        if tag == "set":
            return {build(v) for v in node["items"]}
        if tag == "frozenset":
            return frozenset(build(v) for v in node["items"])
        if tag == "bytes":
            return base64.b64decode(node["b64"])
        if tag == "complex":
            return complex(node["re"], node["im"])
        if tag == "path":
            return Path(node["value"])
        raise ValueError(f"unknown checkpoint tag {tag!r}")

    return build(json.loads(skeleton_text))
