"""Cold snapshot files are read with O_DIRECT: large field chunks of format 2 segments land in
the destination arrays in place, the rest goes through a per-thread scratch buffer. Restores
are exact; corrupt or short files raise CorruptSnapshotError naming the file and leave the
live buffer untouched; cached files and file systems without O_DIRECT take plain reads."""
from __future__ import annotations

import errno
import mmap
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from RLA.errors import CorruptSnapshotError
from RLA.replay_buffer import ReplayBuffer
from RLA.replay_buffer.schema import Schema
from RLA.replay_buffer.snapshot import direct_read as dr
from RLA.replay_buffer.snapshot import file_io as fio
from RLA.replay_buffer.snapshot import format as fmt
from RLA.replay_buffer.snapshot import segment_layout, shard_io

from helpers import assert_same_state, fill, make

FRAMES = {"frame": ((3, 84, 84), "uint8"), "reward": ((), "float32"), "done": ((), "bool")}


def evict(paths) -> None:
    """Drop the files' clean pages from the page cache (no root needed)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def supports_direct(directory: Path) -> bool:
    probe = directory / "direct-probe"
    probe.write_bytes(b"\0" * 4096)
    try:
        fd = os.open(probe, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
    except OSError:
        return False
    os.close(fd)
    probe.unlink()
    return hasattr(os, "O_DIRECT")


@pytest.fixture()
def direct_dir(tmp_path):
    if not supports_direct(tmp_path):
        pytest.skip("the temporary directory's file system has no O_DIRECT")
    return tmp_path


@pytest.fixture()
def spy(monkeypatch):
    """Records each ``read_direct`` result (True: read with O_DIRECT) and the bytes each
    O_DIRECT read placed in the destination in place (``spy.in_place``)."""
    class Calls(list):
        in_place = 0
    calls = Calls()
    orig_read, orig_plan = dr.read_direct, dr.plan

    def read(*args, **kwargs):
        result = orig_read(*args, **kwargs)
        calls.append(result)
        return result

    def plan(views, size, *args):
        out = orig_plan(views, size, *args)
        Calls.in_place += sum(hi - lo for lo, hi, target in out if target is not None)
        return out
    monkeypatch.setattr(dr, "read_direct", read)
    monkeypatch.setattr(dr, "plan", plan)
    monkeypatch.delenv("RLA_REPLAY_DIRECT_IO", raising=False)  # the default: O_DIRECT on
    return calls


def frames_buffer(seed: int = 0, capacity: int = 300, n: int = 370) -> ReplayBuffer:
    """21,168-byte frames (not a multiple of 4096), 1 MiB segments, a wrapped ring."""
    buf = ReplayBuffer(capacity, FRAMES, sampler="prioritized", seed=seed,
                       segment_bytes=1 << 20)
    rng = np.random.default_rng(seed + 1)
    for lo in range(0, n, 50):
        k = min(50, n - lo)
        buf.add({"frame": rng.integers(0, 255, (k, 3, 84, 84), dtype=np.uint8),
                 "reward": rng.random(k).astype(np.float32), "done": rng.random(k) < 0.05})
    idx = np.arange(0, len(buf), 7)
    buf.update_priority(idx, rng.random(idx.size))
    return buf


def segment_files(store: Path):
    return sorted((store / "segments" / "r00000").iterdir())


@pytest.mark.timeout(60)
def test_cold_load_reads_frames_in_place_and_exact(direct_dir, spy):
    src = frames_buffer()
    src.dumps(direct_dir / "store")
    segs = segment_files(direct_dir / "store")
    assert len(segs) >= 6
    evict(segs)
    dst = ReplayBuffer(300, FRAMES, sampler="prioritized", seed=7, segment_bytes=1 << 20)
    dst.loads(direct_dir / "store")
    assert spy.count(True) >= len(segs)  # every segment went through O_DIRECT
    frame_bytes = src.storage.arrays["frame"].nbytes
    assert spy.in_place > 0.9 * frame_bytes  # the frames landed in place, not via the scratch
    assert_same_state(dst, src)
    a, b = dst.sample(32), src.sample(32)
    assert np.array_equal(a[1], b[1]) and np.array_equal(a[0]["frame"], b[0]["frame"])
    assert np.asarray(a[2]).tobytes() == np.asarray(b[2]).tobytes()  # IS weights, to the bit


@pytest.mark.timeout(60)
def test_small_items_cold_load_is_direct_and_exact(direct_dir, spy):
    src = make(capacity=2048, sampler="prioritized", seed=0, segment_bytes=16 << 10)
    fill(src, 700, seed=1)
    src.dumps(direct_dir / "store")
    evict(segment_files(direct_dir / "store"))
    dst = make(capacity=2048, sampler="prioritized", seed=7, segment_bytes=16 << 10)
    dst.loads(direct_dir / "store")
    assert spy.count(True) >= len(segment_files(direct_dir / "store"))
    assert_same_state(dst, src)


@pytest.mark.timeout(60)
def test_cached_files_take_plain_reads(direct_dir, spy):
    src = frames_buffer()
    src.dumps(direct_dir / "store")
    for seg in segment_files(direct_dir / "store"):
        seg.read_bytes()  # cached
    dst = ReplayBuffer(300, FRAMES, sampler="prioritized", seed=7, segment_bytes=1 << 20)
    dst.loads(direct_dir / "store")
    fd = os.open(segment_files(direct_dir / "store")[0], os.O_RDONLY)
    try:
        have_cachestat = dr.cached_pages(fd, 1) >= 0
    except OSError:
        have_cachestat = False  # before Linux 6.5 every file counts as cold
    finally:
        os.close(fd)
    if have_cachestat:
        assert spy and not any(spy)  # cached files are read plainly
    assert_same_state(dst, src)


@pytest.mark.parametrize("where", ["frame chunk", "padding"])
@pytest.mark.timeout(60)
def test_cold_corrupt_segment_names_file_and_leaves_live_buffer(direct_dir, spy, where):
    src = frames_buffer()
    src.dumps(direct_dir / "store")
    shard = next((direct_dir / "store").glob("snap-*/rank-00000.json"))
    import json
    segs = json.loads(shard.read_text())["segments"]
    seg = next(s for s in segs if s.get("offsets") and s["offsets"][0] > 0)
    path = direct_dir / "store" / seg["file"]
    data = bytearray(path.read_bytes())
    data[seg["offsets"][0] - 1 if where == "padding" else seg["offsets"][0] + 50000] ^= 0x40
    path.write_bytes(bytes(data))
    evict(segment_files(direct_dir / "store"))
    live, reference = frames_buffer(seed=3, capacity=300, n=120), \
        frames_buffer(seed=3, capacity=300, n=120)
    with pytest.raises(CorruptSnapshotError, match=f"{path.name}.*fails its checksum"):
        live.loads(direct_dir / "store")
    assert True in spy
    assert_same_state(live, reference)


def random_file(path: Path, nbytes: int, seed: int = 0) -> np.ndarray:
    data = np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8)
    data.tofile(path)
    evict([path])
    return data


def in_fresh_thread(fn):
    """Run ``fn`` in a new thread (as the loader's reader threads do)."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            out["error"] = exc
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def page_aligned(nbytes: int) -> np.ndarray:
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=np.uint8)


