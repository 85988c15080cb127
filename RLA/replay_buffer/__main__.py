"""``python -m RLA.replay_buffer --load-path P --num-chunks N``: load a snapshot, sample once,
print the batch keys and shapes."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List, Optional

from RLA.errors import RLAError


def _shapes(batch: Dict[str, Any], prefix: str = "") -> List[str]:
    lines = []
    for key, value in batch.items():
        if isinstance(value, dict):
            lines += _shapes(value, f"{prefix}{key}.")
        else:
            lines.append(f"{prefix}{key}: shape={tuple(value.shape)} dtype={value.dtype}")
    return lines


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m RLA.replay_buffer",
        description="Load a replay snapshot, sample one batch and print its keys and shapes.",
    )
    parser.add_argument("--load-path", required=True, help="snapshot store or snapshot dir")
    parser.add_argument("--num-chunks", type=int, default=256, help="batch size to sample")
    parser.add_argument("--cache-size", type=int, default=5, help="trajectory cache size")
    parser.add_argument("--enable-cache", action="store_true", help="trajectory cache on")
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=1)
    args = parser.parse_args(argv)
    from RLA.replay_buffer.run_snapshots import build_from_snapshot
    from RLA.replay_buffer.trajectory import TrajectoryReplayBuffer

    try:
        buf = build_from_snapshot(args.load_path)
        if isinstance(buf, TrajectoryReplayBuffer):
            buf = TrajectoryReplayBuffer(enable_cache=args.enable_cache, cache_size=args.cache_size)
            info = buf.load_checkpoint(
                args.load_path,
                is_distributed=args.world_size > 1,
                local_rank=args.rank,
                world_size=args.world_size,
            )
            batch = buf.sample(args.num_chunks)
        else:
            info = buf.loads(args.load_path, rank=args.rank, world_size=args.world_size)
            batch, _, _ = buf.sample(args.num_chunks)
        buf.close()
        print(f"loaded {info['snapshot']}")
        for line in _shapes(batch):
            print(line)
        sys.stdout.flush()
    except RLAError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `... | head`: the reader went away
        from RLA.fs import silence_stdout

        silence_stdout()
        return 141
    return 0


if __name__ == "__main__":
    sys.exit(main())
