"""Read the original RLA's pickled run state (``archive_tester/<name>.pkl``) without running code.

Pickles are never read unless the user opts in (``ExperimentLoader(trust_pickles=True)`` or
``rla migrate --convert-legacy-state``). Even then only this restricted unpickler reads
them: it rebuilds builtins, a few stdlib value types, numpy scalars and the original's
state classes (as inert :class:`LegacyObject` attribute bags, never the real classes);
any other global in the stream is refused with :class:`LegacyStateError` before it is
looked up, so a crafted file cannot call anything.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import io
import pickle
from pathlib import Path
from typing import Any, Dict, Tuple, cast

from RLA.errors import RLAError
from RLA.safe_read import read_bytes

#: Largest legacy state file read (a pickled Tester is a few kB; replay buffers in
#: related_variable made some bigger).
MAX_PICKLE_BYTES = 64 * 1024 * 1024


class LegacyStateError(RLAError):
    """A legacy pickle holds something the restricted unpickler does not rebuild."""


class LegacyObject:
    """An instance of one of the original's classes, as a plain bag of attributes."""

    legacy_class = "?"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        del args, kwargs  # constructor arguments of NEWOBJ: the state comes via __setstate__

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) == 2:  # (dict, slots)
            state = {**(state[0] or {}), **(state[1] or {})}
        if not isinstance(state, dict):
            raise LegacyStateError(
                "A legacy object has a state that is not a dict",
                expected="a dict of attributes",
                found=type(state).__name__,
                fix="convert this run by hand (see the manual's Compatibility section)",
            )
        self.__dict__.update({str(k): v for k, v in state.items()})

    def attribute(self, name: str, default: Any = None) -> Any:
        """An attribute, also under the original's private name mangling (``_Tester__x``)."""
        if name in self.__dict__:
            return self.__dict__[name]
        return self.__dict__.get(f"_{self.legacy_class}__{name.lstrip('_')}", default)


def _legacy_class(name: str) -> type:
    return type(name, (LegacyObject,), {"legacy_class": name})


#: The original's classes found in its pickled state (both repositories).
LEGACY_CLASSES: Dict[Tuple[str, str], type] = {
    ("RLA.easy_log.tester", "Tester"): _legacy_class("Tester"),
    ("RLA.easy_log.time_step", "TimeStepHolder"): _legacy_class("TimeStepHolder"),
    ("RLA.easy_log.exp_loader", "ExperimentLoader"): _legacy_class("ExperimentLoader"),
}

_SAFE_BUILTINS = {
    "dict",
    "list",
    "tuple",
    "set",
    "frozenset",
    "bytearray",
    "bytes",
    "str",
    "int",
    "float",
    "complex",
    "bool",
    "slice",
    "range",
    "object",
}


def _load_type(name: str) -> type:
    """dill's ``_load_type`` for builtin types only."""
    safe = {
        "DequeType": collections.deque,
        "OrderedDictType": collections.OrderedDict,
        "NoneType": type(None),
        **{t: getattr(__import__("builtins"), t) for t in _SAFE_BUILTINS},
    }
    if name not in safe:
        raise LegacyStateError(
            f"Legacy state refers to the type {name!r}",
            expected=f"one of {sorted(safe)}",
            found=name,
            fix="this is not a state file of the original RLA; do not trust it",
        )
    return safe[name]


def _reconstructor(cls: type, base: type, state: Any) -> Any:
    """``copyreg._reconstructor`` restricted to the allowed classes (protocols 0 and 1)."""
    if base is not object:
        raise LegacyStateError(
            "Legacy state rebuilds an object from a builtin base",
            expected="object",
            found=repr(base),
            fix="do not trust this file",
        )
    return cast(Any, cls).__new__(cls)  # the class's own __new__, as copyreg does


def _latin1_bytes(text: str, encoding: str = "latin1") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for bytes (latin-1 text only)."""
    if encoding.replace("-", "").lower() != "latin1" or not isinstance(text, str):
        raise LegacyStateError(
            "Legacy state calls _codecs.encode",
            expected="latin1 text (bytes of protocol 2)",
            found=repr(encoding),
            fix="do not trust this file",
        )
    return text.encode("latin1")


def _allowed() -> Dict[Tuple[str, str], Any]:
    import numpy as np

    allowed: Dict[Tuple[str, str], Any] = {
        ("builtins", name): getattr(__import__("builtins"), name) for name in _SAFE_BUILTINS
    }
    allowed.update({("__builtin__", name): value for (_, name), value in list(allowed.items())})
    allowed.update(
        {
            ("collections", "deque"): collections.deque,
            ("collections", "OrderedDict"): collections.OrderedDict,
            ("collections", "defaultdict"): collections.defaultdict,
            ("datetime", "datetime"): datetime.datetime,
            ("datetime", "date"): datetime.date,
            ("datetime", "timedelta"): datetime.timedelta,
            ("datetime", "timezone"): datetime.timezone,
            ("argparse", "Namespace"): argparse.Namespace,
            ("copyreg", "_reconstructor"): _reconstructor,
            ("copy_reg", "_reconstructor"): _reconstructor,
            ("dill._dill", "_load_type"): _load_type,
            ("dill.dill", "_load_type"): _load_type,
            ("numpy", "dtype"): np.dtype,
            ("_codecs", "encode"): _latin1_bytes,
        }
    )
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[(module, "scalar")] = _numpy_scalar
    allowed.update(LEGACY_CLASSES)
    return allowed


def _numpy_scalar(dtype: Any, data: bytes = b"") -> Any:
    """A numpy scalar of a plain numeric/bool dtype (object dtypes are refused)."""
    import numpy as np

    if not isinstance(dtype, np.dtype) or dtype.hasobject:
        raise LegacyStateError(
            "Legacy state holds a numpy object scalar",
            expected="a numeric numpy scalar",
            found=repr(dtype),
            fix="do not trust this file",
        )
    return np.frombuffer(bytes(data), dtype=dtype, count=1)[0]


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that only rebuilds the globals of :func:`_allowed`."""

    def __init__(self, stream: io.BytesIO) -> None:
        super().__init__(stream)
        self._allowed = _allowed()

    def find_class(self, module: str, name: str) -> Any:  # noqa: D102 - pickle's hook
        key = (module, name)
        if key not in self._allowed:
            raise LegacyStateError(
                f"Legacy state refers to {module}.{name}",
                expected="builtins, datetime/collections values, numpy scalars and the "
                "original RLA's state classes",
                found=f"{module}.{name}",
                fix="this file is not a plain state of the original RLA: it is not loaded; "
                "pass the hyper-parameters yourself (parameter.json / backup.txt)",
            )
        return self._allowed[key]

    def persistent_load(self, pid: Any) -> Any:  # noqa: D102 - pickle's hook
        raise LegacyStateError(
            "Legacy state uses persistent ids", expected="none", found=repr(pid), fix="do not trust this file"
        )


def read_legacy_pickle(path: Path) -> Any:
    """Rebuild one legacy pickle with :class:`RestrictedUnpickler`.

    Raises:
        LegacyStateError: the file refers to anything outside the allowed set, or is not a pickle.
    """
    data = read_bytes(path, MAX_PICKLE_BYTES)
    try:
        return RestrictedUnpickler(io.BytesIO(data)).load()
    except LegacyStateError:
        raise
    except Exception as exc:  # a damaged stream fails in many ways; all mean "not readable"
        raise LegacyStateError(
            f"Legacy state {path} cannot be read",
            expected="a pickle of the original RLA",
            found=f"{type(exc).__name__}: {exc}",
            fix="restore the file or load the run from parameter.json / backup.txt",
        ) from exc
