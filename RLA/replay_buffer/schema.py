"""The declared field schema of a replay buffer: names, dtypes, shapes and batch conversion.

Nested batches (``{"next": {"obs": ...}}``) are flattened to dotted names (``"next.obs"``);
torch tensors are accepted and converted to numpy without importing torch here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Tuple

import numpy as np

from RLA.errors import ReplayBufferError

SEP = "."
#: Per-slot bookkeeping arrays stored next to the user fields (names start with "_").
META_FIELDS: Dict[str, np.dtype] = {
    "_env_id": np.dtype(np.int32),
    "_episode_id": np.dtype(np.int64),
    "_step": np.dtype(np.int64),
    "_flags": np.dtype(np.uint8),
}
FLAG_LAST = 1  # the episode ended at this step (a done key was true)
FLAG_TRUNCATED = 2  # marked truncated by an episode policy
#: Names ``ReplayBuffer.get()`` adds next to the fields (each slot's bookkeeping): a field
#: (or a nested group) of such a name would be shadowed by them, so it is refused.
RESERVED = ("env_id", "episode_id", "step")


def field_name_problem(name: object) -> str | None:
    """Why ``name`` (a flat dotted field name) cannot be a field, or None when it can."""
    if not isinstance(name, str) or not name:
        return "it is not a non-empty string"
    parts = name.split(SEP)
    if any(not part or part.startswith("_") for part in parts):
        return "a part of it is empty or starts with '_' (RLA's own arrays do)"
    if parts[0] in RESERVED:
        return f"{parts[0]!r} is reserved: get() returns each item's {', '.join(RESERVED)} under these names"
    return None


def check_field_names(names: Iterable[object]) -> None:
    """Raise :class:`ReplayBufferError` for the first name that cannot be a field."""
    for name in names:
        problem = field_name_problem(name)
        if problem is not None:
            raise ReplayBufferError(
                f"Bad field name {name!r}: {problem}",
                expected=f"names without a leading '_', not {' / '.join(RESERVED)} at the top level",
                found=repr(name),
                fix="rename your field (e.g. 'step' -> 'env_step')",
            )


def dtype_to_json(dt: np.dtype) -> Any:
    """A JSON value ``np.dtype()`` rebuilds ``dt`` from: the type string, or for a structured
    dtype (whose string, ``|V20``, would lose its fields) numpy's names / formats / offsets
    form; a sub-array format is written ``"(2,)<f8"``."""
    if dt.fields is None and dt.subdtype is None:
        return dt.str
    if dt.fields is None:
        assert dt.subdtype is not None  # a sub-array dtype (the plain case returned above)
        base, shape = dt.subdtype
        inner = dtype_to_json(base)
        if isinstance(inner, str):
            return f"{tuple(shape)}{inner}"
        return {"base": inner, "shape": list(shape)}
    names = list(dt.names or ())
    return {
        "names": names,
        "formats": [dtype_to_json(dt.fields[n][0]) for n in names],
        "offsets": [dt.fields[n][1] for n in names],
        "itemsize": dt.itemsize,
    }


def dtype_from_json(value: Any) -> np.dtype:
    """Inverse of :func:`dtype_to_json` (also reads the plain strings of older snapshots)."""
    if isinstance(value, Mapping) and "base" in value:
        return np.dtype((dtype_from_json(value["base"]), tuple(value["shape"])))
    if isinstance(value, Mapping):
        return np.dtype(
            {
                "names": value["names"],
                "formats": [dtype_from_json(f) for f in value["formats"]],
                "offsets": value["offsets"],
                "itemsize": value["itemsize"],
            }
        )
    return np.dtype(value)


@dataclass(frozen=True)
class FieldSpec:
    """One field: flat dotted ``name``, numpy ``dtype`` and per-item ``shape``."""

    name: str
    dtype: np.dtype
    shape: Tuple[int, ...]

    @property
    def item_bytes(self) -> int:
        """Bytes of one item of this field."""
        return int(self.dtype.itemsize * int(np.prod(self.shape, dtype=np.int64)))

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "dtype": dtype_to_json(self.dtype), "shape": list(self.shape)}


def is_torch(x: Any) -> bool:
    """True for a torch tensor (checked by type name, so torch is never imported here)."""
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def to_numpy(x: Any) -> np.ndarray:
    """Convert a torch tensor, list or array to a numpy array (no copy when possible)."""
    if is_torch(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def to_torch(x: np.ndarray) -> Any:
    """Convert a numpy array to a torch tensor (imports torch lazily)."""
    import torch

    if x.dtype.kind in "US":  # strings have no tensor type; keep them as numpy
        return x
    return torch.from_numpy(np.ascontiguousarray(x))


def flatten(batch: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    """Flatten a nested mapping to ``{"a.b": value}``."""
    flat: Dict[str, Any] = {}
    for key, value in batch.items():
        if not isinstance(key, str) or SEP in key or key.startswith("_") or not key:
            raise ReplayBufferError(
                f"Bad field name {key!r}",
                expected="a non-empty string without '.' that does not start with '_'",
                found=repr(key),
                fix="rename the field",
            )
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, name + SEP))
        else:
            flat[name] = value
    return flat


def unflatten(flat: Mapping[str, Any]) -> Dict[str, Any]:
    """Inverse of :func:`flatten`."""
    out: Dict[str, Any] = {}
    for name, value in flat.items():
        node = out
        parts = name.split(SEP)
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


def _spec_entry(name: str, entry: Any) -> FieldSpec:
    if isinstance(entry, Mapping) and "dtype" in entry:
        shape, dtype = entry.get("shape", ()), entry["dtype"]
    elif isinstance(entry, (tuple, list)) and len(entry) == 2:
        shape, dtype = entry
    else:
        raise ReplayBufferError(
            f"Bad schema entry for field {name!r}",
            expected="(shape, dtype) or {'shape': ..., 'dtype': ...}",
            found=repr(entry),
            fix="declare every field with a shape and a numpy dtype",
        )
    if isinstance(shape, int):
        shape = (shape,)
    dt = np.dtype(dtype)
    if dt.hasobject:
        raise ReplayBufferError(
            f"Field {name!r} has an object dtype",
            expected="a fixed-size numpy dtype",
            found=str(dt),
            fix="encode the values as numbers or fixed-width strings ('U32')",
        )
    return FieldSpec(name, dt, tuple(int(s) for s in shape))


class Schema:
    """An ordered set of :class:`FieldSpec` (user fields only; meta fields are implicit)."""

    def __init__(self, fields: Iterable[FieldSpec]) -> None:
        fields = list(fields)
        check_field_names(f.name for f in fields)
        self.fields: Dict[str, FieldSpec] = {f.name: f for f in fields}
        if len(self.fields) != len(fields):
            raise ReplayBufferError(
                "A field is declared twice",
                expected="unique field names",
                found=repr([f.name for f in fields]),
                fix="rename your field",
            )
        if not self.fields:
            raise ReplayBufferError(
                "Empty schema",
                expected="at least one field",
                found="no fields",
                fix="declare the fields you store",
            )

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> "Schema":
        """Build from a nested mapping of ``name -> (shape, dtype)`` or sub-mappings."""
        fields: List[FieldSpec] = []

        def walk(node: Mapping[str, Any], prefix: str) -> None:
            for key, value in node.items():
                name = prefix + key
                if isinstance(value, Mapping) and "dtype" not in value:
                    walk(value, name + SEP)
                else:
                    fields.append(_spec_entry(name, value))

        walk(spec, "")
        for f in fields:
            flatten({f.name.replace(SEP, "x"): 0})  # validates characters
        return cls(fields)

    @classmethod
    def infer(cls, batch: Mapping[str, Any]) -> "Schema":
        """Infer the schema from a first batch (leading dimension = batch)."""
        flat = flatten(batch)
        fields = []
        for name, value in flat.items():
            arr = to_numpy(value)
            if arr.ndim == 0:
                raise ReplayBufferError(
                    f"Field {name!r} has no batch dimension",
                    expected="arrays of shape (B, ...)",
                    found=f"a scalar {arr!r}",
                    fix="add a leading batch dimension",
                )
            fields.append(_spec_entry(name, (arr.shape[1:], arr.dtype)))
        return cls(fields)

    @classmethod
    def from_json(cls, data: List[Mapping[str, Any]]) -> "Schema":
        return cls(FieldSpec(d["name"], dtype_from_json(d["dtype"]), tuple(d["shape"])) for d in data)

    def to_json(self) -> List[Dict[str, Any]]:
        return [f.to_json() for f in self.fields.values()]

    def all_fields(self) -> List[FieldSpec]:
        """User fields followed by the meta fields, in storage order."""
        meta = [FieldSpec(n, d, ()) for n, d in META_FIELDS.items()]
        return list(self.fields.values()) + meta

    @property
    def item_bytes(self) -> int:
        """Bytes of one stored item, meta fields included."""
        return sum(f.item_bytes for f in self.all_fields())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        body = ", ".join(f"{f.name}: {f.dtype.str}{list(f.shape)}" for f in self.fields.values())
        return f"Schema({body})"

    def convert(self, batch: Mapping[str, Any]) -> Tuple[Dict[str, np.ndarray], int, bool]:
        """Check ``batch`` against the schema and return ``(flat arrays, B, had_torch)``."""
        flat = flatten(batch)
        missing = sorted(set(self.fields) - set(flat))
        extra = sorted(set(flat) - set(self.fields))
        if missing or extra:
            raise ReplayBufferError(
                "Batch fields do not match the buffer schema",
                expected=f"fields {sorted(self.fields)}",
                found=f"missing {missing}, unexpected {extra}",
                fix="add exactly the declared fields (nested dicts allowed)",
            )
        out: Dict[str, np.ndarray] = {}
        had_torch = False
        size = None
        for name, spec in self.fields.items():
            value = flat[name]
            had_torch = had_torch or is_torch(value)
            arr = to_numpy(value)
            if arr.shape[1:] != spec.shape or arr.ndim != len(spec.shape) + 1:
                raise ReplayBufferError(
                    f"Field {name!r} has the wrong shape",
                    expected=f"(B, {', '.join(map(str, spec.shape))})".replace(", )", ")"),
                    found=str(tuple(arr.shape)),
                    fix="reshape the data or declare another shape",
                )
            bool_ok = spec.dtype.kind == "b" and arr.dtype.kind in "iub"
            if not bool_ok and not np.can_cast(arr.dtype, spec.dtype, casting="same_kind"):
                raise ReplayBufferError(
                    f"Field {name!r} has an incompatible dtype",
                    expected=str(spec.dtype),
                    found=str(arr.dtype),
                    fix="cast the data or declare another dtype",
                )
            if size is None:
                size = arr.shape[0]
            elif arr.shape[0] != size:
                raise ReplayBufferError(
                    "Batch fields have different lengths",
                    expected=f"{size} items in every field",
                    found=f"{arr.shape[0]} items in {name!r}",
                    fix="pass aligned arrays",
                )
            out[name] = arr
        return out, int(size or 0), had_torch