@pytest.mark.parametrize("shift", [0, 100])  # 0: the big view lines up with its file offset
@pytest.mark.timeout(60)
def test_pieces_of_any_size_small_scratch(direct_dir, monkeypatch, shift):
    """A scratch buffer smaller than the file, in-place and copied pieces, views that
    straddle blocks, a partial last block."""
    monkeypatch.setattr(dr, "SCRATCH_BYTES", 3 * 4096)
    monkeypatch.setattr(dr, "MIN_IN_PLACE", 2 * 4096)
    path = direct_dir / "data.bin"
    size = 9 * 4096 + 1234
    data = random_file(path, size)
    crc = fio.crc32(memoryview(data))
    dest = page_aligned(16 * 4096)
    cuts = [0, 1, 4097, 5000]  # then one big view at file offset 5000 ... then small ones
    big_at = 5000 % 4096 + 4096 + shift  # congruent to 5000 when shift == 0
    big = dest[big_at:big_at + 6 * 4096]
    small = np.zeros(size, np.uint8)
    views = [memoryview(small[a:b]) for a, b in zip(cuts, cuts[1:])]
    views.append(memoryview(big))
    rest = size - 5000 - big.size
    views += [memoryview(small[-rest:-rest + 3]), memoryview(small[-rest + 3:])]
    plans = []
    monkeypatch.setattr(dr, "plan", lambda v, s, *a, orig=dr.plan: plans.append(orig(v, s, *a))
                        or list(plans[-1]))  # read_direct consumes the list it gets
    assert in_fresh_thread(lambda: dr.read_direct(path, views, size, crc)) is True
    got = np.concatenate([np.frombuffer(v, np.uint8) for v in views])
    assert np.array_equal(got, data)
    in_place = sum(hi - lo for lo, hi, t in plans[0] if t is not None)
    assert (in_place > 0) == (shift == 0)


