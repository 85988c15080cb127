"""ExperimentManager: the lifecycle of a run (configure, create the item, record, finish)."""

from __future__ import annotations

import collections
import copy
import datetime as _dt
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from RLA.config import PASSWORD_ENV, RLAConfig, load_config
from RLA.errors import ConfigError, HyperParameterError, RunStateError
from RLA.fs import atomic_write_json, atomic_write_text, json_default
from RLA.layout import ARCHIVE_TESTER, DIR_TYPES, RunLayout
from RLA.logger.time_step import time_step_holder
from RLA.manager import run_info as ri
from RLA.manager.bookkeeping import BOOKKEEPING_KEYS, split_bookkeeping
from RLA.manager.checkpointing import CheckpointMixin
from RLA.manager.claim import claim_run
from RLA.manager.code_backup import backup_code, default_ignore_files
from RLA.manager.git_info import git_facts
from RLA.manager.host import host_ip, package_versions, process_facts, redacted_argv
from RLA.manager.lifecycle import Heartbeat, exit_watcher
from RLA.manager.preflight import check_config
from RLA.manager.replaying import ReplayMixin
from RLA.manager.syncing import SyncMixin
from RLA.redaction import RedactionPolicy

STATE_FORMAT_VERSION = 1
_MISSING = object()


def lookup_dotted(params: Dict[str, Any], key: str) -> Any:
    """``params['a']['b']`` for ``key == 'a.b'`` (a plain key wins over a dotted path)."""
    if key in params:
        return params[key]
    node: Any = params
    for part in key.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif hasattr(node, part) and not isinstance(node, dict):
            node = getattr(node, part)
        else:
            return _MISSING
    return node


def _jsonable(value: Any) -> Any:
    """A JSON-compatible deep copy of ``value`` (numpy → lists, objects → repr)."""
    import json

    return json.loads(json.dumps(value, default=json_default, allow_nan=True))


