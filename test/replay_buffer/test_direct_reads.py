"""Cold snapshot files are read with O_DIRECT through a reused per-thread buffer: exact
restores, corrupt or short files raise CorruptSnapshotError naming the file, the live buffer
is left untouched, and cached files / file systems without O_DIRECT take plain reads."""
from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from RLA.errors import CorruptSnapshotError
from RLA.replay_buffer.snapshot import format as fmt

from helpers import assert_same_state, fill, make


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
    """Records what each ``_read_direct`` call returned (True: the file was read with it)."""
    calls = []
    orig = fmt._read_direct

    def wrapped(*args, **kwargs):
        result = orig(*args, **kwargs)
        calls.append(result)
        return result
    monkeypatch.setattr(fmt, "_read_direct", wrapped)
    monkeypatch.setattr(fmt, "DIRECT_READS", True)
    return calls


def big_buffer(seed: int = 0):
    # ~70-byte items, 16 KiB segments: every segment is above the O_DIRECT minimum
    buf = make(capacity=2048, sampler="prioritized", seed=seed, segment_bytes=16 << 10)
    fill(buf, 700, seed=seed + 1)
    return buf


def segment_files(store: Path):
    return sorted((store / "segments" / "r00000").iterdir())


@pytest.mark.timeout(60)
def test_cold_load_is_direct_and_exact(direct_dir, spy):
    src = big_buffer()
    src.dumps(direct_dir / "store")
    segs = segment_files(direct_dir / "store")
    assert len(segs) >= 4
    evict(segs)
    dst = make(capacity=2048, sampler="prioritized", seed=7, segment_bytes=16 << 10)
    dst.loads(direct_dir / "store")
    assert spy.count(True) >= len(segs)  # every segment went through O_DIRECT
    assert_same_state(dst, src)
    a, b = dst.sample(32), src.sample(32)
    assert np.array_equal(a[1], b[1]) and np.array_equal(a[0]["obs"], b[0]["obs"])
    assert np.asarray(a[2]).tobytes() == np.asarray(b[2]).tobytes()  # IS weights, to the bit


@pytest.mark.timeout(60)
def test_cached_files_take_plain_reads(direct_dir, spy):
    src = big_buffer()
    src.dumps(direct_dir / "store")
    for seg in segment_files(direct_dir / "store"):
        seg.read_bytes()  # cached
    dst = make(capacity=2048, sampler="prioritized", seed=7, segment_bytes=16 << 10)
    dst.loads(direct_dir / "store")
    assert spy and not any(spy)
    assert_same_state(dst, src)


@pytest.mark.timeout(60)
def test_cold_corrupt_segment_names_file_and_leaves_live_buffer(direct_dir, spy):
    src = big_buffer()
    src.dumps(direct_dir / "store")
    seg = segment_files(direct_dir / "store")[2]
    data = bytearray(seg.read_bytes())
    data[len(data) // 2] ^= 0x40
    seg.write_bytes(bytes(data))
    evict(segment_files(direct_dir / "store"))
    live, reference = big_buffer(seed=3), big_buffer(seed=3)
    with pytest.raises(CorruptSnapshotError, match=f"{seg.name}.*fails its checksum"):
        live.loads(direct_dir / "store")
    assert True in spy
    assert_same_state(live, reference)
    assert np.array_equal(live.sample(8)[1], reference.sample(8)[1])


def random_file(path: Path, nbytes: int, seed: int = 0) -> np.ndarray:
    data = np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8)
    data.tofile(path)
    evict([path])
    return data


def in_fresh_thread(fn):
    """Run ``fn`` in a new thread (so it gets a new per-thread O_DIRECT buffer)."""
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


@pytest.mark.timeout(60)
def test_blocks_and_views_of_any_size(direct_dir, monkeypatch):
    """Several buffer-sized blocks, a partial last block and views that straddle them."""
    monkeypatch.setattr(fmt, "DIRECT_BLOCK", 3 * 4096)
    path = direct_dir / "data.bin"
    data = random_file(path, 5 * 4096 + 1234)
    crc = fmt.crc32(memoryview(data))
    out = np.zeros_like(data)
    cuts = [0, 1, 4097, 9000, 12288, 20000, data.size]
    views = [memoryview(out[a:b]) for a, b in zip(cuts, cuts[1:])]
    assert in_fresh_thread(lambda: fmt._read_direct(path, views, data.size, crc)) is True
    assert np.array_equal(out, data)


@pytest.mark.timeout(60)
def test_file_shorter_than_listed_ends_early(direct_dir):
    path = direct_dir / "short.bin"
    data = random_file(path, 3 * 4096 + 100)
    out = np.zeros(data.size + 5000, np.uint8)
    with pytest.raises(CorruptSnapshotError, match="short.bin ended early"):
        in_fresh_thread(lambda: fmt._read_direct(path, [memoryview(out)], out.size, 0))


@pytest.mark.timeout(60)
def test_direct_checksum_mismatch(direct_dir):
    path = direct_dir / "bad.bin"
    data = random_file(path, 2 * 4096 + 7)
    out = np.zeros_like(data)
    wrong = fmt.crc32(memoryview(data)) ^ 1
    with pytest.raises(CorruptSnapshotError, match="bad.bin fails its checksum"):
        fmt.read_verified(path, [memoryview(out)], data.size, wrong, direct=True)


@pytest.mark.timeout(60)
def test_no_o_direct_falls_back_to_plain_reads(direct_dir, monkeypatch, spy):
    path = direct_dir / "data.bin"
    data = random_file(path, 4 * 4096 + 99)

    def refuse(fd, cmd, arg=0):
        if cmd == fmt.fcntl.F_SETFL:
            raise OSError(errno.EINVAL, "O_DIRECT not supported")
        return orig(fd, cmd, arg)
    orig = fmt.fcntl.fcntl
    monkeypatch.setattr(fmt.fcntl, "fcntl", refuse)
    out = np.zeros_like(data)
    fmt.read_verified(path, [memoryview(out)], data.size, fmt.crc32(memoryview(data)))
    assert spy == [False]
    assert np.array_equal(out, data)
