"""``SessionTransport``: what the FTP and SFTP transports share, the errors of a login session.

Both hold one session to the main node, name it as ``user@host:port`` in every message and
keep the password out of them. This base turns a failed operation into the
:class:`~RLA.errors.TransportError` (or :class:`~RLA.sync.base.RemoteFileError`) both raise,
worded the same for each protocol.
"""

from __future__ import annotations

from typing import Callable, Optional, Tuple, Type, TypeVar

from RLA.errors import TransportError
from RLA.sync.base import RemoteFileError, Transport
from RLA.sync.secrets import scrub

T = TypeVar("T")


def described(exc: BaseException, secret: Optional[str]) -> str:
    """``Type: message`` of ``exc`` with ``secret`` scrubbed out."""
    return scrub(f"{type(exc).__name__}: {exc}", secret)


class SessionTransport(Transport):
    """A transport over one login session; subclasses set ``_where`` and ``_secret``.

    The protocol's name in messages is ``name`` in capitals (``FTP``, ``SFTP``).
    """

    _where: str = ""
    _secret: Optional[str] = None
    #: The exceptions of the protocol library that :meth:`_call` turns into TransportError.
    _failures: Tuple[Type[BaseException], ...] = (Exception,)

    @property
    def protocol(self) -> str:
        return self.name.upper()

    def _fail(self, action: str, rpath: str, exc: BaseException) -> TransportError:
        """The error of an operation that failed on the session (``action`` the path)."""
        return TransportError(
            f"{self.protocol} could not {action} {rpath} on {self._where}",
            expected=f"a working {self.protocol} session and a writable remote_data_root",
            found=described(exc, self._secret),
            fix="check the path and permissions on the main node, then sync again",
        )

    def _call(self, action: str, rpath: str, fn: Callable[[], T]) -> T:
        """``fn()``, its protocol failures raised as :meth:`_fail`."""
        try:
            return fn()
        except self._failures as exc:
            raise self._fail(action, rpath, exc) from exc

    def _unreadable(self, rpath: str, found: str) -> RemoteFileError:
        """One remote file the server refuses to read (the sync skips it and goes on)."""
        return RemoteFileError(
            f"{self.protocol} cannot read {rpath} on {self._where}",
            expected="a readable file",
            found=found,
            fix="pull again",
        )

    def _rename_over(self, src: str, dst: str, plain_rename: Callable[[], object]) -> None:
        """For servers whose rename refuses to replace ``dst``: remove it, then rename."""
        self.remove(dst)
        self._call("rename", src, plain_rename)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._where!r})"
