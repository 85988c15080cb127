"""SLURM through submitit: a checkpointable job whose requeued run resumes the same RLA run.

Usage::

    import submitit
    from RLA.integrations.submitit_job import RLAJob

    def train(ctx):                                   # ctx: JobContext
        net, optim, buffer = make_net(), make_optim(), ReplayBuffer(50_000, seed=0)
        start = ctx.restore(models={"net": net, "optim": optim}, buffer=buffer)
        for step in ctx.steps(start, 100_000):        # a preemption is handled between steps
            ...                                        # act, buffer.add(...), update, logger...

    job = RLAJob(train, task="dqn", rla_config="rla_config.yaml", hyper_params={"lr": 5e-4, "seed": 0},
                 tracked_keys=["lr", "seed"])
    submitit.AutoExecutor(folder="slurm_logs").submit(job)

On a timeout or a preemption, submitit calls :meth:`RLAJob.checkpoint` from its signal
handler. :meth:`JobContext.steps` holds that signal while a step runs, so the handler runs
between two steps: it saves RLA's state at the last completed step (the registered models'
state dicts, ``ctx.variables``, the RNG states and the replay buffer snapshot) and requeues
the job; the run is marked ``killed`` ("preempted") meanwhile. The requeued job continues
the same run (:mod:`RLA.integrations.same_run`): logs cut to that step, status ``running``,
one more ``restarts`` entry, and ``ctx.restore`` loads everything back and returns the next
step. submitit is imported with this module (install it with ``pip install -e ".[submitit]"``).
"""

from __future__ import annotations

import inspect
import os
import signal
import threading
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from RLA.errors import BackendNotInstalledError
from RLA.integrations import same_run
from RLA.logger.time_step import time_step_holder
from RLA.manager import run_info as ri

try:
    from submitit.helpers import Checkpointable, DelayedSubmission
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise BackendNotInstalledError(
        "The submitit integration needs submitit",
        expected="submitit importable",
        found=str(exc),
        fix='pip install -e ".[submitit]"',
    ) from exc

#: Signals submitit may use for "timeout or preemption" (SUBMITIT_PREEMPT_SIGNAL picks one).
PREEMPT_SIGNALS = ("SIGUSR1", "SIGUSR2")


def _preempt_signals() -> List[int]:
    names = list(PREEMPT_SIGNALS)
    chosen = os.environ.get("SUBMITIT_PREEMPT_SIGNAL")
    if chosen:
        names.append("SIG" + chosen.upper().removeprefix("SIG"))
    return sorted({getattr(signal, name) for name in names if hasattr(signal, name)})


class HeldSignals:
    """Hold the Python handlers of some signals while a step runs; run them between steps.

    A signal that arrives while held is remembered and its handler runs at :meth:`release`,
    so the handler sees the state of a completed step. Only the main thread can do this; in
    another thread (or for a signal without a Python handler) nothing is held.
    """

    def __init__(self, signums: Sequence[int]) -> None:
        self._originals: Dict[int, Callable[..., Any]] = {}
        self._pending: List[int] = []
        self._holding = False
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in signums:
            handler = signal.getsignal(signum)
            if callable(handler):
                self._originals[signum] = handler
                signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self._holding:
            self._pending.append(signum)
        else:
            self._originals[signum](signum, frame)

    def hold(self) -> None:
        """From now on, signals wait for :meth:`release`."""
        self._holding = True

    def release(self) -> None:
        """Run the handlers of the signals that arrived while held (may raise SystemExit)."""
        self._holding = False
        pending, self._pending = self._pending, []
        for signum in dict.fromkeys(pending):
            self._originals[signum](signum, None)

    def close(self) -> None:
        """Put the original handlers back (idempotent)."""
        self._holding = False
        for signum, handler in self._originals.items():
            signal.signal(signum, handler)
        self._originals = {}


class JobContext:
    """What the training function of an :class:`RLAJob` registers and iterates with."""

    def __init__(self, job: "RLAJob", manager: Any) -> None:
        self.job = job
        self.manager = manager
        self.models: Dict[str, Any] = {}
        self.buffer: Any = None
        #: Values saved with every checkpoint and restored into this dict (types kept).
        self.variables: Dict[str, Any] = {}
        self.done_step: Optional[int] = None  # the last step completed in this process
        self.preempted = False

    def restore(
        self,
        models: Optional[Mapping[str, Any]] = None,
        buffer: Any = None,
        variables: Optional[Mapping[str, Any]] = None,
    ) -> int:
        """Register what a preemption saves; after a requeue, load it back.

        Args:
            models: objects with ``state_dict()`` / ``load_state_dict()`` (torch modules,
                optimizers...).
            buffer: a replay buffer (``ReplayBuffer`` / ``TrajectoryReplayBuffer``).
            variables: initial values of :attr:`variables`.

        Returns:
            The first step to run: 0 on a fresh job, the saved step + 1 after a requeue.
        """
        self.models, self.buffer = dict(models or {}), buffer
        self.variables.update(variables or {})
        if self.job.step is None:
            return 0
        step, states = self.manager.load_checkpoint(self.job.step, restore_rng=True)
        for key, model in self.models.items():
            model.load_state_dict(states[key])
        self.variables.update(self.manager.loaded_variables)
        if buffer is not None:
            self.manager.load_replay_buffer(buffer, step=step)
        return step + 1

    def steps(self, start: int, stop: int) -> Iterator[int]:
        """``range(start, stop)`` with the time-step set, and preemption handled between steps."""
        held = HeldSignals(_preempt_signals())
        try:
            for step in range(start, stop):
                held.hold()
                time_step_holder.set_time(step)
                yield step
                self.done_step = step
                held.release()
        finally:
            held.close()

    def save(self) -> int:
        """Save the checkpoint (and replay snapshot) of the last completed step; returns it."""
        step = int(self.done_step)  # type: ignore[arg-type]
        time_step_holder.set_time(step)
        if self.buffer is not None:
            self.manager.save_replay_buffer(self.buffer, step=step, keep_last=2)
        states = {key: model.state_dict() for key, model in self.models.items()}
        self.manager.save_checkpoint(states, related_variable=self.variables)
        return step


