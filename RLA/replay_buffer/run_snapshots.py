"""Replay snapshots of a run: one per checkpoint step under ``replay_dir``, and buffers
rebuilt from a snapshot's manifest.

``<replay_dir>/step-<step>/`` is a snapshot of the store ``replay_dir``; consecutive steps
share unchanged segments, so saving at every checkpoint costs only the new data.
"""

from __future__ import annotations

import os
import re
import shutil
import warnings
from pathlib import Path
from typing import Any, Callable, List, Optional

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.buffer import ReplayBuffer
from RLA.replay_buffer.snapshot import format as fmt

_STEP_RE = re.compile(r"^step-(\d+)$")


def step_id(step: int) -> str:
    return f"step-{int(step)}"


def save_run_buffer(
    buffer: Any,
    replay_dir: Any,
    step: int,
    keep_last: Optional[int] = None,
    asynchronous: bool = False,
    **options: Any,
) -> Any:
    """Save ``buffer`` as ``<replay_dir>/step-<step>`` (replacing an older save of that step).

    Args:
        buffer: a ``ReplayBuffer`` or ``TrajectoryReplayBuffer``.
        replay_dir: the run's replay directory (the snapshot store).
        step: the checkpoint step the snapshot belongs to.
        keep_last: keep only the newest N step snapshots.
        asynchronous: ReplayBuffer only: return a handle (``wait()``) instead of blocking.
        options: more ``dumps`` options (``rank``, ``world_size``, ``group``...).

    Returns:
        The snapshot directory, or the async handle.
    """
    from RLA.replay_buffer.trajectory import TrajectoryReplayBuffer

    snap = step_id(step)
    if isinstance(buffer, TrajectoryReplayBuffer):
        if asynchronous or options:
            given = sorted(options) + (["asynchronous"] if asynchronous else [])
            raise ReplayBufferError(
                "A TrajectoryReplayBuffer snapshot takes no ReplayBuffer options",
                expected="keep_last only (its background saves are auto_save)",
                found=", ".join(given),
                fix="drop those options, or save a ReplayBuffer",
            )
        return buffer.save_checkpoint(replay_dir, keep_last=keep_last, snapshot_id=snap, overwrite=True)
    if asynchronous:
        return buffer.dumps_async(
            replay_dir, snapshot_id=snap, overwrite=True, keep_last=keep_last, **options
        )
    return buffer.dumps(replay_dir, snapshot_id=snap, overwrite=True, keep_last=keep_last, **options)


def run_buffer_steps(replay_dir: Any) -> List[int]:
    """Steps that have a complete snapshot, ascending."""
    steps = []
    for _, _, snap_id, _ in fmt.list_snapshots(Path(replay_dir)):
        match = _STEP_RE.match(snap_id)
        if match:
            steps.append(int(match.group(1)))
    return sorted(steps)


def fork_run_snapshots(
    parent: Any, child: Any, step: Optional[int], link: Callable[[Path, Path], None]
) -> List[str]:
    """Carry a resumed run's replay snapshots over: every complete ``step-<n>`` snapshot of
    ``parent`` with ``n <= step`` (all of them when ``step`` is None), and the segment files
    they list, are ``link``-ed (hard links: snapshot files are never edited) into ``child``.

    The resumed run can then be resumed again before it saves a buffer of its own. Returns
    the snapshot ids carried over.
    """
    from RLA.replay_buffer.snapshot.retention import listed_files

    parent, child = Path(parent), Path(child)
    carried: List[str] = []
    for _, _, snap_id, snap in fmt.list_snapshots(parent):
        match = _STEP_RE.match(snap_id)
        if step is not None and (match is None or int(match.group(1)) > step):
            continue
        if (child / snap_id).exists():
            continue
        listed = listed_files(parent, snap)
        if listed is None:  # a damaged snapshot stays behind; the others still come
            warnings.warn(
                f"replay snapshot {snap} is damaged (a file is missing or has the "
                f"wrong size): not carried over to {child}",
                stacklevel=2,
            )
            continue
        files = [f for f in listed if snap not in f.parents]  # the segments, then
        files += [f for f in snap.rglob("*") if f.is_file()]  # the snapshot's own files
        staging = child / f"{fmt.STAGING_PREFIX}fork-{snap_id}"
        try:
            for f in files:  # segments first; the snapshot appears whole, by one rename
                rel = f.relative_to(parent)
                target = staging / rel.relative_to(snap_id) if rel.parts[0] == snap_id else child / rel
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    link(f, target)
            os.replace(staging, child / snap_id)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise ReplayBufferError(
                f"Could not carry replay snapshot {snap} over to {child}",
                expected="its files linked or copied",
                found=f"{type(exc).__name__}: {exc}",
                fix="check the disk and permissions, then resume again",
            ) from exc
        carried.append(snap_id)
    return carried


def build_from_snapshot(path: Any, snapshot: Optional[str] = None, **overrides: Any) -> Any:
    """A new, empty buffer configured like the snapshot (capacity, schema, sampler, envs)."""
    from RLA.replay_buffer.trajectory import KIND, TrajectoryReplayBuffer

    store, snap_dir, manifest = fmt.resolve(path, snapshot)
    if manifest.get("kind") == KIND:
        return TrajectoryReplayBuffer(**overrides)
    from RLA.replay_buffer.snapshot import validate

    shard = validate.read_shards(snap_dir, manifest)[0]  # checked like every reader's
    from RLA.replay_buffer.schema import Schema

    options = dict(
        capacity=int(shard["capacity"]),
        schema=Schema.from_json(shard["schema"]) if shard.get("schema") else None,
        sampler=shard["sampler"]["kind"],
        sampler_options=shard["sampler"]["params"],
        num_envs=int(shard["episodes"]["num_envs"]),
        seed=shard.get("seed"),
        done_keys=shard.get("done_keys"),
    )
    options.update(overrides)
    return ReplayBuffer(**options)


def load_run_buffer(
    buffer: Optional[Any], replay_dir: Any, step: Optional[int] = None, **options: Any
) -> Any:
    """Restore the snapshot of ``step`` (newest complete one when None) into ``buffer``.

    With ``buffer=None`` a buffer configured like the snapshot is built. Returns the buffer.

    Raises:
        ReplayBufferError: no snapshot (for that step) in ``replay_dir``.
        CorruptSnapshotError: the snapshot fails verification (the buffer is unchanged).
    """
    from RLA.replay_buffer.trajectory import TrajectoryReplayBuffer

    replay_dir = Path(replay_dir)
    snapshot = None
    if step is not None:
        snapshot = step_id(step)
        if not (replay_dir / snapshot / fmt.MANIFEST).is_file():
            raise ReplayBufferError(
                f"No replay snapshot for step {step} in {replay_dir}",
                expected=f"one of steps {run_buffer_steps(replay_dir)}",
                found="no such snapshot",
                fix="resume from a step that saved its replay buffer",
            )
    if buffer is None:
        buffer = build_from_snapshot(replay_dir, snapshot)
    if isinstance(buffer, TrajectoryReplayBuffer):
        path = replay_dir / snapshot if snapshot else replay_dir
        buffer.load_checkpoint(path, **options)
    else:
        buffer.loads(replay_dir, snapshot=snapshot, **options)
    return buffer
