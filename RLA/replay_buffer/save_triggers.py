"""Save paths that save every rank: periodic, requested, on a signal and on an exception.

A save of a sharded buffer is a collective: it publishes only when every rank writes its
shard. A request that reaches one rank (an HTTP handler on rank 0, ``SIGTERM`` delivered to
one worker, an exception raised on one rank) must therefore become a save on every rank.
:class:`SaveTriggers` does that with one tiny exchange per ``step()``: every rank sends what
it has seen, every rank receives the union, and all of them save the same snapshot
(``step-<step>``) together.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Tuple

import numpy as np

from RLA.errors import ReplayBufferError

log = logging.getLogger("RLA.replay_buffer")

PERIODIC, REQUESTED, SIGNALLED, FAILED = 1, 2, 4, 8
REASONS = {PERIODIC: "periodic", REQUESTED: "requested", SIGNALLED: "signal", FAILED: "exception"}
#: Touch this file in the store to ask every rank for a snapshot at the next step.
REQUEST_FILE = "SAVE_NOW"


def reasons(flags: int) -> List[str]:
    """The names of the save paths in ``flags``."""
    return [name for bit, name in REASONS.items() if flags & bit]


def encode(flags: int, step: int) -> np.ndarray:
    """What a rank sends: one entry per save path (0/1), then its step."""
    return np.array([(flags >> k) & 1 for k in range(len(REASONS))] + [step], dtype=np.int64)


def decode(values: np.ndarray) -> Tuple[int, int]:
    """(union of the flags, newest step) from the element-wise maximum over the ranks."""
    values = np.asarray(values, dtype=np.int64).reshape(-1)
    return sum(int(b > 0) << k for k, b in enumerate(values[:-1].tolist())), int(values[-1])


class TorchExchange:
    """The element-wise maximum over every rank, over a private gloo group (one
    ``all_reduce`` of a few integers)."""

    def __init__(self, timeout: float) -> None:
        import torch
        import torch.distributed as dist

        from RLA.replay_buffer.snapshot.commit import private_group

        self.torch, self.dist = torch, dist
        self.group = private_group(dist, timeout, "triggers")

    def __call__(self, values: np.ndarray) -> np.ndarray:
        tensor = self.torch.from_numpy(np.array(values, dtype=np.int64))
        self.dist.all_reduce(tensor, op=self.dist.ReduceOp.MAX, group=self.group)
        return tensor.numpy()


def _topology(buffer: Any) -> Tuple[int, int]:
    """(rank, world size) of the job: torch.distributed's when initialised, else the buffer's."""
    dist = sys.modules.get("torch.distributed")  # never import torch just to ask
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return int(getattr(buffer, "rank", 0)), int(getattr(buffer, "world_size", 1))


class SaveTriggers:
    """Save ``buffer`` into the store ``path`` on every rank, whichever rank asked.

    Example::

        with SaveTriggers(buf, "replay_store", every=10_000, keep_last=3) as saves:
            for step in range(total_steps):
                ...                                  # act, add, learn
                if saves.step(step):                 # periodic / requested / SIGTERM saves
                    break                            # a signal or a failed rank: stop here

    Every rank must build the triggers and call ``step()`` at the same points (like any
    collective). Snapshots are ``<path>/step-<step>``, the names the run integration and the
    resume logic use.

    Args:
        buffer: a ``ReplayBuffer`` or ``TrajectoryReplayBuffer`` (this rank's shard).
        path: the snapshot store, shared by every rank of a ``ReplayBuffer``.
        every: save every N steps (``step % every == 0``, step 0 excluded); None: never.
        keep_last: keep the newest N step snapshots.
        signals: signals that ask for a save and then a stop (handlers installed on
            ``__enter__`` in the main thread, the previous ones restored on exit).
        exit_on_signal: after the saving step, once the ``with`` block ends, re-deliver the
            signal to the previous handler (the process then ends as the sender asked).
        asynchronous: periodic and requested saves run in the background (``dumps_async``;
            signal and exception saves are always synchronous).
        check_every: exchange flags only every N steps (requests and signals wait for the
            next exchange; periodic saves still happen on their step).
        exchange: for jobs without ``torch.distributed``: takes this rank's int64 array and
            returns the element-wise maximum over every rank (e.g. mpi4py's
            ``comm.Allreduce(values, out, op=MPI.MAX)``).
        timeout: seconds a rank waits for the others in the exchange.
        options: more save options (``dedup``, ``durable``...).
    """

    def __init__(
        self,
        buffer: Any,
        path: Any,
        every: Optional[int] = None,
        keep_last: Optional[int] = None,
        signals: Iterable[int] = (signal.SIGTERM,),
        exit_on_signal: bool = True,
        asynchronous: bool = False,
        check_every: int = 1,
        exchange: Optional[Callable[[np.ndarray], np.ndarray]] = None,
        timeout: float = 600.0,
        **options: Any,
    ) -> None:
        for name, value in (("every", every), ("check_every", check_every)):
            if value is not None and int(value) < 1:
                raise ReplayBufferError(
                    f"{name} must be at least 1",
                    expected=">= 1",
                    found=str(value),
                    fix=f"pass a positive {name}",
                )
        self.buffer, self.path = buffer, Path(path)
        self.every, self.keep_last = every, keep_last
        self.signals = tuple(signals)
        self.exit_on_signal, self.asynchronous = exit_on_signal, asynchronous
        self.check_every, self.options = int(check_every), options
        self.rank, self.world_size = _topology(buffer)
        if exchange is None and self.world_size > 1:
            try:
                exchange = TorchExchange(timeout)
            except (ImportError, ValueError, RuntimeError) as exc:
                raise ReplayBufferError(
                    "SaveTriggers needs a way to reach the other ranks",
                    expected="an initialised torch.distributed process group, or exchange=",
                    found=f"world size {self.world_size} and {exc}",
                    fix="init_process_group() first, or pass exchange= (the element-wise "
                    "maximum of an int64 array over the ranks)",
                ) from exc
        self._exchange = exchange
        self._requested = threading.Event()
        self._signalled: Optional[int] = None  # a signal not yet saved for
        self._received: Optional[int] = None  # the signal to re-deliver on exit
        self._previous: Dict[int, Any] = {}
        self._pending: Any = None
        self._finished = False
        self.last_step: Optional[int] = None
        self.last_snapshot: Optional[Path] = None
        self.stop_reason: Optional[str] = None

    # ------------------------------------------------------------------ requests
    def request(self) -> None:
        """Ask for a snapshot at the next exchange (any rank, any thread)."""
        self._requested.set()

    def _on_signal(self, signum: int, frame: Any) -> None:
        self._signalled = self._received = signum  # only flags: the save happens in step()

    def _periodic(self, step: Optional[int]) -> bool:
        every = self.every
        return step is not None and every is not None and every != 0 and step > 0 and step % int(every) == 0

    def _local_flags(self, step: Optional[int]) -> int:
        flags = PERIODIC if self._periodic(step) else 0
        if self._requested.is_set() or (self.path / REQUEST_FILE).exists():
            flags |= REQUESTED
        if self._signalled is not None:
            flags |= SIGNALLED
        return flags

    def _union(self, flags: int, step: int) -> Tuple[int, int]:
        """Every rank's flags, and the newest step any rank reached."""
        if self._exchange is None:
            return flags, step
        return decode(self._exchange(encode(flags, step)))

    # ------------------------------------------------------------------ the collective
    def step(self, step: int) -> bool:
        """Exchange flags with every rank and save if any rank asked; True means stop now
        (a signal arrived, or another rank failed and every rank has saved)."""
        if self._finished:
            raise ReplayBufferError(
                "SaveTriggers.step() after the job stopped",
                expected="no more steps after step() returned True for a failed rank",
                found=f"step {step}",
                fix="break out of the training loop when step() is True",
            )
        step = int(step)
        self.last_step = step
        if self.check_every > 1 and step % self.check_every and not self._periodic(step):
            return False  # periodic saves fall on the same steps everywhere: no exchange
        flags, newest = self._union(self._local_flags(step), step)
        if flags:
            self._save(newest, flags)
        if flags & FAILED:
            self._finished = True
            self.stop_reason = "another rank failed"
            return True
        if flags & SIGNALLED:
            self.stop_reason = "signal"
            return True
        return False

    def _save(self, step: int, flags: int) -> None:
        from RLA.replay_buffer.run_snapshots import save_run_buffer

        urgent = bool(flags & (SIGNALLED | FAILED))
        self._drain()  # one save at a time, and never lose the previous one
        why = ", ".join(reasons(flags))
        result = save_run_buffer(
            self.buffer,
            self.path,
            step,
            keep_last=self.keep_last,
            asynchronous=self.asynchronous and not urgent,
            **self.options,
        )
        if flags & SIGNALLED:
            self._signalled = None
        if flags & REQUESTED:
            self._requested.clear()
            try:
                (self.path / REQUEST_FILE).unlink()
            except FileNotFoundError:
                pass  # another rank of this host removed it first
        if isinstance(result, Path):
            self.last_snapshot = result
        else:
            self._pending = result
        if self.rank == 0:
            log.info("replay snapshot step-%d (%s) saved by all %d rank(s)", step, why, self.world_size)

    # ------------------------------------------------------------------ lifetime
    def __enter__(self) -> "SaveTriggers":
        if threading.current_thread() is threading.main_thread():
            for sig in self.signals:
                self._previous[sig] = signal.signal(sig, self._on_signal)
        elif self.signals:
            log.warning("SaveTriggers outside the main thread: no signal handlers installed")
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        try:
            if not self._finished:
                self._finished = True
                failed = exc_type is not None and not issubclass(exc_type, GeneratorExit)
                # every rank exchanges once more: a failure here reaches the others, which
                # are in step() (or here); all of them save the newest step any rank reached
                last = -1 if self.last_step is None else self.last_step
                flags, newest = self._union(self._local_flags(None) | (FAILED if failed else 0), last)
                if flags & (REQUESTED | SIGNALLED | FAILED) and newest >= 0:
                    self._save(newest, flags & ~PERIODIC)
            self._drain()
        except Exception:  # noqa: BLE001 - never hide the user's own exception
            if exc_type is None:
                raise
            log.exception("the replay snapshot on the failure path failed")
        finally:
            self._restore_signals()
        return False

    def _drain(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.last_snapshot = pending.wait()

    def _restore_signals(self) -> None:
        previous, self._previous = self._previous, {}
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if self._received is not None and self.exit_on_signal and previous:
            signum, self._received = self._received, None
            os.kill(os.getpid(), signum)  # the previous handler (or the default) runs now

    def close(self) -> None:
        """Wait for a background save and restore the signal handlers (idempotent)."""
        self._drain()
        self._restore_signals()