class RLAJob(Checkpointable):
    """A submitit job running ``train_fn(ctx)`` as one RLA run, requeued as the same run.

    Args:
        train_fn: the training function; it gets a :class:`JobContext`.
        task: the RLA task.
        rla_config: ``rla_config.yaml`` (a path, resolved here) or a dict.
        data_root: the database (default: the config's ``DATA_ROOT``).
        hyper_params: the run's hyper-parameters.
        tracked_keys: the hyper-parameters naming the run.
        code_root: folder relative config paths refer to.
    """

    def __init__(
        self,
        train_fn: Callable[[JobContext], Any],
        *,
        task: str,
        rla_config: Union[str, Path, Dict[str, Any]],
        data_root: Union[str, Path, None] = None,
        hyper_params: Optional[Mapping[str, Any]] = None,
        tracked_keys: Sequence[str] = (),
        code_root: Union[str, Path, None] = None,
    ) -> None:

        def absolute(p: Any) -> Any:
            return str(Path(p).expanduser().resolve()) if isinstance(p, (str, Path)) else p

        source = inspect.getsourcefile(train_fn) if inspect.isfunction(train_fn) else None
        self.train_fn = train_fn
        self.settings: Dict[str, Any] = {
            "task": task,
            "rla_config": absolute(rla_config),
            "data_root": absolute(data_root),
            "code_root": absolute(code_root),
            "run_file": [str(Path(source).resolve())] if source else [],
        }
        self.hyper_params = dict(hyper_params or {})
        self.tracked_keys = list(tracked_keys)
        #: The run (``<task>/<date>/<name>``) and the step a requeued job continues at.
        self.run: Optional[str] = None
        self.step: Optional[int] = None
        self._ctx: Optional[JobContext] = None

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_ctx"] = None  # models and buffers are saved by RLA, never pickled
        return state

    def _open_run(self) -> Any:
        from RLA.easy_log.tester import exp_manager as manager

        s = self.settings
        manager.configure(
            s["task"],
            rla_config=s["rla_config"],
            data_root=s["data_root"],
            run_file=s["run_file"],
            code_root=s["code_root"],
        )
        manager.set_hyper_param(**self.hyper_params)
        manager.clear_record_param()
        manager.add_record_param(self.tracked_keys)
        facts = {"submitit": _job_facts()}
        if self.run is None:
            manager.log_files_gen()
            manager.print_args()
            manager.update_run_info(**facts)
            self.run = manager.layout.relative  # type: ignore[union-attr]
        else:
            layout = same_run.layout_of(manager.data_root, self.run)  # type: ignore[arg-type]
            same_run.continue_run(manager, layout, self.step, "requeued by submitit", **facts)
        return manager

    def __call__(self) -> Any:
        manager = self._open_run()
        self._ctx = ctx = JobContext(self, manager)
        try:
            result = self.train_fn(ctx)
        except SystemExit as exc:
            error = (
                f"preempted or timed out: requeued by submitit at step {self.step}"
                if ctx.preempted
                else f"SystemExit: {exc.code}"
            )
            _end(manager, ri.KILLED, exc.code if isinstance(exc.code, int) else 1, error)
            raise
        except KeyboardInterrupt:
            _end(manager, ri.KILLED, 130, "KeyboardInterrupt")
            raise
        except BaseException as exc:
            _end(manager, ri.CRASHED, 1, f"{type(exc).__name__}: {exc}")
            raise
        _end(manager, ri.FINISHED)
        return result

    def checkpoint(self, *args: Any, **kwargs: Any) -> DelayedSubmission:
        """Called by submitit on a timeout or a preemption: save RLA's state, requeue this job."""
        ctx = self._ctx
        if ctx is not None and ctx.done_step is not None:
            self.step = ctx.save()
        if ctx is not None:
            ctx.preempted = True
        return DelayedSubmission(self, *args, **kwargs)


def _end(manager: Any, status: str, exit_code: Optional[int] = None, error: Optional[str] = None) -> None:
    if manager.layout is not None and manager.run_info.get("status") == ri.RUNNING:
        manager.finish(status=status, exit_code=exit_code, error=error)


def _job_facts() -> Dict[str, Any]:
    """submitit's job id and rank when running under submitit (empty otherwise)."""
    try:
        import submitit

        env = submitit.JobEnvironment()
        return {"job_id": env.job_id, "global_rank": env.global_rank, "hostname": env.hostname}
    except RuntimeError:
        return {}


__all__ = ["RLAJob", "JobContext", "HeldSignals", "PREEMPT_SIGNALS"]
