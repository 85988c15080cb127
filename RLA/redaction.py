"""The redaction policy: which keys and values are secrets, and how every artifact hides them.

One :class:`RedactionPolicy` is applied wherever RLA writes (run.json, backup.txt,
parameter.json, log.txt / stdout / warn.txt / CSV / JSON rows, TensorBoard hyper-parameters,
the resume state, the code snapshot with its git diff and copied config). It knows

* key patterns (case-insensitive globs such as ``*password*``, matched against the full
  dotted key ``db.password`` and its last component ``password``; ``-`` counts as ``_``):
  the text under such a key is replaced by :data:`MARKER` in mappings and command lines;
* known secret values (the remote password, ``REDACT.values``, environment variables named
  in ``REDACT.env`` and the text found under secret keys): every spelling an encoder gives
  them (:func:`secret_forms`) is replaced in free text and files.

Values shorter than ``min_length`` (default 4) characters are never searched for in text:
a 3-character "secret" would blank out ordinary words everywhere. Like Airflow's secrets
masker, only text is a secret: a number or boolean under a secret-looking key
(``num_tokens=512``) is kept, so it stays queryable.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import threading
import unicodedata
import urllib.parse
from typing import Any, Dict, Iterable, Iterator, List, Optional, Pattern, Sequence, Set, Tuple

#: What replaces a secret.
MARKER = "<redacted>"
#: Known values shorter than this are not searched for in text.
MIN_SECRET_LENGTH = 4
#: Keys whose text values are secrets unless ``REDACT.key_patterns`` says otherwise.
DEFAULT_KEY_PATTERNS: Tuple[str, ...] = (
    "*password*",
    "*passwd*",
    "*passphrase*",
    "*token*",
    "*secret*",
    "*api_key*",
    "*apikey*",
    "*private_key*",
    "*credential*",
    "*auth_key*",
    "*access_key*",
)

_SHELL_SAFE = re.compile(r"([^\w@%+=:,./-])")  # what bash's printf %q escapes
_SHELL_DQ = re.compile(r'(["\\$`])')
#: Learned text that is no secret: numbers and boolean / null words.
#: The password of a ``scheme://user:password@host`` URL (user may be empty, as in redis://:pw@).
_URL_PASSWORD = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:([^\s/@]+)@")
_URL_PASSWORD_BYTES = re.compile(_URL_PASSWORD.pattern.encode())
_WORD = re.compile(r"[A-Za-z_]+")
_PLAIN = re.compile(r"[-+]?(\d[\d_]*\.?\d*([eE][-+]?\d+)?|\.\d+)|true|false|none|null|yes|no|on|off", re.I)


def _yaml_double_quoted(value: str) -> List[str]:
    """The inside of PyYAML's double-quoted scalar for ``value`` (ASCII and Unicode)."""
    import yaml

    out = []
    for unicode in (False, True):
        text = yaml.safe_dump(value, default_style='"', width=1 << 30, allow_unicode=unicode)
        out.append(text[text.index('"') + 1 : text.rindex('"')])
    return out


def secret_forms(value: str) -> Set[str]:
    """Every spelling of ``value`` an encoder RLA or its user meets can produce.

    Raw; JSON (ASCII and Unicode escapes); YAML single-quoted (``'`` doubled) and
    double-quoted; CSV (``"`` doubled); shell (:func:`shlex.quote`, inside double quotes,
    backslash-escaped); URL-encoded (``quote``, ``quote_plus``); Python ``repr`` of the str
    and of its UTF-8 bytes; each of these for both Unicode normal forms (NFC, and NFD as
    macOS file names and some editors write it). Outer quotes are left off so a form also matches inside a
    longer quoted string. A multi-line value also contributes each of its lines (a diff
    prefixes them with ``+``).
    """
    forms: Set[str] = set()
    for spelling in {value, unicodedata.normalize("NFC", value), unicodedata.normalize("NFD", value)}:
        forms |= _encoded_forms(spelling)
    if "\n" in value:
        forms.update(line for line in value.splitlines() if len(line.strip()) >= MIN_SECRET_LENGTH)
    return {form for form in forms if form}


