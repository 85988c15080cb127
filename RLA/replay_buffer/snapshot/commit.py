"""Two-phase commit of a multi-shard snapshot: torch.distributed (gloo), a file barrier, or local.

Phase 1: every rank writes its segments and its shard manifest into the agreed staging
directory, then reports success. Phase 2: only if every rank succeeded, the coordinator
(rank 0) writes MANIFEST.json listing exactly ``world_size`` shards and publishes the staging
directory by an atomic rename; everybody learns the outcome before returning.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from RLA.errors import ReplayBufferError
from RLA.fs import atomic_write_text
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import staging


class Committer:
    """Single process: one shard, no barrier."""

    def __init__(self, rank: int = 0, world_size: int = 1) -> None:
        self.rank, self.world_size = rank, world_size

    @property
    def is_coordinator(self) -> bool:
        return self.rank == 0

    def staging(self, store: Path, snap_id: str) -> Path:
        """Create and claim the staging folder of this save (see staging.py)."""
        path = store / f"{fmt.STAGING_PREFIX}{snap_id}-{uuid.uuid4().hex[:8]}"
        path.mkdir(parents=True)
        staging.claim(path)
        return path

    def agree(self, value: Any) -> None:
        """Check every rank chose the same snapshot id."""

    def gather(self, ok: bool, error: str, staging: Path) -> List[Tuple[bool, str]]:
        """Phase-1 outcome of every rank (only the coordinator needs the full list)."""
        return [(ok, error)]

    def outcome(self, published: bool, error: str, store: Path, snap_id: str) -> Tuple[bool, str]:
        """Phase-2 outcome, decided by the coordinator, known by every rank."""
        return published, error


#: Private groups of the current default process group: purpose -> (world, timeout, group).
_PRIVATE_GROUPS: Dict[str, Tuple[Any, float, Any]] = {}


def private_group(dist: Any, timeout: float, purpose: str = "commit") -> Any:
    """A gloo group of every rank for one purpose of RLA's, made once per default group.

    An asynchronous save commits from its background thread while training runs its own
    collectives on the main thread; on one shared group the two streams of collectives would
    pair up differently on different ranks (wrong data or a hang). A group of its own keeps
    them apart, works whatever the training's backend (NCCL included), and times out after
    ``timeout`` seconds. Every rank makes it at the same point (its first sharded save, or
    building the save triggers), as ``new_group`` requires.
    """
    world = dist.group.WORLD
    known = _PRIVATE_GROUPS.get(purpose)
    if known and known[0] is world and known[1] == timeout:
        return known[2]
    group = dist.new_group(backend="gloo", timeout=timedelta(seconds=timeout))
    _PRIVATE_GROUPS[purpose] = (world, timeout, group)
    return group


class TorchCommitter(Committer):
    """Collectives over an initialised ``torch.distributed`` process group: a private gloo
    group of every rank (:func:`private_group`), or the ``group`` the caller passes."""

    def __init__(self, rank: int, world_size: int, group: Any = None, timeout: float = 600.0) -> None:
        super().__init__(rank, world_size)
        import torch.distributed as dist

        self.dist = dist
        self.group = group if group is not None else private_group(dist, float(timeout))

    def staging(self, store: Path, snap_id: str) -> Path:
        token = [uuid.uuid4().hex[:8] if self.rank == 0 else None]
        self.dist.broadcast_object_list(token, src=0, group=self.group)
        path = store / f"{fmt.STAGING_PREFIX}{snap_id}-{token[0]}"
        path.mkdir(parents=True, exist_ok=True)
        staging.claim(path)
        return path

    def agree(self, value: Any) -> None:
        values: List[Any] = [None] * self.world_size
        self.dist.all_gather_object(values, value, group=self.group)
        if any(v != values[0] for v in values):
            raise ReplayBufferError(
                "Ranks disagree on the snapshot to write",
                expected="the same snapshot id on every rank",
                found=repr(values),
                fix="call dumps() with the same snapshot_id on every rank",
            )

    def gather(self, ok: bool, error: str, staging: Path) -> List[Tuple[bool, str]]:
        values: List[Any] = [None] * self.world_size
        self.dist.all_gather_object(values, (ok, error), group=self.group)
        return values

    def outcome(self, published: bool, error: str, store: Path, snap_id: str) -> Tuple[bool, str]:
        box = [(published, error)]
        self.dist.broadcast_object_list(box, src=0, group=self.group)
        return box[0]


class FileBarrierCommitter(Committer):
    """Barrier through files in a shared directory, for ranks without torch.distributed.

    The staging directory is named after the snapshot id alone, so every rank finds it. The
    coordinator accepts only shard files written after ``started - timeout``; snapshot ids
    must therefore not be reused within ``timeout`` seconds after a crashed attempt.
    """

    def __init__(self, rank: int, world_size: int, timeout: float = 600.0) -> None:
        super().__init__(rank, world_size)
        self.timeout = float(timeout)
        self.started = time.time()

    def staging(self, store: Path, snap_id: str) -> Path:
        path = store / f"{fmt.STAGING_PREFIX}{snap_id}-barrier"
        path.mkdir(parents=True, exist_ok=True)
        staging.claim(path)
        return path

    def _wait(self, what: str, ready: Any) -> Any:
        deadline = time.monotonic() + self.timeout
        while True:
            value = ready()
            if value is not None:
                return value
            if time.monotonic() > deadline:
                raise ReplayBufferError(
                    f"Timed out waiting for {what}",
                    expected=f"all {self.world_size} ranks within {self.timeout:.0f} s",
                    found="some ranks did not report",
                    fix="check every rank calls dumps(); raise barrier_timeout for slow disks",
                )
            time.sleep(0.02)

    def gather(self, ok: bool, error: str, staging: Path) -> List[Tuple[bool, str]]:
        if not ok:
            atomic_write_text(staging / f"rank-{self.rank:05d}.failed", error)
        if not self.is_coordinator:
            return [(ok, error)]

        def ready() -> Optional[List[Tuple[bool, str]]]:
            out = []
            for r in range(self.world_size):
                failed = staging / f"rank-{r:05d}.failed"
                shard = staging / fmt.shard_file(r)
                if failed.exists() and failed.stat().st_mtime >= self.started - self.timeout:
                    out.append((False, failed.read_text()))
                elif shard.exists():
                    try:
                        written = json.loads(shard.read_text()).get("written_at", 0)
                    except (OSError, ValueError):
                        return None
                    if written < self.started - self.timeout:
                        return None
                    out.append((True, ""))
                else:
                    return None
            return out

        return self._wait("every shard of the snapshot", ready)

    def outcome(self, published: bool, error: str, store: Path, snap_id: str) -> Tuple[bool, str]:
        marker = store / f".aborted-{snap_id}"
        if self.is_coordinator:
            if not published:
                atomic_write_text(marker, error)
            elif marker.exists():
                marker.unlink()
            return published, error

        def ready() -> Optional[Tuple[bool, str]]:
            if (store / snap_id / fmt.MANIFEST).exists():
                return True, ""
            if marker.exists() and marker.stat().st_mtime >= self.started - self.timeout:
                return False, marker.read_text()
            return None

        return self._wait("the coordinator to publish", ready)


def make_committer(
    rank: int, world_size: int, group: Any = None, barrier: Optional[str] = None, timeout: float = 600.0
) -> Committer:
    """Pick the commit protocol: ``"torch"``, ``"file"``, or automatic (torch when initialised)."""
    if world_size == 1:
        return Committer(rank, world_size)
    if barrier not in (None, "torch", "file"):
        raise ReplayBufferError(
            "Unknown barrier",
            expected="'torch' or 'file'",
            found=repr(barrier),
            fix="pass barrier='torch' or 'file'",
        )
    if barrier in (None, "torch"):
        try:
            import torch.distributed as dist

            initialised = dist.is_available() and dist.is_initialized()
        except ImportError:
            initialised = False
        if initialised:
            return TorchCommitter(rank, world_size, group, timeout)
        if barrier == "torch":
            raise ReplayBufferError(
                "torch.distributed is not initialised",
                expected="init_process_group() before a sharded save",
                found="no process group",
                fix="initialise it or barrier='file'",
            )
    return FileBarrierCommitter(rank, world_size, timeout)
