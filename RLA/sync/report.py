"""``SyncReport``: what one push or pull did (or, with ``dry_run``, would do)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Tuple

from RLA.text import count


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
                f"{self.files_deleted} deleted; {count(self.bytes_sent, 'byte')} sent"
            )
        else:
            counts = (
                f"{self.files_received} downloaded, {count(self.files_fetched, 'tail')} fetched; "
                f"{count(self.bytes_received, 'byte')} received"
            )
        if self.dry_run:
            counts = count(len(self.planned), 'file')
        if self.files_skipped:
            counts += f"; {count(self.files_skipped, 'file')} skipped (see the warnings)"
        return (
            f"{self.direction} {self.target}: {count(self.runs, 'run')}, {self.runs_changed} changed, {verb} "
            f"{counts} in {self.seconds:.2f}s"
            + (f" ({count(self.retries, 'retry', 'retries')})" if self.retries else "")
        )
