"""Declarative config fields and the generic validator of one config section."""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Type, TypeVar

from RLA.errors import ConfigError

T = TypeVar("T")


def option(
    default: Any = None,
    *,
    types: Tuple[type, ...] = (str,),
    doc: str = "",
    choices: Optional[Sequence[Any]] = None,
    aliases: Sequence[str] = (),
    secret: bool = False,
    convert: Optional[Callable[[Any], Any]] = None,
    list_of: Optional[Tuple[type, ...]] = None,
    default_factory: Any = None,
) -> Any:
    """A dataclass field carrying its validation rules in ``metadata``.

    Args:
        default: value used when the key is absent (``None`` = not set).
        types: accepted Python types of the YAML value (``None`` is always accepted).
        doc: one-line meaning, used in error messages and the default file.
        choices: allowed values (compared case-sensitively after ``convert``).
        aliases: other key names accepted for this field (e.g. the original's names).
        secret: never shown in messages or written anywhere.
        convert: applied to the value after the type check.
        list_of: for list fields, the accepted element types.
    """
    meta = {
        "types": types,
        "doc": doc,
        "choices": choices,
        "aliases": tuple(aliases),
        "secret": secret,
        "convert": convert,
        "list_of": list_of,
    }
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _type_names(types: Tuple[type, ...]) -> str:
    names = {
        bool: "a boolean (true/false)",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }
    return " or ".join(names.get(t, t.__name__) for t in types)


def _show(value: Any, secret: bool) -> str:
    if secret:
        return "<hidden>"
    return f"{value!r} ({type(value).__name__})"


def validate_section(cls: Type[T], raw: Any, source: str, prefix: str = "") -> T:
    """Build ``cls`` (a dataclass of :func:`option` fields) from the mapping ``raw``.

    Raises:
        ConfigError: unknown key (with a "did you mean" hint), wrong type or bad value;
            the message names the file, the key, what was expected and what was found.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{source}: section {prefix.rstrip('.') or '<top>'} is not a mapping",
            expected="a mapping of keys to values",
            found=f"{type(raw).__name__} {raw!r}",
            fix="indent the keys under the section name",
        )
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    lookup: Dict[str, str] = {}
    for f in fields.values():
        lookup[f.name] = f.name
        for alias in f.metadata.get("aliases", ()):
            lookup[alias] = f.name
    values: Dict[str, Any] = {}
    for key, value in raw.items():
        if key not in lookup:
            close = difflib.get_close_matches(str(key), list(lookup), n=1, cutoff=0.6)
            hint = f"did you mean {prefix}{close[0]}? " if close else ""
            raise ConfigError(
                f"{source}: unknown key {prefix}{key}",
                expected=f"one of {', '.join(prefix + k for k in sorted(lookup))}",
                found=f"{prefix}{key}",
                fix=f"{hint}remove or rename the key",
            )
        if isinstance(value, str) and not value.strip():
            continue  # the original's templates write '' for "not set": keep the default
        name = lookup[key]
        field = fields[name]
        values[name] = _check(field, _from_text(field, value), source, f"{prefix}{key}")
    return cls(**values)


def _from_text(field: dataclasses.Field, value: Any) -> Any:
    """A number written as text (the original's ``port: '22'``) for a numeric key, else ``value``."""
    types = field.metadata.get("types", (str,))
    if not isinstance(value, str) or str in types:
        return value
    for kind in (int, float):
        if kind in types:
            try:
                return kind(value.strip())
            except ValueError:
                pass
    return value


def _check(field: dataclasses.Field, value: Any, source: str, key: str) -> Any:
    meta = field.metadata
    secret = meta.get("secret", False)
    if value is None:
        return None
    types = meta.get("types", (str,))
    # bool is an int in Python: do not accept true/false where a number is expected.
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok and float in types and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if not ok:
        raise ConfigError(
            f"{source}: key {key} has the wrong type",
            expected=f"{_type_names(types)}" + (f" — {meta['doc']}" if meta.get("doc") else ""),
            found=_show(value, secret),
            fix=f"set {key} to {_type_names(types)}",
        )
    list_of = meta.get("list_of")
    if list_of and isinstance(value, list):
        for item in value:
            if not isinstance(item, list_of):
                raise ConfigError(
                    f"{source}: key {key} has an element of the wrong type",
                    expected=f"a list of {_type_names(list_of)}",
                    found=_show(item, secret),
                    fix=f"fix the elements of {key}",
                )
    convert = meta.get("convert")
    if convert is not None:
        try:
            value = convert(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"{source}: key {key} has a bad value",
                expected=meta.get("doc") or "a valid value",
                found=_show(value, secret),
                fix=str(exc),
            ) from exc
    choices = meta.get("choices")
    if choices is not None:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if item not in choices:
                close = difflib.get_close_matches(str(item), [str(c) for c in choices], n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise ConfigError(
                    f"{source}: key {key} has a bad value",
                    expected=f"one of {', '.join(repr(c) for c in choices)}",
                    found=_show(item, secret),
                    fix=f"{hint}use an allowed value",
                )
    return value


def public_dict(obj: Any) -> Dict[str, Any]:
    """The dataclass as a dict with secret fields removed (safe to log or store)."""
    out: Dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        if f.metadata.get("secret"):
            continue
        value = getattr(obj, f.name)
        out[f.name] = public_dict(value) if dataclasses.is_dataclass(value) else value
    return out
