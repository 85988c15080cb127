"""Format 3: integer chunks spanning a narrow range are stored as unsigned offsets from their
minimum (episode bookkeeping, discrete actions) and widened back exactly on every read path."""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from RLA.errors import CorruptSnapshotError
from RLA.replay_buffer import ReplayBuffer
from RLA.replay_buffer.schema import FieldSpec
from RLA.replay_buffer.snapshot import inspect as snap_inspect
from RLA.replay_buffer.snapshot import segment_layout as layout

from helpers import assert_same_state
from test_direct_reads import evict

I64 = np.iinfo(np.int64)
U64 = np.iinfo(np.uint64)

#: field -> (dtype, value of item i, the stored type expected in every segment: each holds
#: ~130 consecutive items)
CASES = {
    "small_i64": ("int64", lambda i: i % 7, "|u1"),
    "neg_i16": ("int16", lambda i: -30000 + i % 200, "|u1"),
    "wide_i32": ("int32", lambda i: -40000 + (i * 40009) % 2_000_000, None),  # u4 is no narrower
    "near_max_i64": ("int64", lambda i: I64.max - (i * 401) % 1000, "<u2"),
    "near_min_i64": ("int64", lambda i: I64.min + (i * 13) % 300, "<u2"),
    "huge_u64": ("uint64", lambda i: U64.max - (i * 457) % 60000, "<u2"),  # base > 2**63
    "mid_i64": ("int64", lambda i: (i * 7919) % 100_000 - 50_000, "<u4"),
    "full_range_i64": ("int64", lambda i: I64.max if i % 2 else I64.min, None),
    "u16_small": ("uint16", lambda i: 65000 + i % 5, "|u1"),
    "u16_full": ("uint16", lambda i: (i * 977) % 65536, None),  # no narrower type holds it
    "matrix_i64": ("int64", lambda i: np.arange(6).reshape(2, 3) * 1000 + i % 3, "<u2"),
    "float": ("float32", lambda i: i / 3, None),
    "flag": ("bool", lambda i: i % 3 == 0, None),
}


def build(seed: int = 0, n: int = 900) -> ReplayBuffer:
    schema = {name: ((2, 3) if name == "matrix_i64" else (), dtype)
              for name, (dtype, _, _) in CASES.items()}
    schema["done"] = ((), "bool")
    buf = ReplayBuffer(1000, schema, sampler="prioritized", num_envs=3, seed=seed,
                       segment_bytes=1 << 14)
    for t in range(n // 3):
        rows = [3 * t + e for e in range(3)]
        data = {name: np.array([fn(i) for i in rows], dtype=dtype)
                for name, (dtype, fn, _) in CASES.items()}
        buf.add(dict(data, done=np.array([t % 50 == 49] * 3)), env_ids=np.arange(3))
    return buf


def shard_of(store: Path) -> dict:
    return json.loads(next(store.glob("snap-*/rank-00000.json")).read_text())


def test_narrowed_round_trip_is_exact(tmp_path):
    ref = build()
    ref.dumps(tmp_path / "s")
    segs = shard_of(tmp_path / "s")["segments"]
    assert len(segs) > 3
    for name, (_, _, expected) in CASES.items():
        stored = {seg["narrow"].get(name, [None])[0] for seg in segs}
        assert stored == {expected}, name
    # the episode bookkeeping: one byte for the env id, a few for the episode id and step
    assert all(seg["narrow"]["_env_id"][0] == "|u1" for seg in segs)
    assert all(seg["narrow"]["_step"][0] == "|u1" for seg in segs)  # episodes of 50 steps
    state = ref.rng.bit_generator.state
    for direct in (False, True):
        ref.rng.bit_generator.state = state  # both loads continue the saved stream
        evict([p for p in (tmp_path / "s").rglob("*") if p.is_file()])
        buf = build(seed=3, n=0)
        buf.loads(tmp_path / "s", direct_reads=direct)
        assert_same_state(buf, ref)
        assert np.array_equal(buf.sample(32)[1], ref.sample(32)[1])


def test_narrowed_segments_are_smaller_and_reshard_exactly(tmp_path):
    ref = build()
    ref.dumps(tmp_path / "s")
    stored = sum(seg["bytes"] for seg in shard_of(tmp_path / "s")["segments"])
    assert stored < 0.7 * len(ref) * ref.schema.item_bytes
    parts = [build(seed=r, n=0) for r in range(2)]
    for r, part in enumerate(parts):
        part.loads(tmp_path / "s", rank=r, world_size=2)

    def rows(bufs):
        out = []
        for b in bufs:
            g = b.get(np.arange(len(b)))
            out += [tuple(np.asarray(g[name][i]).tobytes() for name in CASES)
                    + (int(g["episode_id"][i]), int(g["step"][i])) for i in range(len(b))]
        return sorted(out)
    assert rows(parts) == rows([ref])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint16",
                                   "uint32", "uint64"])
