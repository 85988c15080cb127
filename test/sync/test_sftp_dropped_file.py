"""A remote file whose SSH channel died mid-write is closed once: no 'Socket is closed' at collection."""
from __future__ import annotations

import gc
import io
import sys
from pathlib import Path
from typing import Any, List

import pytest

from RLA.errors import TransportError
from RLA.sync.base import CHUNK
from RLA.sync.sftp import SFTPTransport


class _DropsAfterFirstChunk(io.BytesIO):
    """A source that closes the transport's SFTP channel once the first chunk was read."""

    def __init__(self, transport: SFTPTransport, size: int) -> None:
        super().__init__(b"x" * size)
        self.transport = transport
        self.reads = 0

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        self.reads += 1
        if self.reads == 2:
            self.transport._sftp.get_channel().close()  # the server side went away
        return super().read(n)


@pytest.mark.timeout(60)
def test_a_dropped_write_leaves_nothing_for_the_garbage_collector(sshd, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    unraisable: List[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    transport = SFTPTransport("127.0.0.1", sshd.port, "root", key_filename=str(sshd.client_key),
                              allow_agent=False, known_hosts=str(sshd.known_hosts), timeout=10)
    try:
        source = _DropsAfterFirstChunk(transport, 4 * CHUNK)
        with pytest.raises(TransportError):
            transport.write(str(tmp_path / "remote.bin"), source, 0, 4 * CHUNK)
        assert source.reads >= 2  # the drop happened inside the write
    finally:
        transport.close()
    for _ in range(3):
        gc.collect()
    assert [f"{u.exc_type.__name__}: {u.exc_value} in {u.object!r}" for u in unraisable] == []