def _encoded_forms(value: str) -> Set[str]:
    """What each encoder makes of one spelling of a value (see :func:`secret_forms`)."""
    forms = {
        value,
        value.replace("'", "''"),
        value.replace('"', '""'),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        shlex.quote(value),
        _SHELL_SAFE.sub(r"\\\1", value),
        _SHELL_DQ.sub(r"\\\1", value),
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote(value),
        urllib.parse.quote_plus(value, safe=""),
        repr(value)[1:-1],
        repr(value.encode("utf-8"))[2:-1],
        *_yaml_double_quoted(value),
    }
    quoted = shlex.quote(value)
    if quoted.startswith("'") and quoted.endswith("'"):
        forms.add(quoted[1:-1])
    return forms


def _normalize_key(key: str) -> str:
    return key.strip().lower().replace("-", "_")


class RedactionPolicy:
    """Key patterns and known secret values, applied to mappings, command lines, text and files.

    Thread-safe: values learned later (:meth:`add_values`, :meth:`learn`) take effect for
    every holder of the policy (the manager hands the same object to the logger).

    Args:
        key_patterns: glob patterns of secret keys (case-insensitive).
        values: known secret values (strings; others are converted with ``str``).
        min_length: values shorter than this are not searched for in text.
    """

    def __init__(
        self,
        key_patterns: Iterable[str] = DEFAULT_KEY_PATTERNS,
        values: Iterable[Any] = (),
        min_length: int = MIN_SECRET_LENGTH,
    ) -> None:
        self.key_patterns: Tuple[str, ...] = tuple(_normalize_key(p) for p in key_patterns if str(p).strip())
        self.min_length = max(1, int(min_length))
        self._lock = threading.Lock()
        self._values: Set[str] = set()
        self._text_re: Optional[Pattern[str]] = None
        self._bytes_re: Optional[Pattern[bytes]] = None
        self.longest_form = 0
        self.add_values(values)

    # ---------------------------------------------------------------- knowledge
    @property
    def values(self) -> frozenset:
        """The known secret values long enough to be searched for."""
        return frozenset(self._values)

    def add_values(self, values: Iterable[Any]) -> None:
        """Learn more secret values (``None``, empty and too-short values are ignored)."""
        fresh = {str(v) for v in values if v is not None and not isinstance(v, bool)}
        fresh = {v for v in fresh if len(v) >= self.min_length} - self._values
        if not fresh:
            return
        with self._lock:
            self._values |= fresh
            forms = sorted({f for v in self._values for f in secret_forms(v)}, key=len, reverse=True)
            # A lookahead finds a form at every position, so overlapping secrets are all found
            # (see spans); the longest form at a position comes first.
            self._text_re = re.compile("(?=(%s))" % "|".join(map(re.escape, forms)))
            self._bytes_re = re.compile(b"(?=(%s))" % b"|".join(re.escape(f.encode("utf-8")) for f in forms))
            self.longest_form = max(len(f.encode("utf-8")) for f in forms)

    def is_secret_key(self, key: str) -> bool:
        """Whether ``key`` (dotted, or its last component) matches a key pattern."""
        full = _normalize_key(str(key)).lstrip("_")
        last = full.rsplit(".", 1)[-1]
        return any(
            fnmatch.fnmatchcase(name, pattern) for pattern in self.key_patterns for name in (full, last)
        )

    def learn(self, mapping: Any = None, argv: Optional[Sequence[str]] = None) -> None:
        """Learn the text found under secret keys of ``mapping`` and secret options of ``argv``.

        Text that reads as a number or a boolean (``--num_tokens 1024``, ``--use_token true``)
        is still hidden under its key but not searched for elsewhere: every ``1024`` of every
        log would go otherwise.
        """
        found: List[str] = []
        if mapping is not None:
            _collect(self, mapping, "", False, found)
        if argv is not None:
            found += [value for _, value, _ in _secret_options(self, argv)]
            found += [pw for arg in argv for pw in url_passwords(str(arg))]
        self.add_values(value for value in found if not _PLAIN.fullmatch(value.strip()))

    # ---------------------------------------------------------------- redaction
    def redact_text(self, text: str) -> str:
        """``text`` with every form of every known value replaced by :data:`MARKER`."""
        pattern = self._text_re
        if pattern is not None and text:
            text = substitute(pattern, text, MARKER)
        return _URL_PASSWORD.sub(_hide_url_password, text) if "://" in text else text

    @property
    def bytes_pattern(self) -> Optional[Pattern[bytes]]:
        """A lookahead of every form of every known value (UTF-8; group 1 is the form), for
        :func:`spans`; ``None`` without values."""
        return self._bytes_re

    def redact_bytes(self, data: bytes) -> bytes:
        """:meth:`redact_text` for UTF-8 bytes (any file content)."""
        pattern = self._bytes_re
        if pattern is not None and data:
            data = substitute(pattern, data, MARKER.encode())
        return _URL_PASSWORD_BYTES.sub(_hide_url_password, data) if b"://" in data else data

    def redact_mapping(self, obj: Any, prefix: str = "", by_key: bool = True) -> Any:
        """A copy of ``obj`` (dicts, lists, tuples) safe to store.

        Text under a secret key becomes :data:`MARKER` (unless ``by_key`` is false: a record
        whose own field names are not user keys); every other text (values and keys) goes
        through :meth:`redact_text`. Numbers, booleans and ``None`` are kept.
        """
        return _redact(self if by_key else _TextOnly(self), obj, prefix, False)

    def redact_argv(self, argv: Sequence[str]) -> List[str]:
        """A command line with the values of secret options hidden.

        ``--password x``, ``--password=x``, ``--api-key x`` and ``db.password=x`` (Hydra /
        Fire style) lose their value; every other argument goes through :meth:`redact_text`
        (a short option such as ``-p x`` is hidden only when ``x`` is a known value).
        """
        hidden = {index: inline for index, _, inline in _secret_options(self, argv)}
        out = []
        for index, arg in enumerate(argv):
            if index in hidden:
                out.append(f"{str(arg).partition('=')[0]}={MARKER}" if hidden[index] else MARKER)
            else:
                out.append(self.redact_text(str(arg)))
        return out


