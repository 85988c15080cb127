"""The ``REDACT`` section: which keys and values RLA treats as secrets in what it writes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, List

from RLA.config.fields import option
from RLA.config.remote import PASSWORD_ENV
from RLA.redaction import DEFAULT_KEY_PATTERNS, MIN_SECRET_LENGTH, RedactionPolicy


def _patterns(value: List[str]) -> List[str]:
    if any(not item.strip() for item in value):
        raise ValueError("remove the empty pattern (write globs such as '*password*')")
    return list(value)


def _env_names(value: List[str]) -> List[str]:
    for name in value:
        if not name or not name.replace("_", "a").isalnum():
            raise ValueError(f"{name!r} is not an environment variable name (letters, digits, _)")
    return list(value)


def _at_least_one(value: int) -> int:
    if value < 1:
        raise ValueError("use an integer >= 1 (the default 4 keeps short words from being blanked out)")
    return value


@dataclass(frozen=True)
class RedactSettings:
    """Secrets hidden in every file RLA writes (see :mod:`RLA.redaction`).

    ``values`` is never part of :func:`RLA.config.fields.public_dict` nor of ``repr``.
    """

    key_patterns: List[str] = option(
        types=(list,),
        list_of=(str,),
        convert=_patterns,
        default_factory=lambda: list(DEFAULT_KEY_PATTERNS),
        doc="case-insensitive globs of secret keys; replaces the default list",
    )
    values: List[str] = option(
        types=(list,),
        list_of=(str, int),
        secret=True,
        default_factory=list,
        doc="extra secret values hidden in every form (prefer REDACT.env)",
    )
    env: List[str] = option(
        types=(list,),
        list_of=(str,),
        convert=_env_names,
        default_factory=lambda: [PASSWORD_ENV],
        doc="environment variables whose values are secrets",
    )
    min_length: int = option(
        MIN_SECRET_LENGTH,
        types=(int,),
        convert=_at_least_one,
        doc="known values shorter than this are not searched for in text",
    )

    def policy(self, extra_values: Iterable[Any] = ()) -> RedactionPolicy:
        """A new policy with these settings, the values of the ``env`` variables and ``extra_values``."""
        values = [*self.values, *(os.environ.get(name) for name in self.env), *extra_values]
        return RedactionPolicy(self.key_patterns, values, self.min_length)

    def __repr__(self) -> str:  # never show the values
        return (
            f"RedactSettings(key_patterns={self.key_patterns!r}, values=<{len(self.values)} hidden>, "
            f"env={self.env!r}, min_length={self.min_length!r})"
        )
