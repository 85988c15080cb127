"""A small named registry of plug-ins with lazy (dotted-path) entries and entry-point discovery."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Dict, Generic, Iterable, List, Optional, Sequence, Tuple, TypeVar, Union

from RLA.errors import BackendNotInstalledError, RLAError

T = TypeVar("T")


class Registry(Generic[T]):
    """Map names to plug-ins (classes or factories).

    Entries may be given as dotted paths (``"pkg.module:Name"``) so that optional heavy
    dependencies are imported only when the plug-in is used. Third-party packages can add
    entries through the ``entry_point_group`` of their distribution metadata.

    Args:
        kind: human-readable kind of plug-in, used in messages ("output format").
        entry_point_group: ``importlib.metadata`` group scanned once on first lookup.
    """

    def __init__(self, kind: str, entry_point_group: Optional[str] = None) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._entries: Dict[str, Union[T, str]] = {}
        self._hints: Dict[str, str] = {}
        self._requires: Dict[str, Tuple[str, ...]] = {}
        self._scanned = entry_point_group is None

    def register(
        self,
        name: str,
        obj: Union[T, str],
        install_hint: str = "",
        override: bool = False,
        requires: Sequence[str] = (),
    ) -> None:
        """Add ``obj`` under ``name``; refuses to silently replace an existing entry.

        Args:
            install_hint: the ``fix`` shown when the plug-in's package is missing.
            requires: top-level modules the plug-in imports when used; :meth:`check_installed`
                looks for them without importing them.
        """
        if not override and name in self._entries and self._entries[name] is not obj:
            raise RLAError(
                f"A {self.kind} named {name!r} is already registered",
                expected="a new name",
                found=f"{name!r} -> {self._entries[name]!r}",
                fix="pick another name or pass override=True",
            )
        self._entries[name] = obj
        if install_hint:
            self._hints[name] = install_hint
        self._requires[name] = tuple(requires)

    def unregister(self, name: str) -> None:
        """Remove ``name`` if present."""
        self._entries.pop(name, None)
        self._hints.pop(name, None)
        self._requires.pop(name, None)

    def decorator(self, name: str) -> Callable[[T], T]:
        """``@registry.decorator("name")`` registers the decorated class or function."""

        def wrap(obj: T) -> T:
            self.register(name, obj)
            return obj

        return wrap

    def _scan_entry_points(self) -> None:
        group_name = self.entry_point_group
        if self._scanned or group_name is None:
            return
        self._scanned = True
        try:
            group = _entry_points(group_name)
        except Exception:  # noqa: BLE001 - broken metadata must not break logging
            return
        for ep in group:
            self._entries.setdefault(ep.name, ep.value)

    def names(self) -> List[str]:
        """All registered names, sorted."""
        self._scan_entry_points()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self._scan_entry_points()
        return name in self._entries

    def get(self, name: str) -> T:
        """Return the plug-in registered as ``name``, importing it if it is a dotted path."""
        self._scan_entry_points()
        if name not in self._entries:
            import difflib

            close = difflib.get_close_matches(name, list(self._entries), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise RLAError(
                f"Unknown {self.kind} {name!r}",
                expected=f"one of {', '.join(sorted(self._entries))}",
                found=repr(name),
                fix=f"{hint}use a registered name or register yours first",
            )
        obj = self._entries[name]
        if isinstance(obj, str):
            obj = self._load(name, obj)
            self._entries[name] = obj
        return obj

    def check_installed(self, name: str) -> None:
        """Raise when ``name`` is unknown or a module it requires cannot be found.

        Cheap: the modules are looked up (``importlib.util.find_spec``), not imported.

        Raises:
            RLAError: unknown name (with a did-you-mean hint).
            BackendNotInstalledError: a required module is not installed.
        """
        import importlib.util

        if name not in self:
            self.get(name)  # raises the unknown-name error
        for module in self._requires.get(name, ()):
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                raise BackendNotInstalledError(
                    f"The {self.kind} {name!r} needs {module}, which is not installed",
                    expected=f"module {module} importable",
                    found=f"no module named {module!r}",
                    fix=self._hints.get(name, f"install the package providing {module}"),
                )

    def _load(self, name: str, dotted: str) -> Any:
        module_name, _, attr = dotted.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            hint = self._hints.get(name, f"install the package providing {module_name}")
            raise BackendNotInstalledError(
                f"The {self.kind} {name!r} needs a package that is not installed",
                expected=f"module {module_name} importable",
                found=str(exc),
                fix=hint,
            ) from exc
        return getattr(module, attr) if attr else module


def _entry_points(group: str) -> Iterable[Any]:
    """The installed entry points of ``group`` (Python 3.9's ``entry_points()`` is a dict)."""
    from importlib.metadata import entry_points

    if sys.version_info >= (3, 10):
        return entry_points(group=group)
    return entry_points().get(group, [])
