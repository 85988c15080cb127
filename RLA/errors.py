"""The one exception tree of RLA: every user-facing error derives from ``RLAError``.

::

    RLAError
    ├── ConfigError              rla_config.yaml missing, malformed or invalid
    │   └── MissingBackendError  an uninstalled backend in the config (also BackendNotInstalledError)
    ├── RunNotFoundError         no run matches an index / glob / query
    ├── RunExistsError           a run directory could not be created exclusively
    ├── RunStateError            an operation needs a run that was not created yet
    ├── HyperParameterError      a tracked or requested hyper-parameter does not exist (also KeyError)
    ├── LoggerError              bad logger usage (unknown format, bad key type)
    ├── CheckpointError          missing, corrupt or foreign checkpoint
    ├── QueryError               a query expression that does not parse or type-check
    ├── SyncError                transfer to / from the main node failed
    │   ├── TransportError       a transport-level failure (connection, protocol)
    │   │   └── RemoteFileError  one remote file cannot be read: skipped (sync/base.py)
    │   ├── AuthError            authentication or host-key verification failed
    │   └── CatalogError         a store catalog object a push did not write (sync/store_catalog.py)
    ├── ReplayBufferError        bad replay-buffer usage (schema, capacity, arguments)
    │   └── CorruptSnapshotError a snapshot that fails verification
    ├── BackendNotInstalledError an optional dependency (torch, tensorflow, ...) is missing
    │   └── MissingBackendError  (see ConfigError: raised by configure())
    ├── RecorderError            a figure/image/video that cannot be recorded (e.g. nothing drawn)
    ├── DiskFullError            a write hit a full disk or quota (also OSError, errno ENOSPC/EDQUOT)
    ├── UnsafePathError          a name or path would reach outside the data root (also ValueError)
    ├── UnreadableFileError      not a regular file, too big or unparseable (safe_read.py; ValueError)
    ├── LegacyStateError         a legacy pickle the safe unpickler refuses (loader/legacy_pickle.py)
    ├── AnnotationError          a tag or note that cannot be stored (annotations.py)
    ├── EmailError               the report could not be sent (email_send.py)
    ├── OperationBusyError       another operation holds the data root's lock (ops/lock.py)
    ├── JournalError             an unreadable or unsafe operation journal (ops/journal.py)
    ├── JournalPathError         a journal step names a path no operation writes (ops/journal_check.py)
    └── ActionError              a dashboard action refused (ui/actions.py)
        └── ReadOnlyError        the dashboard runs read-only

Classes defined outside this module name their module; test/test_error_tree.py checks that
every subclass of ``RLAError`` in ``RLA`` stands in this diagram under one of its bases.

Messages say what was expected, what was found and how to fix it; build them with
:func:`describe` so they read the same everywhere.
"""

from __future__ import annotations


def describe(
    problem: str, expected: str | None = None, found: str | None = None, fix: str | None = None
) -> str:
    """Build a one-paragraph error message: problem, expected, found, fix."""
    parts = [problem.rstrip(".") + "."]
    if expected is not None:
        parts.append(f"Expected: {expected}.")
    if found is not None:
        parts.append(f"Found: {found}.")
    if fix is not None:
        parts.append(f"Fix: {fix}.")
    return " ".join(parts)


class RLAError(Exception):
    """Base class of every error RLA raises on purpose."""

    #: Exit status the ``rla`` command line uses for this error.
    exit_code: int = 1

    def __init__(
        self, problem: str, expected: str | None = None, found: str | None = None, fix: str | None = None
    ) -> None:
        super().__init__(describe(problem, expected, found, fix))
        self.problem = problem
        self.expected = expected
        self.found = found
        self.fix = fix


class ConfigError(RLAError):
    """``rla_config.yaml`` (or a config dict) is missing, malformed or invalid."""

    exit_code = 2


class RunNotFoundError(RLAError):
    """No run matches the given index, glob or query."""


class RunExistsError(RLAError):
    """A run directory could not be created exclusively."""


class LoggerError(RLAError):
    """The logger was used in a way it does not support."""


class CheckpointError(RLAError):
    """A checkpoint is missing, corrupt, or written by another backend."""


class QueryError(RLAError):
    """A query expression does not parse or does not type-check."""

    exit_code = 2
    #: 0-based offset in the (stripped) query text of the problem, when one is known.
    position: int | None = None
    #: True when ``found`` is the escaped query with a caret line under it (its line breaks are RLA's).
    found_is_caret: bool = False


class SyncError(RLAError):
    """Sending runs to, or fetching them from, the main node failed."""


class TransportError(SyncError):
    """A transport-level failure: connection refused, protocol error, timeout."""


class AuthError(SyncError):
    """Authentication or host-key verification against the main node failed."""


class ReplayBufferError(RLAError):
    """A replay buffer was used with bad arguments (schema, capacity, ranks)."""


class CorruptSnapshotError(ReplayBufferError):
    """A replay-buffer snapshot fails verification (size, checksum, manifest)."""


class BackendNotInstalledError(RLAError):
    """An optional dependency needed for the requested feature is not installed."""


class MissingBackendError(ConfigError, BackendNotInstalledError):
    """The config names a checkpoint backend or output format whose package is not installed.

    Raised by ``exp_manager.configure()`` before any run exists; both a :class:`ConfigError`
    and a :class:`BackendNotInstalledError`.
    """


class RecorderError(RLAError):
    """A figure, image or video cannot be recorded as asked (e.g. there is nothing drawn)."""


class HyperParameterError(RLAError, KeyError):
    """A tracked or requested hyper-parameter does not exist (also a ``KeyError``)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return Exception.__str__(self)


class RunStateError(RLAError):
    """An operation needs a run that was not created yet (call ``log_files_gen()``)."""


class DiskFullError(RLAError, OSError):
    """A write hit a full disk or an exhausted quota (also an ``OSError`` with ``errno``).

    Built by :func:`RLA.fs.disk_full_as_error`, which names the file and the free space.

    Attributes:
        path: the file that could not be written.
        free: bytes free on its file system when the error was raised (``None`` if unknown).
    """

    def __init__(
        self,
        problem: str,
        expected: str | None = None,
        found: str | None = None,
        fix: str | None = None,
        *,
        path: str = "",
        free: int | None = None,
        errno: int | None = None,
    ) -> None:
        super().__init__(problem, expected, found, fix)
        self.path = path
        self.free = free
        self.errno = errno

    def __str__(self) -> str:  # OSError would format errno/strerror instead of the message
        return Exception.__str__(self)


class UnsafePathError(RLAError, ValueError):
    """A name or path would reach outside the data root, or is not a plain name."""