def spans(pattern: Pattern[Any], data: Any, limit: Optional[int] = None) -> Iterator[Tuple[int, int]]:
    """Merged ``(start, end)`` of every form ``pattern`` (a policy's lookahead) finds in ``data``,
    overlapping ones joined; only forms starting before ``limit``."""
    start = end = -1
    for match in pattern.finditer(data):
        if limit is not None and match.start() >= limit:
            break
        if match.start() < end:
            end = max(end, match.end(1))
            continue
        if end > start:
            yield start, end
        start, end = match.start(), match.end(1)
    if end > start:
        yield start, end


def substitute(pattern: Pattern[Any], data: Any, marker: Any) -> Any:
    """``data`` with every span of :func:`spans` replaced by ``marker`` (str or bytes)."""
    out, pos = [], 0
    for start, end in spans(pattern, data):
        out += [data[pos:start], marker]
        pos = end
    if not out:
        return data
    out.append(data[pos:])
    return data[:0].join(out)


def url_passwords(text: str) -> List[str]:
    """The passwords of ``scheme://user:password@host`` URLs in ``text``."""
    return _URL_PASSWORD.findall(text) if "://" in text else []


def _hide_url_password(match: "re.Match[Any]") -> Any:
    whole, marker = match.group(0), MARKER if isinstance(match.group(0), str) else MARKER.encode()
    cut = match.start(1) - match.start(0)
    return whole[:cut] + marker + whole[match.end(1) - match.start(0) :]


class _TextOnly:
    """A policy view whose key patterns match nothing (value-based redaction only)."""

    def __init__(self, policy: RedactionPolicy) -> None:
        self.redact_text, self.redact_bytes = policy.redact_text, policy.redact_bytes

    @staticmethod
    def is_secret_key(key: str) -> bool:
        return False


