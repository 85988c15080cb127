"""The original ``RLA.utils.utils`` helpers: keyword aliases, YAML loading, small dict helpers."""

from __future__ import annotations

import functools
import platform
import warnings
from typing import Any, Callable, Dict

from RLA.const import PLATFORM_TYPE


def get_sys_type() -> str:
    """``PLATFORM_TYPE.WIN``, ``LINUX`` or ``OTHER`` for the running system."""
    system = platform.system()
    if "Windows" in system:
        return PLATFORM_TYPE.WIN
    if "Linux" in system:
        return PLATFORM_TYPE.LINUX
    return PLATFORM_TYPE.OTHER


def get_dir_seperator() -> str:
    """The path separator of this system (the original's spelling is kept)."""
    return "\\" if get_sys_type() == PLATFORM_TYPE.WIN else "/"


def rename_kwargs(func_name: str, kwargs: Dict[str, Any], aliases: Dict[str, str]) -> None:
    """Move each deprecated keyword of ``kwargs`` to its new name (warns; both is a TypeError)."""
    for alias, new in aliases.items():
        if alias not in kwargs:
            continue
        if new in kwargs:
            raise TypeError(f"{func_name} received both {alias} and {new}")
        warnings.warn(f"{alias} is deprecated; use {new}", DeprecationWarning, 3)
        kwargs[new] = kwargs.pop(alias)


def deprecated_alias(**aliases: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: accept the old keyword names ``aliases`` (``old='new'``) of a function."""

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            rename_kwargs(func.__name__, kwargs, aliases)
            return func(*args, **kwargs)

        return wrapper

    return decorator


def load_yaml(path: str) -> Any:
    """Read a YAML file safely (no Python objects are built; the file is closed)."""
    from RLA.config import read_yaml

    return read_yaml(path)


def set_or_append(dict_obj: Dict[Any, Any], key: Any, value: Any) -> None:
    """``dict_obj[key] = [value]`` the first time, then append."""
    dict_obj.setdefault(key, []).append(value)


def set_or_keep(dict_obj: Dict[Any, Any], key: Any, value: Any) -> None:
    """Set ``key`` only if it is absent."""
    dict_obj.setdefault(key, value)


def optional_set(new_val: Any, old_val: Any) -> Any:
    """``new_val`` unless it is None."""
    return new_val if new_val is not None else old_val


__all__ = [
    "get_sys_type",
    "get_dir_seperator",
    "deprecated_alias",
    "rename_kwargs",
    "load_yaml",
    "set_or_append",
    "set_or_keep",
    "optional_set",
]
