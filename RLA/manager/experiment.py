# size: the facade of the original Tester: ~70 public names kept on exp_manager, each a short delegation
"""ExperimentManager: one run at a time, composed of its run value, its services and a logger.

The manager checks the configuration (:mod:`RLA.manager.settings`), asks the
:class:`~RLA.manager.run.RunFactory` for a run (claim + ``run.json``), configures the logger
it was given, and tells the run's services (:mod:`RLA.manager.services`) when the run
starts, beats and finishes. Checkpoints, replay snapshots and the sync push are services too;
the manager's methods of the same names are one-line delegations to them.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from RLA.checkpoint import CheckpointSaver
from RLA.config import PASSWORD_ENV, RLAConfig
from RLA.errors import RunStateError
from RLA.layout import RunLayout
from RLA.logger.time_step import time_step_holder
from RLA.manager import original_names
from RLA.manager import run_info as ri
from RLA.manager import settings as st
from RLA.manager.backup_service import CodeBackupService
from RLA.manager.bookkeeping import BOOKKEEPING_KEYS
from RLA.manager.checkpointing import TIME_STEP_KEY, CheckpointService
from RLA.manager.host import host_ip
from RLA.manager.hyper_params import check_trackable, jsonable, recorded_and_bookkeeping, tracked_values
from RLA.manager.logger_api import LoggerAPI, default_logger
from RLA.manager.replaying import ReplayService
from RLA.manager.resume_state import add_custom_value, build_state, read_custom_data, write_state
from RLA.manager.run import Run, RunFactory, RunSpec
from RLA.manager.runner import Runner, announce
from RLA.manager.services import Hook, Lifecycle
from RLA.manager.syncing import SyncService
from RLA.redaction import RedactionPolicy


class ExperimentManager:
    """Create and manage one run at a time (the original's ``Tester``).

    Typical use::

        exp_manager.set_hyper_param(env_id="Hopper-v4", lr=1e-3, seed=0)
        exp_manager.add_record_param(["env_id", "seed"])
        exp_manager.configure("demo_task", rla_config="rla_config.yaml", data_root="./data")
        exp_manager.log_files_gen()
        exp_manager.print_args()

    Args:
        logger: the logger API the manager writes through (default: the module ``RLA.logger``).
    """

    def __init__(self, logger: Optional[LoggerAPI] = None) -> None:
        self.logger: LoggerAPI = logger if logger is not None else default_logger()
        self.hyper_param: Dict[str, Any] = {}
        self.hyper_param_record: List[str] = []  # tracked keys, in the order added
        #: Keys of ``hyper_param`` recorded in run.json's ``bookkeeping`` (see :mod:`RLA.manager.bookkeeping`).
        self.bookkeeping_keys: Tuple[str, ...] = BOOKKEEPING_KEYS
        self.custom_data: Dict[str, Any] = {}
        self.config: Optional[RLAConfig] = None
        self.task_table_name: Optional[str] = None
        self.data_root: Optional[Path] = None
        self.is_master_node = False
        #: The time-step training ends at, when known (``set_total_steps``).
        self.total_steps: Optional[int] = None
        #: The new run's start time (its index); tests inject a fixed one.
        self.clock: Callable[[], _dt.datetime] = _dt.datetime.now
        self.lifecycle = Lifecycle()
        self._runner = Runner(self.logger, self.lifecycle, self._open_logs, self._save_state_of)
        self._redaction: Optional[RedactionPolicy] = None
        self._time_records: Dict[str, float] = {}
        self._log_callback: Optional[Callable[..., Any]] = None
        self._sync: Optional[SyncService] = None
        self._checkpoints = CheckpointService(self._flush_logs, self._record_checkpoint)
        self._replay = ReplayService()

    # ------------------------------------------------------------------ configuration
    def configure(
        self,
        task_table_name: Optional[str] = None,
        rla_config: st.ConfigSource = None,
        data_root: Union[str, Path, None] = None,
        ignore_file_path: Optional[str] = None,
        run_file: Union[str, Sequence[str], None] = None,
        is_master_node: bool = False,
        code_root: Union[str, Path, None] = None,
        *,
        task_name: Optional[str] = None,
        private_config_path: Union[str, Path, Dict[str, Any], None] = None,
        log_root: Union[str, Path, None] = None,
        log_callback_fn: Optional[Callable] = None,
    ) -> "ExperimentManager":
        """Set the table (task), the database config and the data root of the next run.

        Args:
            task_table_name: the task ("table") the run belongs to (alias ``task_name``).
            rla_config: path of ``rla_config.yaml`` or an equivalent dict (alias
                ``private_config_path``).
            data_root: the database root (alias ``log_root``); relative to the current dir.
            ignore_file_path: a gitignore-style file for the code backup (overrides the
                config's ``ignore_code_paths``).
            run_file: script(s) copied into the code backup (default: the main script).
            is_master_node: this process runs on the main node (no sync push).
            code_root: folder relative config paths refer to (default: the config's folder,
                or the current directory for a dict).
            log_callback_fn: called with a copy of every dumped row (e.g. to forward it).

        Raises:
            ConfigError: a missing or invalid argument or config file.
        """
        task = st.check_task(task_table_name if task_table_name is not None else task_name)
        config = st.load_checked_config(
            rla_config if rla_config is not None else private_config_path, code_root
        )
        root = st.resolve_data_root(data_root if data_root is not None else log_root, config)
        if self._active():
            self.finish()
        self.config, self.task_table_name, self.data_root = config, task, root
        self.is_master_node = bool(is_master_node)
        self._log_callback = log_callback_fn
        self._runner.forget()
        # A new configuration starts with default saving (DL_FRAMEWORK's backend): new_saver's
        # options of the previous one no longer apply; a second log_files_gen() keeps them.
        self._checkpoints.reset(config.dl_framework)
        self._sync = SyncService(
            config.remote,
            config.send_log_file,
            config.project_root,
            self.is_master_node,
            self._say,
            self.warn,
        )
        backup = CodeBackupService.from_config(
            config, ignore_file_path, st.resolve_run_files(run_file), self.warn
        )
        self.lifecycle.use([backup, self._sync])
        return self

    def get_task_table_name(self) -> Optional[str]:
        return self.task_table_name

    @property
    def task_name(self) -> Optional[str]:
        return self.task_table_name

    @property
    def private_config(self) -> Dict[str, Any]:
        """The configuration as a dict, without secrets."""
        return self.config.public_dict() if self.config else {}

    # ---------------------------------------------------------------- hyper-parameters
    def set_hyper_param(self, **argkw: Any) -> None:
        """Replace the hyper-parameters of the next run."""
        self.hyper_param = dict(argkw)
        if self._redaction is not None:
            self._redaction.learn(self.hyper_param)

    def update_hyper_param(self, k: str, v: Any) -> None:
        """Set one hyper-parameter (also after the run was created: run.json follows)."""
        self.hyper_param[k] = v
        if self._redaction is not None:
            self._redaction.learn(self.hyper_param)
        if self._active():
            self.update_run_info(hyper_params=self.recorded_hyper_params(), bookkeeping=self.bookkeeping())
            self.save_state()

    def add_record_param(self, keys: Union[str, Sequence[str]]) -> None:
        """Track hyper-parameters in the run's name (dotted keys reach nested dicts).

        Raises:
            HyperParameterError: a key is not a hyper-parameter.
        """
        for key in [keys] if isinstance(keys, str) else keys:
            check_trackable(self.hyper_param, [key])
            if key not in self.hyper_param_record:
                self.hyper_param_record.append(key)

    def recorded_hyper_params(self) -> Dict[str, Any]:
        """The hyper-parameters the run records (JSON-able): without the bookkeeping keys."""
        return recorded_and_bookkeeping(self.hyper_param, self.hyper_param_record, self.bookkeeping_keys)[0]

    def bookkeeping(self) -> Dict[str, Any]:
        """The bookkeeping values set with the hyper-parameters (run.json's ``bookkeeping``)."""
        return recorded_and_bookkeeping(self.hyper_param, self.hyper_param_record, self.bookkeeping_keys)[1]

    def clear_record_param(self) -> None:
        """Forget the tracked keys."""
        self.hyper_param_record = []

    def _tracked_values(self) -> List[Tuple[str, Any]]:
        return tracked_values(self.hyper_param, self.hyper_param_record)

    def _spec(self, tracked: Sequence[Tuple[str, Any]] = ()) -> RunSpec:
        assert self.config is not None
        return RunSpec(
            hyper_params=self.recorded_hyper_params(),
            bookkeeping=self.bookkeeping(),
            tracked_keys=list(self.hyper_param_record),
            tracked=tracked,
            heartbeat_interval=self.config.HEARTBEAT_INTERVAL,
            config=self.config.public_dict(),
            total_steps=self.total_steps,
        )

    # ------------------------------------------------------------------ the run
    def _active(self) -> bool:
        return self._runner.active

    @property
    def _finished(self) -> bool:
        """The current run has ended (or there is none)."""
        return not self._runner.active

    def _require_configured(self) -> None:
        if self.config is None or self.data_root is None:
            raise RunStateError(
                "The experiment manager is not configured",
                expected="exp_manager.configure(task, rla_config, data_root) first",
                found="no configuration",
                fix="call configure() before log_files_gen()",
            )

    def _current(self, what: str = "this operation") -> Run:
        if self._runner.run is None:
            raise RunStateError(
                f"{what} needs a run",
                expected="exp_manager.log_files_gen() called first",
                found="no run created yet",
                fix="call configure() and log_files_gen() first",
            )
        return self._runner.run

    def _require_run(self, what: str = "this operation") -> RunLayout:
        return self._current(what).layout

    def _factory(self) -> RunFactory:
        self._require_configured()
        assert self.data_root is not None and self.task_table_name is not None
        return RunFactory(self.data_root, self.task_table_name, clock=self.clock)

    def log_files_gen(self) -> RunLayout:
        """Create the run: directories, run.json, code backup, logger outputs, resume state.

        Calling it again starts a clean new run (the previous one is finished first).
        """
        factory = self._factory()
        assert self.config is not None
        self.finish()
        self._redaction = self._build_redaction()
        spec = self._spec(self._tracked_values())
        self.custom_data = {}
        return self._runner.start(factory, spec, self._redaction, self.config.HEARTBEAT_INTERVAL).layout

    def reattach(self, layout: RunLayout, **fields: Any) -> RunLayout:
        """Continue an existing run of this data root in this process, as the same run.

        For a requeued job or a restored trial (see :mod:`RLA.integrations.same_run`, which
        first cuts the run's logs to the restored step): ``run.json`` is read back and its
        status becomes ``running`` again (with this process's pid and ``fields``), the custom
        data of the resume state come back, and the logger appends to the run's files. The
        hyper-parameters and tracked keys are the manager's current ones; nothing is copied.

        Raises:
            RunStateError: ``layout`` is not a run of the configured data root.
            RunNotFoundError: the run has no ``run.json``.
        """
        factory = self._factory()
        assert self.config is not None
        if Path(layout.data_root).resolve() != self.data_root:
            raise RunStateError(
                "Cannot continue a run of another data root",
                expected=str(self.data_root),
                found=str(layout.data_root),
                fix="configure() the run's data root first",
            )
        self.finish()
        self.custom_data = read_custom_data(layout)
        self._redaction = self._build_redaction()
        run = factory.reopen(layout, self._spec(), self._redaction, **fields)
        return self._runner.reopen(run, self.config.HEARTBEAT_INTERVAL).layout

    @property
    def redaction(self) -> RedactionPolicy:
        """What every artifact of the current run hides (built by ``log_files_gen``)."""
        if self._redaction is None:
            self._redaction = self._build_redaction()
        return self._redaction

    def _build_redaction(self) -> RedactionPolicy:
        """The config's ``REDACT`` policy plus the remote password and the secrets of the
        hyper-parameters and of the command line (the user's objects are never changed)."""
        remote = [os.environ.get(PASSWORD_ENV), self.config.remote.password if self.config else None]
        policy = self.config.REDACT.policy(remote) if self.config else RedactionPolicy(values=remote)
        policy.learn(self.hyper_param, argv=[str(arg) for arg in sys.argv])
        return policy

    def _open_logs(self, run: Run) -> None:
        from RLA.logger.formats.stdout import StdoutOutputFormat

        assert self.config is not None
        new = self.logger.configure(
            dir=str(run.layout.log_dir),
            format_strs=self.config.log_used,
            hyper_params=self.redaction.redact_mapping(self.recorded_hyper_params()),
            redact=self.redaction.redact_text,
            on_dump=self._log_callback,
        )
        for writer in new.writers:
            if isinstance(writer, StdoutOutputFormat):
                writer.interval = self.config.STDOUT_INTERVAL
        new.set_total_steps(self.total_steps)

    def set_total_steps(self, total: Optional[int]) -> None:
        """The time-step the training ends at: stdout shows the progress and an ETA with it.

        Kept for the next runs of this manager and recorded as ``total_steps`` in run.json.
        Call it before or after ``log_files_gen()``; ``None`` forgets it.

        Raises:
            LoggerError: ``total`` is not a positive int.
        """
        from RLA.logger.core import check_total_steps

        self.total_steps = check_total_steps(total)
        if self._active():
            self.logger.get_current().set_total_steps(self.total_steps)
            self.update_run_info(total_steps=self.total_steps)

    def reopen_logger(self) -> None:
        """Re-open the logger on the run's log dir (after its files were replaced, e.g. a fork)."""
        self._open_logs(self._current("reopen_logger()"))

    # --------------------------------------------------------------------- run.json
    @property
    def run_info(self) -> Dict[str, Any]:
        """The current run's ``run.json`` record as last written (empty before a run)."""
        return self._runner.run.record.info if self._runner.run is not None else {}

    @property
    def layout(self) -> Optional[RunLayout]:
        """The current run's paths (``None`` before a run)."""
        return self._runner.run.layout if self._runner.run is not None else None

    @property
    def record_date(self) -> Optional[_dt.datetime]:
        """The current run's start time (``None`` before a run)."""
        return self._runner.run.started if self._runner.run is not None else None

    def update_run_info(self, **fields: Any) -> Dict[str, Any]:
        """Update fields of run.json (atomic rewrite) and return the new record."""
        return self._current("update_run_info()").record.update(**fields)

    @property
    def parent(self) -> Optional[str]:
        """The index of the run this one was forked or resumed from (run.json's ``parent``)."""
        return self.run_info.get("parent")

    def set_parent(self, parent_index: Optional[str]) -> None:
        """Record the run this one was forked or resumed from."""
        self.update_run_info(parent=parent_index)
        self.save_state()

    # ------------------------------------------------------------------ resume state
    def state_dict(self) -> Dict[str, Any]:
        """What a later process needs to resume or fork this run (no secrets, no pickle).

        Secrets are redacted (see :mod:`RLA.redaction`); ``ExperimentLoader`` takes a
        redacted hyper-parameter from the resuming process.
        """
        layout = self._require_run("state_dict()")
        params, bookkeeping = recorded_and_bookkeeping(
            self.hyper_param, self.hyper_param_record, self.bookkeeping_keys
        )
        public = self.config.public_dict() if self.config else None
        return build_state(
            layout, self.data_root, params, bookkeeping, self.hyper_param_record, self.custom_data, self.parent,
            public, self.redaction,
        )  # fmt: skip

    def save_state(self) -> None:
        """Rewrite the run's ``archive_tester/.../<name>.json`` atomically."""
        write_state(self._require_run("save_state()"), self.state_dict())

    def _save_state_of(self, run: Run) -> None:
        self.save_state()

    def _record_checkpoint(self, run: Run, step: int, path: Path, related: Mapping[str, Any]) -> None:
        """A checkpoint was saved: its variables and step go into the resume state and run.json."""
        for key, value in related.items():
            self.custom_data[key] = jsonable(value)
        self.custom_data[TIME_STEP_KEY] = step
        self.save_state()
        run.record.update(last_checkpoint={"step": step, "file": path.name})

    def _flush_logs(self) -> None:
        self.logger.get_current().flush()

    # --------------------------------------------------------------- directories
    def _dir(self, path: Path) -> Optional[str]:
        return str(path) + "/"

    @property
    def index(self) -> Optional[str]:
        return self.layout.index if self.layout else None

    @property
    def log_dir(self) -> Optional[str]:
        return self._dir(self.layout.log_dir) if self.layout else None

    @property
    def code_dir(self) -> Optional[str]:
        return self._dir(self.layout.code_dir) if self.layout else None

    @property
    def checkpoint_dir(self) -> Optional[str]:
        return self._dir(self.layout.checkpoint_dir) if self.layout else None

    @property
    def results_dir(self) -> Optional[str]:
        return self._dir(self.layout.results_dir) if self.layout else None

    @property
    def replay_dir(self) -> Optional[str]:
        return self._dir(self.layout.replay_dir) if self.layout else None

    @property
    def pkl_file(self) -> Optional[str]:
        return str(self.layout.archive_tester_file) if self.layout else None

    @property
    def log_name(self) -> Optional[str]:
        """``<task>/<YYYY>/<MM>/<DD>/<name>`` (the original's name)."""
        return self.layout.relative if self.layout else None

    @property
    def ipaddr(self) -> str:
        return self.run_info.get("ip") or host_ip()

    # --------------------------------------------------------------------- output
    def print_log_dir(self) -> None:
        """Log where the run's data lives."""
        announce(self.logger, self._require_run("print_log_dir()"))

    def print_args(self) -> None:
        """Write the hyper-parameters to backup.txt (one line each) and code/parameter.json."""
        from RLA.fs import atomic_write_json

        layout = self._require_run("print_args()")
        shown = self.redaction.redact_mapping(self.recorded_hyper_params())  # written, not the user's dict
        for key in sorted(shown, key=str):
            self.logger.backup(f"key: {key}, value: {shown[key]}")
        atomic_write_json(
            layout.code_dir / "parameter.json",
            dict(sorted(shown.items(), key=lambda kv: str(kv[0]))),
            durable=False,
        )

    def warn(self, message: str) -> None:
        """A warning into the run's warn.txt and log (and stderr)."""
        self.logger.warn(message)

    def _say(self, message: str) -> None:
        self.logger.info(message)

    # ---------------------------------------------------------------- custom data
    def add_custom_data(
        self, key: str, data: Any, dtype: type = list, max_len: int = -1, mode: str = "append"
    ) -> None:
        """Store a value with the run's resume state (``append`` to a list/deque or ``replace``)."""
        add_custom_value(self.custom_data, key, data, dtype, max_len, mode)

    def get_custom_data(self, key: str) -> Any:
        return self.custom_data.get(key)

    def clear_custom_data(self, key: str) -> None:
        self.custom_data.pop(key, None)

    def print_custom_data(self, key: str, prefix: str = "") -> None:
        """Record the mean of a custom data series as a scalar."""
        import numpy as np

        values = self.custom_data.get(key)
        if values:
            self.logger.record_tabular(prefix + key, float(np.mean(list(values))))

    # --------------------------------------------------------------------- timing
    def time_record(self, name: str) -> None:
        """Start a named timer (see also RLA.trackers)."""
        self._time_records[name] = time.perf_counter()

    def time_record_end(self, name: str) -> float:
        """Stop a named timer and record ``time_used/<name>`` in seconds."""
        if name not in self._time_records:
            raise RunStateError(
                f"Timer {name!r} was not started",
                expected=f"time_record({name!r}) first",
                found="no such timer",
                fix="start the timer before ending it",
            )
        used = time.perf_counter() - self._time_records.pop(name)
        self.logger.record_tabular(f"time_used/{name}", used)
        return used

    # ---------------------------------------------------------------------- finish
    def add_finish_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` when the run finishes (before the final status is written)."""
        self.lifecycle.attach(Hook(hook, at="finish"), once=True)

    def add_post_finish_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` after the run's final status was written (e.g. a last sync)."""
        self.lifecycle.attach(Hook(hook, at="after"), once=True)

    def finish(
        self, status: Optional[str] = None, exit_code: Optional[int] = None, error: Optional[str] = None
    ) -> None:
        """End the run: tell the services, close the logger, record status and end time.

        Idempotent; called automatically at exit (``crashed`` on an uncaught exception,
        ``killed`` on SIGTERM / Ctrl-C, else ``finished``). See :meth:`Runner.finish`.
        """
        self._runner.finish(status, exit_code, error)

    def __enter__(self) -> "ExperimentManager":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.finish()
        elif issubclass(exc_type, KeyboardInterrupt):
            self.finish(status=ri.KILLED, exit_code=130, error="KeyboardInterrupt")
        else:
            self.finish(status=ri.CRASHED, exit_code=1, error=f"{exc_type.__name__}: {exc}")

    # ------------------------------------------------------ services (one-line delegations)
    def new_saver(
        self,
        max_to_keep: Optional[int] = 10,
        var_prefix: Optional[str] = None,
        backend: Optional[str] = None,
        save_rng: bool = True,
        durable: bool = True,
        verbose: bool = True,
    ) -> CheckpointSaver:
        """Create the run's checkpoint saver; see :meth:`CheckpointService.new_saver`."""
        run = self._current("new_saver()")
        return self._checkpoints.new_saver(run, max_to_keep, var_prefix, backend, save_rng, durable, verbose)

    @property
    def saver(self) -> Optional[CheckpointSaver]:
        """The current run's saver (``None`` before ``new_saver``/the first save)."""
        return self._checkpoints.saver

    @property
    def loaded_variables(self) -> Dict[str, Any]:
        """Related variables of the last ``load_checkpoint`` (types intact)."""
        return self._checkpoints.loaded_variables

    def save_checkpoint(
        self,
        model_dict: Optional[Mapping[str, Any]] = None,
        related_variable: Optional[Mapping[str, Any]] = None,
        name: Optional[str] = None,
        checkpoint_name: str = "checkpoint",
    ) -> Path:
        """Save models and variables at the current time-step; see :meth:`CheckpointService.save`."""
        run = self._current("save_checkpoint()")
        return self._checkpoints.save(run, model_dict, related_variable, name, checkpoint_name)

    def load_checkpoint(
        self,
        ckp_index: Union[None, int, str] = None,
        restore_rng: bool = False,
        map_location: Any = "cpu",
        checkpoint_name: str = "checkpoint",
    ) -> Tuple[int, Dict[str, Any]]:
        """Load this run's newest checkpoint (or a step / name); see :meth:`CheckpointService.load`."""
        run = self._current("load_checkpoint()")
        return self._checkpoints.load(run, ckp_index, restore_rng, map_location, checkpoint_name)

    def save_replay_buffer(self, buffer: Any, step: Optional[int] = None, **options: Any) -> Path:
        """Snapshot ``buffer`` for the current time-step; see :meth:`ReplayService.save`."""
        return self._replay.save(self._current("save_replay_buffer()"), buffer, step, **options)

    def replay_save_triggers(self, buffer: Any, every: Optional[int] = None, **options: Any) -> Any:
        """Saves of ``buffer`` on steps, requests and signals; see :meth:`ReplayService.save_triggers`."""
        return self._replay.save_triggers(self._current("replay_save_triggers()"), buffer, every, **options)

    def load_replay_buffer(
        self,
        buffer: Any = None,
        step: Optional[int] = None,
        replay_dir: Optional[Path] = None,
        **options: Any,
    ) -> Any:
        """Restore a snapshot of this run (or of ``replay_dir``); see :meth:`ReplayService.load`."""
        folder = (
            replay_dir if replay_dir is not None else self._require_run("load_replay_buffer()").replay_dir
        )
        return self._replay.load(folder, buffer, step, **options)

    def sync_log_file(self, skip_error: bool = False) -> Any:
        """Push the current run to the main node (skipped there): a ``SyncReport`` or ``None``;
        see :meth:`SyncService.push`."""
        sync = self._require_sync()
        return (
            sync.push(self._current("sync_log_file()"), self._active(), skip_error)
            if sync.enabled()
            else sync.skip()
        )

    def close_sync(self) -> None:
        """Finish a background push and report its failures; see :meth:`SyncService.close`."""
        if self._sync is not None:
            self._sync.close()

    def _require_sync(self) -> SyncService:
        if self._sync is None:
            from RLA.errors import ConfigError

            raise ConfigError(
                "sync_log_file() needs a configured manager",
                expected="exp_manager.configure(...) called first",
                found="no configuration",
                fix="call configure() and log_files_gen() before syncing",
            )
        return self._sync

    # ------------------------------------------------------ the original's names (#17)
    @property
    def time_step_holder(self) -> Any:
        """The global ``time_step_holder`` (the original kept it on the Tester)."""
        return time_step_holder

    def get_timestep(self) -> int:
        """The current time-step."""
        return time_step_holder.get_time()

    get_timstep = get_timestep

    def set_timestep(self, ts: int) -> None:
        """Set the current time-step."""
        time_step_holder.set_time(ts)

    @property
    def tmp_data_dir(self) -> Optional[str]:
        """polixir's scratch folder ``<data_root>/tmp_data/<run>/`` (created on first use)."""
        return original_names.extra_dir(self.layout, "tmp_data")

    @property
    def hyparameter_dir(self) -> Optional[str]:
        """polixir's ``<data_root>/hyperparameter/<run>/`` (created on first use)."""
        return original_names.extra_dir(self.layout, "hyperparameter")

    def update_log_files_location(self, root: Union[str, Path]) -> None:
        """Point the current run at its copy under another data root (a moved database)."""
        self.data_root = original_names.relocate(self._runner.run, Path(root))

    def serialize_object_and_save(self) -> None:
        """The original's name of :meth:`save_state` (JSON, no pickle)."""
        self.save_state()

    def __deepcopy__(self, memo: Dict[int, Any]) -> "ExperimentManager":
        raise TypeError(
            "ExperimentManager holds threads and files and cannot be copied; use state_dict() for a snapshot"
        )


#: Kept for code written against the original (``Tester``).
Tester = ExperimentManager