def _option_key(arg: str) -> Optional[str]:
    """The key an argument names (``--api-key`` → ``api-key``, ``+db.pw`` → ``db.pw``), if any."""
    name = arg.lstrip("-+~") if arg.startswith(("-", "+", "~")) else arg
    if not name or not re.match(r"[A-Za-z_]", name):
        return None
    return name


def _secret_options(policy: RedactionPolicy, argv: Sequence[str]) -> List[Tuple[int, str, bool]]:
    """``(index, value, inline)`` of every argument holding a secret option's value.

    ``inline``: the value follows ``=`` in the same argument (else it is the whole argument).
    """
    found: List[Tuple[int, str, bool]] = []
    index = 0
    while index < len(argv):
        arg = str(argv[index])
        head, eq, value = arg.partition("=")
        key = _option_key(head)
        if key is not None and policy.is_secret_key(key) and (eq or arg.startswith("-")):
            if eq:
                found.append((index, value, True))
            elif index + 1 < len(argv):
                index += 1  # --password VALUE: the next argument is the value
                nxt = str(argv[index])
                found.append((index, "" if nxt.startswith("--") else nxt, False))
        index += 1
    return found


def _secret_like_key(key: Any) -> bool:
    """Whether a key of a mapping under a secret key is itself a secret: any text but a plain
    word (``user``, ``client_id`` name fields; ``sk-live-42...`` is a secret)."""
    return isinstance(key, str) and not _WORD.fullmatch(key)


def _collect(policy: RedactionPolicy, obj: Any, key: str, secret: bool, out: List[str]) -> None:
    """Text under secret keys (the keys of a mapping under one too) and URL passwords anywhere."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            child = f"{key}.{k}" if key else str(k)
            if secret and _secret_like_key(k):
                out.append(k)
            _collect(policy, v, child, secret or policy.is_secret_key(child), out)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _collect(policy, item, key, secret, out)
    elif isinstance(obj, (str, bytes)):
        text = obj.decode("utf-8", "replace") if isinstance(obj, bytes) else obj
        out.extend([text] if secret else url_passwords(text))


def _redact(policy: Any, obj: Any, key: str, secret: bool) -> Any:
    if isinstance(obj, dict):
        out: Dict[Any, Any] = {}
        for k, v in obj.items():
            child = f"{key}.{k}" if key else str(k)
            new_key = policy.redact_text(k) if isinstance(k, str) else k
            if secret and _secret_like_key(k):  # {'api_keys': {'sk-live-...': 'billing'}}
                new_key = MARKER if MARKER not in out else f"{MARKER}{len(out) + 1}"
            out[new_key] = _redact(policy, v, child, secret or policy.is_secret_key(child))
        return out
    if isinstance(obj, (list, tuple)):
        items = [_redact(policy, item, key, secret) for item in obj]
        return items if isinstance(obj, list) else tuple(items)
    if isinstance(obj, (str, bytes)):
        if secret:
            return MARKER
        return policy.redact_text(obj) if isinstance(obj, str) else policy.redact_bytes(obj)
    return obj


def scrub(text: str, secret: Optional[str]) -> str:
    """``text`` with every form of one ``secret`` (of any length) replaced by :data:`MARKER`.

    For messages that may quote a credential (a transport's error); empty secrets are ignored.
    """
    if not secret:
        return text
    return RedactionPolicy(key_patterns=(), values=[secret], min_length=1).redact_text(text)


def contains_marker(obj: Any) -> bool:
    """Whether a stored value (or anything inside it) was redacted."""
    if isinstance(obj, dict):
        return any(contains_marker(k) or contains_marker(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return any(contains_marker(v) for v in obj)
    return isinstance(obj, str) and MARKER in obj


__all__ = [
    "DEFAULT_KEY_PATTERNS",
    "MARKER",
    "MIN_SECRET_LENGTH",
    "RedactionPolicy",
    "contains_marker",
    "scrub",
    "secret_forms",
]
