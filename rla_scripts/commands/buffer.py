"""``rla buffer inspect|verify|merge|split|reshard``: replay-buffer snapshot tools."""

from __future__ import annotations

import argparse
import json
from typing import Any

from RLA.errors import ReplayBufferError
from RLA.text import count
from rla_scripts.commands._common import add_data_root


def snapshot_path(text: str, args: argparse.Namespace) -> str:
    """A snapshot store/directory path, or the ``replay/`` folder of the run ``text`` names.

    A path that exists is used as it is; anything else is looked up as a run (an index such
    as ``task/2026/11/02/10-00-00-000000``, or a unique prefix/glob of ``YYYY/MM/DD/<name>``)
    in the data root (``--data-root``, ``$RLA_DATA_ROOT`` or the nearest rla_config.yaml).

    Raises:
        ReplayBufferError: the run has no replay snapshots.
        RunNotFoundError: neither a path nor a single matching run.
    """
    import os

    if os.path.exists(text):
        return text
    from RLA.errors import ConfigError, RunNotFoundError
    from RLA.layout import find_run
    from rla_scripts.commands._common import resolve_data_root

    try:
        data_root = resolve_data_root(getattr(args, "data_root", None))
    except ConfigError as exc:
        raise ReplayBufferError(
            f"No snapshot store at {text!r}, and no data root to look it up as a run",
            expected="an existing store/snapshot path, or a run "
            "index with --data-root, $RLA_DATA_ROOT or an rla_config.yaml",
            found=f"no such path; {exc.found}",
            fix="check the path (or pass --data-root for a run)",
        ) from None
    try:
        run = find_run(data_root, text, task=getattr(args, "task", None))
    except RunNotFoundError as exc:
        raise RunNotFoundError(
            f"{text!r} is neither a snapshot path nor a run in {data_root}",
            expected="a snapshot store/directory, or a run index / unique prefix",
            found=exc.found,
            fix="check the path, or `rla list` for the runs",
        ) from None
    if not run.replay_dir.is_dir():
        raise ReplayBufferError(
            f"Run {run.index} has no replay snapshots",
            expected=f"snapshots under {run.replay_dir}",
            found="no replay folder",
            fix="save one with exp_manager.save_replay_buffer(buffer)",
        )
    return os.fspath(run.replay_dir)


def _say(text: str) -> None:
    """Print a line built from a snapshot's manifest: its names and provenance come from a
    file that may have arrived by ``rla sync pull``, so control characters are made visible."""
    from RLA.terminal import escape

    print(escape(text))


def _inspect(args: argparse.Namespace) -> int:
    from RLA.replay_buffer.schema import dtype_from_json
    from RLA.replay_buffer.snapshot.inspect import describe

    info = describe(snapshot_path(args.path, args), args.snapshot)
    if args.json:
        print(json.dumps(info, indent=2))  # JSON escapes control characters itself
        return 0
    _say(
        f"snapshot {info['snapshot']} in {info['store']} ({info['kind']}, format "
        f"v{info['format_version']}, RLA {info['library_version']}, "
        f"{count(info['world_size'], 'shard')}, {info['payload_bytes'] / 1e6:.2f} MB payload)"
    )
    _say("snapshots in store: " + ", ".join(info["snapshots"]))
    if info["newer_snapshots"]:
        _say("written by a newer RLA (not readable here): " + ", ".join(info["newer_snapshots"]))
    for f in info["schema"] or []:
        dtype = f["dtype"] if isinstance(f["dtype"], str) else dtype_from_json(f["dtype"])
        _say(f"  field {f['name']}: {dtype} {tuple(f['shape'])}")
    for row in info["shards"]:
        _say(
            f"  rank {row['rank']}: size={row['size']} capacity={row['capacity']} "
            f"cursor={row['cursor']} sampler={row['sampler']} num_envs={row['num_envs']} "
            f"files={row['files']} "
            f"bytes={row['bytes']}"
        )
    for cls, counts in (info["episode_report"] or {}).items():
        _say(f"  episodes {cls}: {counts['episodes']} ({count(counts['steps'], 'step')})")
    prov = info["provenance"]
    if prov:  # the full record, counts included, is in --json
        _say(
            f"  provenance: {prov.get('operation')} of {prov.get('source')} "
            f"({prov.get('source_world_size')} -> {prov.get('world_size')} shard(s))"
        )
    return 0


def _verify(args: argparse.Namespace) -> int:
    from RLA.replay_buffer.snapshot.inspect import verify

    result = verify(snapshot_path(args.path, args), args.snapshot)
    _say(f"OK: {count(result['files'], 'file')}, {count(result['bytes'], 'payload byte')} verified")
    return 0


def _reshard(args: argparse.Namespace, world_size: int, operation: str) -> int:
    from RLA.replay_buffer.sharding import reshard_snapshot

    if world_size < 1:
        raise ReplayBufferError(
            "Bad --world-size", expected=">= 1", found=str(world_size), fix="pass a positive number of shards"
        )
    src = snapshot_path(args.src, args)
    if args.dry_run:
        from RLA.replay_buffer.snapshot.inspect import describe

        info = describe(src, args.snapshot)
        _say(
            f"would write {count(world_size, 'shard')} from {info['world_size']} of "
            f"{info['store']}/{info['snapshot']} into {args.dst}"
        )
        return 0
    out = reshard_snapshot(
        src,
        args.dst,
        world_size,
        capacity=args.capacity,
        num_envs=args.num_envs,
        snapshot=args.snapshot,
        operation=operation,
    )
    rep = out["report"]
    _say(
        f"wrote {out['snapshot']} ({count(world_size, 'shard')}, capacity {out['capacity']}, "
        f"sizes {rep['sizes']}; dropped {count(rep['dropped']['episodes'], 'episode')}, "
        f"overflow {rep['overflow']['episodes']})"
    )
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "buffer", help="inspect, verify, merge, split or reshard replay-buffer snapshots"
    )
    sub = parser.add_subparsers(dest="buffer_command", metavar="ACTION", required=True)
    p = sub.add_parser("inspect", help="print manifest, schema, counts and sizes")
    p.add_argument("path", help="snapshot store or snapshot directory, or a run (index or unique prefix)")
    p.add_argument("--snapshot", help="snapshot id (default: newest)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_data_root(p)
    p.set_defaults(func=_inspect)
    p = sub.add_parser(
        "verify",
        help="check the manifests as a load does, then re-hash every file; non-zero exit on any problem",
    )
    p.add_argument("path", help="snapshot store or snapshot directory, or a run (index or unique prefix)")
    p.add_argument("--snapshot")
    add_data_root(p)
    p.set_defaults(func=_verify)
    for name, helptext, fixed in (
        ("merge", "merge all shards into one (copy)", 1),
        ("split", "split into --world-size shards (copy)", None),
        ("reshard", "redistribute into --world-size shards (copy)", None),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("src", help="source store or snapshot directory, or a run (index or unique prefix)")
        p.add_argument("dst", help="destination store (a new snapshot is written there)")
        p.add_argument("--snapshot", help="source snapshot id (default: newest)")
        if fixed is None:
            p.add_argument("--world-size", type=int, required=True)
        p.add_argument(
            "--capacity",
            type=int,
            help="per-shard capacity (default: the total "
            "capacity of the source divided over the shards, or more to fit)",
        )
        p.add_argument("--num-envs", type=int, help="envs per destination rank")
        p.add_argument("--dry-run", action="store_true")
        add_data_root(p)
        p.set_defaults(func=(lambda a, f=fixed, op=name: _reshard(a, f if f else a.world_size, op)))
