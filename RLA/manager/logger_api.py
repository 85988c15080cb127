"""What the experiment manager needs of a logger (the core logger module ``RLA.logger`` by default)."""

from __future__ import annotations

from typing import Any, Callable, Optional, Protocol, Sequence


class LoggerAPI(Protocol):
    """The logger functions the manager calls (those of the module ``RLA.logger``)."""

    def configure(
        self,
        dir: Optional[str] = ...,
        format_strs: Optional[Sequence[str]] = ...,
        *,
        hyper_params: Any = ...,
        redact: Optional[Callable[[str], str]] = ...,
        on_dump: Optional[Callable[..., Any]] = ...,
    ) -> Any:
        """Open a logger writing into ``dir`` and make it the current one."""

    def get_current(self) -> Any:
        """The current ``Logger``."""

    def reset(self) -> None:
        """Close the current logger's files."""

    def info(self, *args: Any) -> None:
        """A message at INFO level."""

    def warn(self, *args: Any) -> None:
        """A warning (also written to the run's warn.txt)."""

    def backup(self, *args: Any) -> None:
        """A line of the run's backup.txt."""

    def record_tabular(self, key: Any, val: Any) -> None:
        """One value of the next row."""


def default_logger() -> LoggerAPI:
    """The core logger module, ``RLA.logger``."""
    import RLA.logger

    return RLA.logger  # a module matches the protocol structurally (mypy checks its functions)


__all__ = ["LoggerAPI", "default_logger"]
