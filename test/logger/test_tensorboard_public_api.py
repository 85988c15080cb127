"""The ``tensorboard`` format on tensorboardX's public API: same files and tags, flush waits, no hang.

Every file is read back with TensorBoard's own readers (``EventAccumulator``,
``EventFileLoader``) and compared with what a plain ``SummaryWriter.add_scalar`` writes.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from RLA.logger.core import Logger
from RLA.logger.time_step import TimeStepHolder

pytestmark = pytest.mark.timeout(60)
tensorboardX = pytest.importorskip("tensorboardX")
event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402

FORMATS = Path(__file__).resolve().parents[2] / "RLA" / "logger" / "formats"
#: Keys whose tags tensorboardX cleans (spaces, brackets, a leading slash) and plain ones.
KEYS = ["perf/reward", "loss value (avg)", "/leading/slash", "ok.key-1", "per cent %"]


def scalars(tb_dir: Path) -> Dict[str, List[Tuple[int, float]]]:
    acc = event_accumulator.EventAccumulator(str(tb_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def rows(logger: Logger, holder: TimeStepHolder, steps: int) -> None:
    for step in range(steps):
        holder.set_time(step * 10)
        for i, key in enumerate(KEYS):
            logger.logkv(key, float(step * 100 + i))
        logger.dumpkvs()


def reference(tmp_path: Path, steps: int) -> Dict[str, List[Tuple[int, float]]]:
    """What tensorboardX's own add_scalar writes for the same rows."""
    ref = tmp_path / "reference"
    with tensorboardX.SummaryWriter(logdir=str(ref)) as writer:
        for step in range(steps):
            for i, key in enumerate(KEYS):
                writer.add_scalar(key, float(step * 100 + i), step * 10)
    return scalars(ref)


def test_tags_and_values_are_those_of_add_scalar(tmp_path: Path) -> None:
    holder = TimeStepHolder()
    with Logger(tmp_path / "run", ["tensorboard"], time_step=holder) as logger:
        rows(logger, holder, 4)
    got = scalars(tmp_path / "run" / "tb")
    assert got == reference(tmp_path, 4)
    assert "loss_value__avg_" in got and "leading/slash" in got  # tensorboardX's tag cleaning


def test_one_event_file_named_as_tensorboardx_names_it(tmp_path: Path) -> None:
    holder = TimeStepHolder()
    with Logger(tmp_path / "run", ["tensorboard"], time_step=holder) as logger:
        rows(logger, holder, 2)
        logger.get_tbx_writer().add_histogram("weights", [0.1, 0.2, 0.3], 5)
    files = sorted((tmp_path / "run" / "tb").iterdir())
    assert len(files) == 1
    parts = files[0].name.split(".")
    assert parts[:3] == ["events", "out", "tfevents"] and parts[3].isdigit() and len(parts) > 4
    acc = event_accumulator.EventAccumulator(str(tmp_path / "run" / "tb"))
    acc.Reload()
    assert "weights" in acc.Tags()["histograms"] and "perf/reward" in acc.Tags()["scalars"]


def test_flush_waits_for_the_events_queued_before_it(tmp_path: Path) -> None:
    """The writer thread is held back until flush() starts; flush returns only once it wrote all."""
    holder = TimeStepHolder()
    with Logger(tmp_path / "run", ["tensorboard"], time_step=holder) as logger:
        fmt: Any = logger.writers[0]
        sink = fmt._sink
        gate = threading.Event()
        written: List[int] = []
        real_write, real_barrier = sink.write, sink.barrier

        def held_write(data: bytes) -> None:
            assert gate.wait(30), "flush() never started"
            real_write(data)
            written.append(len(data))

        def opening_barrier() -> Any:
            result = real_barrier()
            gate.set()
            return result

        sink.write, sink.barrier = held_write, opening_barrier
        rows(logger, holder, 6)  # tensorboardX's queue holds 10 events: the held thread keeps one
        logger.flush()
        on_disk = scalars(tmp_path / "run" / "tb")  # before close: what flush() guaranteed
        assert [step for step, _ in on_disk["perf/reward"]] == [s * 10 for s in range(6)]


def test_flush_markers_never_reach_the_file(tmp_path: Path) -> None:
    holder = TimeStepHolder()
    with Logger(tmp_path / "run", ["tensorboard"], time_step=holder) as logger:
        for _ in range(3):
            rows(logger, holder, 1)
            logger.flush()
    (path,) = (tmp_path / "run" / "tb").iterdir()
    events = list(EventFileLoader(str(path)).Load())
    assert [e.file_version for e in events if e.file_version] == ["brain.Event:2"]
    assert sum(1 for e in events if e.summary.value) == 3


def test_a_closed_sink_releases_a_waiting_flush(tmp_path: Path) -> None:
    from RLA.logger.formats.tb_sink import EventSink

    sink = EventSink(str(tmp_path / "events.out.tfevents.1.host"))
    _, arrived = sink.barrier()
    sink.close()
    assert arrived.is_set()
    sink.close()  # idempotent


def test_only_public_tensorboardx_names_are_used() -> None:
    """No ``_private`` attribute of a tensorboardX object, no ``_private`` import from it."""
    private = []
    for path in (FORMATS / "tensorboard.py", FORMATS / "tb_sink.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tensorboardX"):
                private += [f"{path.name}: {a.name}" for a in node.names if a.name.startswith("_")]
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                    private.append(f"{path.name}:{node.lineno}: .{node.attr}")
            if isinstance(node, ast.Constant) and node.value in ("_get_file_writer", "_event_queue"):
                private.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert private == []
