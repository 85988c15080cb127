"""Replay buffers with exact, atomic, incremental and sharded snapshots (numpy core).

``ReplayBuffer`` (transition ring with episodes and samplers) and ``TrajectoryReplayBuffer``
(the trajectory store of the RLinf API); torch tensors are accepted and returned, torch is
imported only when used.
"""

from __future__ import annotations

from RLA.errors import CorruptSnapshotError, ReplayBufferError
from RLA.replay_buffer.buffer import ReplayBuffer
from RLA.replay_buffer.save_triggers import SaveTriggers
from RLA.replay_buffer.schema import Schema

__all__ = [
    "CorruptSnapshotError",
    "ReplayBuffer",
    "ReplayBufferError",
    "SaveTriggers",
    "Schema",
    "TrajectoryReplayBuffer",
    "reshard_snapshot",
]


def __getattr__(name: str):
    if name == "TrajectoryReplayBuffer":
        from RLA.replay_buffer.trajectory import TrajectoryReplayBuffer

        return TrajectoryReplayBuffer
    if name == "reshard_snapshot":
        from RLA.replay_buffer.sharding import reshard_snapshot

        return reshard_snapshot
    raise AttributeError(f"module 'RLA.replay_buffer' has no attribute {name!r}")