class ExperimentManager(CheckpointMixin, SyncMixin, ReplayMixin):
    """Create and manage one run at a time (the original's ``Tester``).

    Typical use::

        exp_manager.set_hyper_param(env_id="Hopper-v4", lr=1e-3, seed=0)
        exp_manager.add_record_param(["env_id", "seed"])
        exp_manager.configure("demo_task", rla_config="rla_config.yaml", data_root="./data")
        exp_manager.log_files_gen()
        exp_manager.print_args()
    """

    def __init__(self) -> None:
        self.hyper_param: Dict[str, Any] = {}
        self.hyper_param_record: List[str] = []  # tracked keys, in the order added
        self.custom_data: Dict[str, Any] = {}
        self.config: Optional[RLAConfig] = None
        self.task_table_name: Optional[str] = None
        self.data_root: Optional[Path] = None
        self.is_master_node = False
        self.layout: Optional[RunLayout] = None
        self.record_date: Optional[_dt.datetime] = None
        self.run_info: Dict[str, Any] = {}
        self.parent: Optional[str] = None
        self._ignore_file_path: Optional[str] = None
        self._run_file: List[Path] = []
        self._finish_hooks: List[Callable[[], None]] = []
        self._post_finish_hooks: List[Callable[[], None]] = []
        self._heartbeat: Optional[Heartbeat] = None
        self._info_lock = threading.RLock()
        self._time_records: Dict[str, float] = {}
        self._finished = True
        self._redaction: Optional[RedactionPolicy] = None
        #: The time-step training ends at, when known (``set_total_steps``).
        self.total_steps: Optional[int] = None
        #: The new run's start time (its index); tests inject a fixed one.
        self.clock: Callable[[], _dt.datetime] = _dt.datetime.now
        #: Keys of ``hyper_param`` recorded in run.json's ``bookkeeping``, not as hyper-parameters
        #: (see :mod:`RLA.manager.bookkeeping`).
        self.bookkeeping_keys: Tuple[str, ...] = BOOKKEEPING_KEYS

    # ------------------------------------------------------------------ configuration
    def configure(
        self,
        task_table_name: Optional[str] = None,
        rla_config: Union[str, Path, Dict[str, Any], RLAConfig, None] = None,
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
        task = task_table_name if task_table_name is not None else task_name
        config_source = rla_config if rla_config is not None else private_config_path
        root = data_root if data_root is not None else log_root
        if task is None or not str(task).strip():
            raise ConfigError(
                "configure() needs a task name",
                expected="task_table_name='my_task'",
                found=repr(task),
                fix="pass the task (table) the run belongs to",
            )
        task = str(task).strip().strip("/")
        if any(part in ("", ".", "..") for part in task.split("/")):
            raise ConfigError(
                "Bad task name",
                expected="a name such as 'demo_task' (no empty, '.' or '..' parts)",
                found=repr(task),
                fix="rename the task",
            )
        if config_source is None:
            raise ConfigError(
                "configure() needs rla_config",
                expected="a path to rla_config.yaml or a dict",
                found="None",
                fix="pass rla_config='rla_config.yaml' (create it with `rla init`)",
            )
        config = load_config(config_source, project_root=code_root)
        check_config(config)  # LOG_USED names and the backend's package, before any run folder exists
        if root is None and config.DATA_ROOT is not None:
            root = config.resolve(config.DATA_ROOT)
        if root is None:
            raise ConfigError(
                "configure() needs a data root",
                expected="data_root='./data' (or DATA_ROOT in the config)",
                found="None",
                fix="pass the folder that holds the database",
            )
        if self._active():
            self.finish()
        self.config = config
        self.task_table_name = task
        self.data_root = Path(root).expanduser().resolve()
        self.is_master_node = bool(is_master_node)
        self._ignore_file_path = ignore_file_path
        if run_file is None:
            main = getattr(sys.modules.get("__main__"), "__file__", None)
            self._run_file = [Path(main).resolve()] if main and Path(main).is_file() else []
        else:
            files = [run_file] if isinstance(run_file, (str, Path)) else list(run_file)
            self._run_file = [Path(f).expanduser().resolve() for f in files]
        self._log_callback = log_callback_fn
        self.layout = None
        # A new configuration starts with default saving (DL_FRAMEWORK's backend): new_saver's
        # options of the previous one (var_prefix, backend, rotation) no longer apply. A
        # second log_files_gen() under the same configuration keeps them.
        self._ckpt_saver, self._ckpt_options = None, {}
        return self

    # Original accessors
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
        if isinstance(keys, str):
            keys = [keys]
        for key in keys:
            if lookup_dotted(self.hyper_param, key) is _MISSING:
                raise HyperParameterError(
                    f"Cannot track hyper-parameter {key!r}: it is not set",
                    expected=f"one of {', '.join(map(str, self.hyper_param)) or '(none set)'}",
                    found=repr(key),
                    fix="call set_hyper_param(...) with it first",
                )
            if key not in self.hyper_param_record:
                self.hyper_param_record.append(key)

    def recorded_hyper_params(self) -> Dict[str, Any]:
        """The hyper-parameters the run records (JSON-able): without the bookkeeping keys."""
        return _jsonable(
            split_bookkeeping(self.hyper_param, self.hyper_param_record, self.bookkeeping_keys)[0]
        )

    def bookkeeping(self) -> Dict[str, Any]:
        """The bookkeeping values set with the hyper-parameters (run.json's ``bookkeeping``)."""
        return _jsonable(
            split_bookkeeping(self.hyper_param, self.hyper_param_record, self.bookkeeping_keys)[1]
        )

    def clear_record_param(self) -> None:
        """Forget the tracked keys."""
        self.hyper_param_record = []

    def _tracked_values(self) -> List[Tuple[str, Any]]:
        pairs = []
        for key in self.hyper_param_record:
            value = lookup_dotted(self.hyper_param, key)
            if value is _MISSING:
                raise HyperParameterError(
                    f"Tracked hyper-parameter {key!r} is no longer set",
                    expected="every tracked key present in hyper_param",
                    found=f"keys {sorted(map(str, self.hyper_param))}",
                    fix="set it again or call clear_record_param()",
                )
            pairs.append((key, value))
        return pairs

    # ------------------------------------------------------------------ the run item
    def _active(self) -> bool:
        return self.layout is not None and not self._finished

    def _require_configured(self) -> None:
        if self.config is None or self.data_root is None:
            raise RunStateError(
                "The experiment manager is not configured",
                expected="exp_manager.configure(task, rla_config, data_root) first",
                found="no configuration",
                fix="call configure() before log_files_gen()",
            )

    def _require_run(self, what: str = "this operation") -> RunLayout:
        if self.layout is None:
            raise RunStateError(
                f"{what} needs a run",
                expected="exp_manager.log_files_gen() called first",
                found="no run created yet",
                fix="call configure() and log_files_gen() first",
            )
        return self.layout

    def log_files_gen(self) -> RunLayout:
        """Create the run: directories, run.json, code backup, logger outputs, resume state.

        Calling it again starts a clean new run (the previous one is finished first).
        """
        self._require_configured()
        if self._active():
            self.finish()
        assert self.config is not None and self.data_root is not None and self.task_table_name is not None
        self._redaction = self._build_redaction()
        tracked = [(key, self._redaction.redact_mapping(value, key)) for key, value in self._tracked_values()]
        layout, when = claim_run(
            self.data_root, self.task_table_name, None, host_ip(), tracked, clock=self.clock
        )
        self.layout, self.record_date = layout, when
        self.custom_data = {}
        self.parent = None
        self.run_info = {}
        self._finished = False
        try:
            self._make_run(layout, when)
        except BaseException as exc:
            self._end_half_made_run(layout, when, exc)
            raise
        return layout

    def _make_run(self, layout: RunLayout, when: _dt.datetime) -> None:
        assert self.config is not None
        for data_type in DIR_TYPES:
            layout.path(data_type).mkdir(parents=True, exist_ok=True)
        layout.path(ARCHIVE_TESTER).parent.mkdir(parents=True, exist_ok=True)
        self._write_initial_run_info(layout, when)
        self._configure_logger()
        self._backup_code()
        self.save_state()
        self._heartbeat = Heartbeat(self._beat, self.config.HEARTBEAT_INTERVAL)
        exit_watcher.watch(self)
        self.print_log_dir()

    def _end_half_made_run(self, layout: RunLayout, when: _dt.datetime, exc: BaseException) -> None:
        """End a run whose creation failed as ``crashed`` (``killed`` on Ctrl-C), its error in run.json.

        Without this the half-made run stayed ``running`` with no error recorded. A second
        failure while recording is printed; the caller re-raises the first one.
        """
        interrupted = isinstance(exc, KeyboardInterrupt)
        status, code = (ri.KILLED, 130) if interrupted else (ri.CRASHED, 1)
        try:
            if self.run_info.get("index") != layout.index:  # failed before run.json was written
                self._write_initial_run_info(layout, when)
            self.finish(status=status, exit_code=code, error=f"{type(exc).__name__}: {exc}")
        except Exception as second:  # noqa: BLE001 - the first error is the one to raise
            print(
                f"RLA: while recording the failed start of run {layout.index}: "
                f"{type(second).__name__}: {second}",
                file=sys.stderr,
            )

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
        from RLA.fs import read_json
        from RLA.naming import index_time

        self._require_configured()
        if Path(layout.data_root).resolve() != self.data_root:
            raise RunStateError(
                "Cannot continue a run of another data root",
                expected=str(self.data_root),
                found=str(layout.data_root),
                fix="configure() the run's data root first",
            )
        if self._active():
            self.finish()
        info = ri.read_run_info(layout.run_info_file)
        state = read_json(layout.archive_tester_file) if layout.archive_tester_file.is_file() else {}
        self.layout, self.record_date = layout, index_time(layout.index)
        self.custom_data = dict(state.get("custom_data") or {})
        self.parent = info.get("parent")
        self._finished = False
        self._redaction = self._build_redaction()
        facts = process_facts()
        info.update(
            status=ri.RUNNING,
            end_time=None,
            exit_code=None,
            error=None,
            pid=facts["pid"],
            host=facts["host"],
            heartbeat=ri.now_iso(),
            hyper_params=self.recorded_hyper_params(),
            bookkeeping=self.bookkeeping(),
            tracked_keys=list(self.hyper_param_record),
            **fields,
        )
        with self._info_lock:
            self.run_info = info
            ri.write_run_info(layout.run_info_file, info, self.redaction)
        from RLA.query.catalog import mark_changed

        mark_changed(self.data_root, [layout])  # the index may hold it as settled and ended
        self._configure_logger()
        self.save_state()
        assert self.config is not None
        self._heartbeat = Heartbeat(self._beat, self.config.HEARTBEAT_INTERVAL)
        exit_watcher.watch(self)
        return layout

    def _write_initial_run_info(self, layout: RunLayout, when: _dt.datetime) -> None:
        assert self.config is not None
        facts = process_facts()
        info: Dict[str, Any] = {
            "format_version": ri.FORMAT_VERSION,
            "index": layout.index,
            "task": layout.task,
            "name": layout.name,
            "date": layout.date,
            "record_date": layout.record_date,
            "hyper_params": self.recorded_hyper_params(),
            "bookkeeping": self.bookkeeping(),
            "tracked_keys": list(self.hyper_param_record),
            "host": facts["host"],
            "ip": host_ip(),
            "pid": facts["pid"],
            "command": redacted_argv(policy=self.redaction),
            "cwd": facts["cwd"],
            "python": facts["python"],
            "platform": facts["platform"],
            "packages": package_versions(),
            "git": None,
            "start_time": when.astimezone().isoformat(timespec="microseconds"),
            "end_time": None,
            "status": ri.RUNNING,
            "exit_code": None,
            "error": None,
            "heartbeat": ri.now_iso(),
            "heartbeat_interval": self.config.HEARTBEAT_INTERVAL,
            "parent": None,
            "data_root": str(self.data_root),
            "config": self.config.public_dict(),
            "total_steps": self.total_steps,
        }
        with self._info_lock:
            self.run_info = info
            ri.write_run_info(layout.run_info_file, info, self.redaction)

    @property
    def redaction(self) -> RedactionPolicy:
        """What every artifact of the current run hides (built by ``log_files_gen``)."""
        if self._redaction is None:
            self._redaction = self._build_redaction()
        return self._redaction

    def _build_redaction(self) -> RedactionPolicy:
        """The config's ``REDACT`` policy plus the remote password and the secrets of the
        hyper-parameters and of the command line (the user's objects are never changed)."""
        import os

        remote = [os.environ.get(PASSWORD_ENV), self.config.remote.password if self.config else None]
        policy = self.config.REDACT.policy(remote) if self.config else RedactionPolicy(values=remote)
        policy.learn(self.hyper_param, argv=[str(arg) for arg in sys.argv])
        return policy

    def _configure_logger(self) -> None:
        from RLA.easy_log import logger
        from RLA.logger.formats.stdout import StdoutOutputFormat

        assert self.config is not None and self.layout is not None
        new = logger.configure(
            dir=str(self.layout.log_dir),
            format_strs=self.config.log_used,
            hyper_params=self.redaction.redact_mapping(self.recorded_hyper_params()),
            redact=self.redaction.redact_text,
            on_dump=getattr(self, "_log_callback", None),
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
            from RLA.easy_log import logger

            logger.get_current().set_total_steps(self.total_steps)
            self.update_run_info(total_steps=self.total_steps)

    def reopen_logger(self) -> None:
        """Re-open the logger on the run's log dir (after its files were replaced, e.g. a fork)."""
        self._require_run("reopen_logger()")
        self._configure_logger()

    def _backup_code(self) -> None:
        assert self.config is not None and self.layout is not None and self.data_root is not None
        code_dir = self.layout.code_dir
        project_root = self.config.project_root
        backup_code(
            code_dir,
            project_root,
            self.config.backup_code_by,
            self.config.backup.backup_code_dir,
            self.config.backup.lib_dir,
            default_ignore_files(project_root, self.config.backup.ignore_code_paths, self._ignore_file_path),
            self._run_file,
            skip=[self.data_root],
            redaction=self.redaction,
            warn=self.warn,
        )
        facts, diff, untracked = git_facts(project_root)
        if facts is not None:
            text = self.redaction.redact_text
            if diff:  # atomic: a full disk is a DiskFullError, never half a patch
                atomic_write_text(code_dir / "git_diff.patch", text(diff) + "\n", durable=False)
            if untracked:
                atomic_write_text(code_dir / "git_untracked.txt", text(untracked) + "\n", durable=False)
            atomic_write_json(
                code_dir / "git_info.json", self.redaction.redact_mapping(facts, by_key=False), durable=False
            )
        self.update_run_info(git=facts)

    # --------------------------------------------------------------------- run.json
    def update_run_info(self, **fields: Any) -> Dict[str, Any]:
        """Update fields of run.json (atomic rewrite) and return the new record."""
        layout = self._require_run("update_run_info()")
        with self._info_lock:
            self.run_info.update(fields)
            ri.write_run_info(layout.run_info_file, self.run_info, self.redaction)
            return dict(self.run_info)

    def _beat(self) -> None:
        if self._active():
            self.update_run_info(heartbeat=ri.now_iso())

    def set_parent(self, parent_index: Optional[str]) -> None:
        """Record the run this one was forked or resumed from."""
        self.parent = parent_index
        self.update_run_info(parent=parent_index)
        self.save_state()

    # ------------------------------------------------------------------ resume state
    def state_dict(self) -> Dict[str, Any]:
        """What a later process needs to resume or fork this run (no secrets, no pickle).

        Secrets are redacted (see :mod:`RLA.redaction`); ``ExperimentLoader`` takes a
        redacted hyper-parameter from the resuming process.
        """
        layout = self._require_run("state_dict()")
        state = {
            "format_version": STATE_FORMAT_VERSION,
            "log_name_format_version": "v1",
            "index": layout.index,
            "task_table_name": layout.task,
            "name": layout.name,
            "record_date": layout.record_date,
            "data_root": str(self.data_root),
            "hyper_param": self.recorded_hyper_params(),
            "bookkeeping": self.bookkeeping(),
            "hyper_param_record": list(self.hyper_param_record),
            "tracked_keys": list(self.hyper_param_record),
            "custom_data": _jsonable(self.custom_data),
            "time_step": time_step_holder.get_time(),
            "parent": self.parent,
            "config": self.config.public_dict() if self.config else None,
        }
        policy = self.redaction
        return {
            key: policy.redact_mapping(value, by_key=key in ("hyper_param", "custom_data", "bookkeeping"))
            for key, value in state.items()
        }

    def save_state(self) -> None:
        """Rewrite the run's ``archive_tester/.../<name>.json`` atomically."""
        layout = self._require_run("save_state()")
        atomic_write_json(layout.archive_tester_file, self.state_dict(), durable=False)

    # --------------------------------------------------------------- directories
    def _dir(self, path: Path) -> Optional[str]:
        return str(path) + "/" if self.layout is not None else None

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
        from RLA.easy_log import logger

        layout = self._require_run("print_log_dir()")
        logger.info(f"RLA run {layout.index}")
        for data_type in DIR_TYPES:
            logger.info(f"{data_type} dir: {layout.path(data_type)}")

    def print_args(self) -> None:
        """Write the hyper-parameters to backup.txt (one line each) and code/parameter.json."""
        from RLA.easy_log import logger

        layout = self._require_run("print_args()")
        shown = self.redaction.redact_mapping(self.recorded_hyper_params())  # written, not the user's dict
        for key in sorted(shown, key=str):
            logger.backup(f"key: {key}, value: {shown[key]}")
        atomic_write_json(
            layout.code_dir / "parameter.json",
            dict(sorted(shown.items(), key=lambda kv: str(kv[0]))),
            durable=False,
        )

    def warn(self, message: str) -> None:
        """A warning into the run's warn.txt and log (and stderr)."""
        from RLA.easy_log import logger

        logger.warn(message)

    # ---------------------------------------------------------------- custom data
    def add_custom_data(
        self, key: str, data: Any, dtype: type = list, max_len: int = -1, mode: str = "append"
    ) -> None:
        """Store a value with the run's resume state (``append`` to a list/deque or ``replace``)."""
        if mode == "replace":
            self.custom_data[key] = data
            return
        if mode != "append":
            raise ConfigError(
                "Bad custom data mode",
                expected="'append' or 'replace'",
                found=repr(mode),
                fix="pass mode='append' or mode='replace'",
            )
        if key not in self.custom_data:
            if dtype is collections.deque:
                if max_len <= 0:
                    raise ConfigError(
                        "A deque needs a positive max_len",
                        expected="max_len > 0",
                        found=str(max_len),
                        fix="pass max_len=N",
                    )
                self.custom_data[key] = collections.deque(maxlen=max_len)
            elif dtype is list:
                self.custom_data[key] = []
            else:
                self.custom_data[key] = data
                return
        self.custom_data[key].append(data)

    def get_custom_data(self, key: str) -> Any:
        return self.custom_data.get(key)

    def clear_custom_data(self, key: str) -> None:
        self.custom_data.pop(key, None)

    def print_custom_data(self, key: str, prefix: str = "") -> None:
        """Record the mean of a custom data series as a scalar."""
        import numpy as np

        from RLA.easy_log import logger

        values = self.custom_data.get(key)
        if values:
            logger.record_tabular(prefix + key, float(np.mean(list(values))))

    # --------------------------------------------------------------------- timing
    def time_record(self, name: str) -> None:
        """Start a named timer (see also RLA.trackers)."""
        self._time_records[name] = time.perf_counter()

    def time_record_end(self, name: str) -> float:
        """Stop a named timer and record ``time_used/<name>`` in seconds."""
        from RLA.easy_log import logger

        if name not in self._time_records:
            raise RunStateError(
                f"Timer {name!r} was not started",
                expected=f"time_record({name!r}) first",
                found="no such timer",
                fix="start the timer before ending it",
            )
        used = time.perf_counter() - self._time_records.pop(name)
        logger.record_tabular(f"time_used/{name}", used)
        return used

    # ---------------------------------------------------------------------- finish
    def add_finish_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` when the run finishes (before the final status is written)."""
        if hook not in self._finish_hooks:
            self._finish_hooks.append(hook)

    def add_post_finish_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` after the run's final status was written (e.g. a last sync)."""
        if hook not in self._post_finish_hooks:
            self._post_finish_hooks.append(hook)

    def finish(
        self, status: Optional[str] = None, exit_code: Optional[int] = None, error: Optional[str] = None
    ) -> None:
        """End the run: run finish hooks, close the logger, record status and end time.

        Idempotent; called automatically at exit (``crashed`` on an uncaught exception,
        ``killed`` on SIGTERM / Ctrl-C, else ``finished``).
        """
        if not self._active():
            return
        self._finished = True
        hook_errors = []
        for hook in list(self._finish_hooks):
            try:
                hook()
            except Exception as exc:  # noqa: BLE001 - report, then still close the run
                hook_errors.append(f"{type(exc).__name__}: {exc}")
        self._finish_hooks = []
        if self._heartbeat is not None:
            self._heartbeat.close()
            self._heartbeat = None
        try:
            self.save_state()
        finally:
            from RLA.easy_log import logger

            for message in hook_errors:
                logger.warn(f"while finishing the run: {message}")
            logger.reset()
            final = status or ri.FINISHED
            code = exit_code if exit_code is not None else (0 if final == ri.FINISHED else 1)
            with self._info_lock:
                self.run_info.update(
                    status=final, exit_code=code, error=error, end_time=ri.now_iso(), heartbeat=ri.now_iso()
                )
                if hook_errors:
                    self.run_info["finish_warnings"] = hook_errors
                ri.write_run_info(self._require_run().run_info_file, self.run_info, self.redaction)
        hooks, self._post_finish_hooks = self._post_finish_hooks, []
        for hook in hooks:
            try:
                hook()
            except Exception as exc:  # noqa: BLE001 - the run is over; report and go on
                print(f"RLA: after finishing {self.index}: {type(exc).__name__}: {exc}", file=sys.stderr)

    def __enter__(self) -> "ExperimentManager":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.finish()
        elif issubclass(exc_type, KeyboardInterrupt):
            self.finish(status=ri.KILLED, exit_code=130, error="KeyboardInterrupt")
        else:
            self.finish(status=ri.CRASHED, exit_code=1, error=f"{exc_type.__name__}: {exc}")

    # ------------------------------------------------------ the original's names (#17)
    # Thin delegations kept for scripts written for the original Tester; see
    # RLA/manager/original_names.py and the manual's Compatibility section.
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
        from RLA.manager import original_names

        return original_names.extra_dir(self, "tmp_data")

    @property
    def hyparameter_dir(self) -> Optional[str]:
        """polixir's ``<data_root>/hyperparameter/<run>/`` (created on first use)."""
        from RLA.manager import original_names

        return original_names.extra_dir(self, "hyperparameter")

    @classmethod
    def load_tester(
        cls, record_date: str, task_table_name: str, log_root: str, trust_pickles: bool = False
    ) -> Any:
        """A past run's state (``hyper_param``, ``custom_data``...), read without unpickling."""
        from RLA.loader.past_run import PastRun

        return PastRun.find(log_root, task_table_name, record_date, trust_pickles=trust_pickles)

    def update_log_files_location(self, root: Union[str, Path]) -> None:
        """Point the current run at its copy under another data root (a moved database)."""
        from RLA.manager import original_names

        original_names.relocate(self, Path(root))

    def serialize_object_and_save(self) -> None:
        """The original's name of :meth:`save_state` (JSON, no pickle)."""
        self.save_state()

    def __deepcopy__(self, memo: Dict[int, Any]) -> "ExperimentManager":
        raise TypeError(
            "ExperimentManager holds threads and files and cannot be copied; use state_dict() for a snapshot"
        )


#: Kept for code written against the original (``Tester``).
Tester = ExperimentManager
_ = copy  # copy is imported for users who patch deepcopy behaviour in subclasses