@pytest.mark.timeout(60)
def test_file_shorter_than_listed_ends_early(direct_dir):
    path = direct_dir / "short.bin"
    data = random_file(path, 3 * 4096 + 100)
    out = np.zeros(data.size + 5000, np.uint8)
    with pytest.raises(CorruptSnapshotError, match="short.bin ended early"):
        in_fresh_thread(lambda: dr.read_direct(path, [memoryview(out)], out.size, 0))


@pytest.mark.timeout(60)
def test_direct_checksum_mismatch(direct_dir):
    path = direct_dir / "bad.bin"
    data = random_file(path, 2 * 4096 + 7)
    out = np.zeros_like(data)
    wrong = fio.crc32(memoryview(data)) ^ 1
    with pytest.raises(CorruptSnapshotError, match="bad.bin fails its checksum"):
        fio.read_verified(path, [memoryview(out)], data.size, wrong, direct=True)


@pytest.mark.timeout(60)
def test_no_o_direct_falls_back_to_plain_reads(direct_dir, monkeypatch, spy):
    path = direct_dir / "data.bin"
    data = random_file(path, 4 * 4096 + 99)

    def refuse(fd, cmd, arg=0):
        if cmd == dr.fcntl.F_SETFL:
            raise OSError(errno.EINVAL, "O_DIRECT not supported")
        return orig(fd, cmd, arg)
    orig = dr.fcntl.fcntl
    monkeypatch.setattr(dr.fcntl, "fcntl", refuse)
    out = np.zeros_like(data)
    fio.read_verified(path, [memoryview(out)], data.size, fio.crc32(memoryview(data)))
    assert spy == [False]
    assert np.array_equal(out, data)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["argument", "environment"])
def test_direct_reads_can_be_turned_off(direct_dir, monkeypatch, spy, how):
    src = frames_buffer()
    src.dumps(direct_dir / "store")
    evict(segment_files(direct_dir / "store"))
    dst = ReplayBuffer(300, FRAMES, sampler="prioritized", seed=7, segment_bytes=1 << 20)
    if how == "environment":
        monkeypatch.setenv("RLA_REPLAY_DIRECT_IO", "0")
        dst.loads(direct_dir / "store")
    else:
        dst.loads(direct_dir / "store", direct_reads=False)
    assert spy == []
    assert_same_state(dst, src)


def test_direct_reads_argument_wins_over_the_environment(direct_dir, monkeypatch, spy):
    src = frames_buffer()
    src.dumps(direct_dir / "store")
    evict(segment_files(direct_dir / "store"))
    monkeypatch.setenv("RLA_REPLAY_DIRECT_IO", "0")
    dst = ReplayBuffer(300, FRAMES, sampler="prioritized", seed=7, segment_bytes=1 << 20)
    dst.loads(direct_dir / "store", direct_reads=True)
    assert spy.count(True) >= len(segment_files(direct_dir / "store"))
    assert_same_state(dst, src)


# ----------------------------------------------------------------- the format 2 layout
@pytest.mark.parametrize("items", [[21168, 4, 1], [3, 70000, 8, 131072], [4096, 12], [1, 1]])
@pytest.mark.parametrize("start", [0, 1, 97, 4095, 123457])
def test_field_offsets_line_up_large_chunks(items, start):
    n = 50
    offsets, size = segment_layout.field_offsets(items, start, n)
    pos = 0
    for item, off in zip(items, offsets):
        assert pos <= off < pos + fmt.ALIGN_TO  # padding only, less than a page
        if n * item >= fmt.ALIGN_MIN_BYTES:
            assert (off - start * item) % fmt.ALIGN_TO == 0  # congruent to its destination
        else:
            assert off == pos  # small chunks are not padded
        pos = off + n * item
    assert size == pos


def test_segment_spans_refuse_bad_offsets(tmp_path):
    schema = Schema.from_spec({"a": ((100,), "uint8"), "b": ((), "float32")})
    fields = shard_io.segment_fields(schema)
    n = 10
    sizes = [n * f.item_bytes for f in fields]
    good = {"start": 0, "end": n, "bytes": sum(sizes) + 96, "file": "x.seg"}
    base = {f.name: f.item_bytes for f in fields}
    assert base  # the schema has meta fields too: build offsets for every field
    offs, total = [], 0
    for size in sizes:
        offs.append(total)
        total += size
    assert segment_layout.segment_spans(dict(good, bytes=total), fields, tmp_path / "x.seg") == offs
    padded = [offs[0]] + [o + 96 for o in offs[1:]]
    assert segment_layout.segment_spans(dict(good, offsets=padded), fields, tmp_path) == padded
    for bad in ([o + 5000 for o in offs], offs[:-1], [offs[0] + 1] + offs[1:],
                [str(o) for o in offs], "0"):
        with pytest.raises(CorruptSnapshotError, match="x.seg (does not match the schema|lists bad chunk offsets)"):
            segment_layout.segment_spans(dict(good, offsets=bad), fields, tmp_path / "x.seg")