def test_narrowed_inverts_at_the_type_limits(dtype):
    info = np.iinfo(dtype)
    for values in ([info.min, info.min + 1], [info.max - 3, info.max], [info.min, info.max],
                   [0], [info.max] * 5):
        arr = np.array(values, dtype=dtype)
        stored, enc = layout.narrowed(arr)
        out = np.empty_like(arr)
        if enc is None:
            assert stored is arr
        else:
            assert stored.dtype.itemsize < arr.dtype.itemsize
            layout.widen(stored, enc[1], out, Path("x.seg"))
            assert out.tobytes() == arr.tobytes()


def field(name="a", dtype="int64"):
    return FieldSpec(name, np.dtype(dtype), ())


@pytest.mark.parametrize("narrow", [
    {"a": ["<i2", 0]},             # not an unsigned stored type
    {"a": ["<u8", 0]},             # not narrower than the field
    {"a": ["|u1", 2 ** 63]},        # base outside int64
    {"a": ["|u1", 1.5]},           # base not an integer
    {"a": ["|u1", True]},          # nor a bool
    {"b": ["|u1", 0]},             # not a field of the segment
    {"f": ["|u1", 0]},             # a float field
    {"a": "|u1"},                  # not [dtype, base]
    ["a"],                         # not a mapping
])
def test_bad_encodings_are_refused(narrow, tmp_path):
    fields = [field("a"), FieldSpec("f", np.dtype("float32"), ())]
    with pytest.raises(CorruptSnapshotError, match="bad integer encoding"):
        layout.stored_dtypes({"narrow": narrow}, fields, tmp_path / "x.seg")


def rewrite_shard(store: Path, edit) -> None:
    """Edit the shard manifest and re-sign it in MANIFEST.json (a consistent, wrong manifest)."""
    snap = next(store.glob("snap-*"))
    shard_path = snap / "rank-00000.json"
    shard = json.loads(shard_path.read_text())
    edit(shard)
    data = json.dumps(shard).encode()
    shard_path.write_bytes(data)
    manifest = json.loads((snap / "MANIFEST.json").read_text())
    manifest["shards"][0].update(bytes=len(data), crc32=zlib.crc32(data))
    (snap / "MANIFEST.json").write_text(json.dumps(manifest))


def test_a_wrong_encoding_in_a_signed_manifest_is_caught_and_the_buffer_kept(tmp_path):
    build().dumps(tmp_path / "s")

    def edit(shard):
        shard["segments"][1]["narrow"]["_step"] = ["<u2", 0]  # file says u1: sizes disagree
    rewrite_shard(tmp_path / "s", edit)
    with pytest.raises(CorruptSnapshotError, match="does not match the schema"):
        snap_inspect.verify(tmp_path / "s")
    live, ref = build(seed=4, n=90), build(seed=4, n=90)
    with pytest.raises(CorruptSnapshotError, match="does not match the schema"):
        live.loads(tmp_path / "s")
    assert_same_state(live, ref)


def test_a_base_that_would_wrap_around_is_caught(tmp_path):
    build().dumps(tmp_path / "s")

    def edit(shard):  # steps up to 49 on top of this base leave int64
        shard["segments"][0]["narrow"]["_step"] = ["|u1", int(I64.max) - 10]
    rewrite_shard(tmp_path / "s", edit)
    for check in (snap_inspect.verify, lambda p: build(seed=4, n=0).loads(p)):
        with pytest.raises(CorruptSnapshotError, match="bad integer encoding"):
            check(tmp_path / "s")


def test_widen_adds_in_the_fields_type():
    """numpy 1 promoted a 0-d base by value and added in the stored type (256 -> 0)."""
    stored = np.array([0, 255], dtype=np.uint8)
    out = np.empty(2, dtype=np.int64)
    layout.widen(stored, 1, out, Path("x.seg"))
    assert out.tolist() == [1, 256]
