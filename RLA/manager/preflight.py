"""Checks ``configure()`` runs before any run folder exists: LOG_USED formats and the checkpoint backend.

A typo in ``LOG_USED`` or a ``DL_FRAMEWORK`` whose package is missing used to surface only
after the run existed (inside ``log_files_gen()``) or after training started (at the first
``save_checkpoint``). Both are configuration mistakes, so they are reported by
``configure()``. Packages are looked up, not imported: ``configure()`` stays fast.
"""

from __future__ import annotations

import difflib

from RLA.config import RLAConfig
from RLA.errors import BackendNotInstalledError, ConfigError, MissingBackendError


def _origin(config: RLAConfig) -> str:
    return str(config.source) if config.source is not None else "<config dict>"


def check_log_used(config: RLAConfig) -> None:
    """Every ``LOG_USED`` name is a registered output format whose package is installed.

    Raises:
        ConfigError: an unknown format (with a did-you-mean hint).
        MissingBackendError: a format whose package is missing (e.g. tensorboardX).
    """
    from RLA.logger.formats import output_formats

    for name in config.log_used:
        if name not in output_formats:
            known = output_formats.names()
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"{_origin(config)}: LOG_USED names an unknown output format {name!r}",
                expected=f"names among {', '.join(known)}",
                found=repr(name),
                fix=f"{hint}fix LOG_USED (a custom format is registered with "
                "RLA.logger.register_output_format before configure())",
            )
        try:
            output_formats.check_installed(name)
        except BackendNotInstalledError as exc:
            raise MissingBackendError(
                f"{_origin(config)}: LOG_USED has {name!r}, whose package is not installed",
                expected=exc.expected,
                found=exc.found,
                fix=exc.fix,
            ) from None


def check_backend(config: RLAConfig) -> None:
    """The checkpoint backend of ``DL_FRAMEWORK`` is installed.

    Raises:
        MissingBackendError: e.g. ``DL_FRAMEWORK: torch`` without PyTorch.
    """
    from RLA.checkpoint.registry import backend_for_framework, backends

    backend = backend_for_framework(config.DL_FRAMEWORK)
    try:
        backends.check_installed(backend)
    except BackendNotInstalledError as exc:
        raise MissingBackendError(
            f"{_origin(config)}: DL_FRAMEWORK is {config.DL_FRAMEWORK!r}, but its "
            f"checkpoint backend {backend!r} is not installed",
            expected=exc.expected,
            found=exc.found,
            fix=exc.fix,
        ) from None


def check_config(config: RLAConfig) -> None:
    """Everything a run of ``config`` needs that can be known before the run exists."""
    check_log_used(config)
    check_backend(config)
