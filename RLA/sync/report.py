"""``SyncReport``: what one push or pull did (or, with ``dry_run``, would do)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Tuple


@dataclass
class SyncReport:
    """What one push or pull did (or, with ``dry_run``, would do)."""

    direction: str
    target: str
    runs: int = 0
    runs_changed: int = 0
    files_sent: int = 0
    files_appended: int = 0
    files_deleted: int = 0
    files_received: int = 0
    files_fetched: int = 0
    #: Files left out with a warning (unsafe name, link, over ``max_file_size``, wrong size).
    files_skipped: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    retries: int = 0
    seconds: float = 0.0
    dry_run: bool = False
    #: ``(run index, action, key)`` of every planned step.
    planned: List[Tuple[str, str, str]] = field(default_factory=list)

    def summary(self) -> str:
        """One human line."""
        verb = "would transfer" if self.dry_run else "transferred"
        if self.direction == "push":
            counts = (
                f"{self.files_sent} new/changed, {self.files_appended} appended, "
                f"{self.files_deleted} deleted; {self.bytes_sent} bytes sent"
            )
        else:
            counts = (
                f"{self.files_received} downloaded, {self.files_fetched} tails fetched; "
                f"{self.bytes_received} bytes received"
            )
        if self.dry_run:
            counts = f"{len(self.planned)} files"
        if self.files_skipped:
            counts += f"; {self.files_skipped} files skipped (see the warnings)"
        return (
            f"{self.direction} {self.target}: {self.runs} runs, {self.runs_changed} changed, {verb} "
            f"{counts} in {self.seconds:.2f}s" + (f" ({self.retries} retries)" if self.retries else "")
        )