@pytest.mark.timeout(60)
def test_padded_segments_verify_and_reshard(tmp_path):
    """Format 2 padding is read through the listed offsets by every reader: verify, the
    meta-field reads of resharding, and the resharded payloads."""
    from RLA.replay_buffer.snapshot import inspect as snap_inspect
    src = frames_buffer()
    src.dumps(tmp_path / "store")
    import json
    shard = json.loads(next((tmp_path / "store").glob("snap-*/rank-00000.json")).read_text())
    assert any(seg.get("offsets") for seg in shard["segments"])  # the layout is padded
    assert snap_inspect.verify(tmp_path / "store")["files"] > len(shard["segments"])
    parts = [ReplayBuffer(300, FRAMES, sampler="prioritized", seed=r) for r in range(2)]
    for r, part in enumerate(parts):
        part.loads(tmp_path / "store", rank=r, world_size=2)

    def rows(buf):
        g = buf.get(np.arange(len(buf)))
        return sorted((int(e), int(s), f.tobytes(), float(w)) for e, s, f, w in
                      zip(g["episode_id"], g["step"], g["frame"], g["reward"]))
    assert rows(parts[0]) + rows(parts[1]) != [] and \
        sorted(rows(parts[0]) + rows(parts[1])) == rows(src)


@pytest.mark.timeout(60)
def test_memmap_storage_is_never_a_dma_target(direct_dir, spy):
    """A memmap storage's arrays are a mapped file: O_DIRECT fills the scratch buffer and the
    bytes are copied, never read into the mapping in place."""
    src = frames_buffer()
    src.dumps(direct_dir / "store")
    evict(segment_files(direct_dir / "store"))
    dst = ReplayBuffer(300, FRAMES, sampler="prioritized", seed=7, segment_bytes=1 << 20,
                       storage="memmap", storage_options={"directory": str(direct_dir / "mm")})
    dst.loads(direct_dir / "store")
    assert True in spy and spy.in_place == 0
    assert_same_state(dst, src)
    dst.close()


@pytest.mark.timeout(60)
def test_scratch_buffers_are_pooled_across_reads(direct_dir):
    """A read borrows a pre-faulted scratch buffer and gives it back for the next one."""
    path = direct_dir / "data.bin"
    data = random_file(path, 3 * 4096 + 5)
    out = np.zeros_like(data)
    crc = fio.crc32(memoryview(data))
    assert dr.read_direct(path, [memoryview(out)], data.size, crc)
    first = dr._pool[-1]
    evict([path])
    assert dr.read_direct(path, [memoryview(out)], data.size, crc)
    assert dr._pool[-1] is first and np.array_equal(out, data)


def thp_eligible(arr: np.ndarray):
    """``THPeligible`` of the mapping holding ``arr`` (None when smaps does not say)."""
    addr = arr.ctypes.data
    lines = Path("/proc/self/smaps").read_text().splitlines()
    inside = False
    for line in lines:
        head = line.split()[0] if line else ""
        if "-" in head and all(c in "0123456789abcdef-" for c in head):
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= addr < hi
        elif inside and line.startswith("THPeligible:"):
            return line.split()[1] == "1"
    return None


@pytest.mark.timeout(60)
def test_ram_arrays_ask_for_huge_pages_by_default():
    mode = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not mode.exists() or "[never]" in mode.read_text():
        pytest.skip("no transparent huge pages on this kernel")
    default = ReplayBuffer(300, FRAMES, seed=0)
    small_pages = ReplayBuffer(300, FRAMES, seed=0, storage_options={"hugepages": False})
    for buf in (default, small_pages):
        buf.add({"frame": np.zeros((1, 3, 84, 84), np.uint8), "reward": np.zeros(1, np.float32),
                 "done": np.zeros(1, bool)})
    eligible = thp_eligible(default.storage.arrays["frame"])
    if eligible is None:
        pytest.skip("smaps has no THPeligible field")
    assert eligible is True
    assert thp_eligible(small_pages.storage.arrays["frame"]) is False
