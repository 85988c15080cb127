"""The process's default experiment manager, read by the core without importing a face.

The face of the original API (its ``tester`` module) creates the global ``exp_manager`` and registers
it here; core code that needs "the run this process is writing" (e.g. ``ExperimentLoader``
without an explicit manager) asks :func:`default_manager`. Data flows from the face to the
core, so the core never imports the face.
"""

from __future__ import annotations

from typing import Optional

from RLA.manager.experiment import ExperimentManager

_DEFAULT: Optional[ExperimentManager] = None


def set_default_manager(manager: ExperimentManager) -> None:
    """Make ``manager`` the one :func:`default_manager` returns (the face registers ``exp_manager``)."""
    global _DEFAULT
    _DEFAULT = manager


def default_manager() -> ExperimentManager:
    """The registered default manager; a plain, unconfigured one if no face registered any yet.

    The plain manager is kept and returned on later calls until a face registers its own, so
    two callers never get two different unregistered managers.
    """
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = ExperimentManager()
    return _DEFAULT
