"""Record the order of ``os.fsync`` and ``os.replace`` calls to check durable atomic writes.

A durable replacement fsyncs the temp file before renaming it over the destination and
fsyncs the destination's folder after, so that a power cut leaves the old or the new file,
never a renamed empty one. Use: ``order = WriteOrder(monkeypatch)``, write, then
``order.assert_durable(path)``.
"""
from __future__ import annotations

import os
from typing import Any, List, Tuple


class WriteOrder:
    """Patch ``os.fsync`` / ``os.replace`` to log ``("fsync", path)`` and ``("replace", src, dst)``."""

    def __init__(self, monkeypatch: Any) -> None:
        self.events: List[Tuple[str, ...]] = []
        real_fsync, real_replace = os.fsync, os.replace

        def fsync(fd: int) -> None:
            self.events.append(("fsync", os.path.realpath(os.readlink(f"/proc/self/fd/{fd}"))))
            real_fsync(fd)

        def replace(src: Any, dst: Any, **kwargs: Any) -> None:
            real_replace(src, dst, **kwargs)
            self.events.append(("replace", os.path.realpath(src), os.path.realpath(dst)))

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "replace", replace)

    def assert_durable(self, path: Any) -> None:
        """The last rename onto ``path``: its temp fsynced before, its folder fsynced after."""
        dst = os.path.realpath(path)
        renames = [i for i, event in enumerate(self.events) if event[0] == "replace" and event[2] == dst]
        assert renames, f"no rename onto {dst}: {self.events}"
        at = renames[-1]
        src = self.events[at][1]
        assert ("fsync", src) in self.events[:at], f"temp {src} not fsynced before its rename: {self.events}"
        assert ("fsync", os.path.dirname(dst)) in self.events[at + 1:], \
            f"folder of {dst} not fsynced after the rename: {self.events}"
