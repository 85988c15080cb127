"""PastRun: a finished (or killed) run read back for loading: its layout, state and checkpoints.

Only reads: nothing of the past run is created, changed or deleted here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Union

from RLA.checkpoint import CheckpointSaver, LoadedCheckpoint, backend_for_framework
from RLA.errors import CheckpointError, RLAError, RunNotFoundError
from RLA.fs import read_json
from RLA.layout import RunLayout, find_run
from RLA.loader.legacy_checkpoints import legacy_checkpoints, load_legacy_checkpoint
from RLA.loader.legacy_state import convert_legacy_state, state_from_text_files
from RLA.manager.checkpointing import TIME_STEP_KEY


@dataclass
class PastRun:
    """A run selected by ``(data_root, task, record_date)``.

    Attributes:
        layout: where its files are.
        state: its ``archive_tester`` JSON (hyper_param, custom_data, time_step, config...),
            or what ``run.json`` offers when that file is missing.
    """

    layout: RunLayout
    state: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def find(
        cls, data_root: Union[str, Path], task: Optional[str], record_date: str, trust_pickles: bool = False
    ) -> "PastRun":
        """Locate the run and read its resume state.

        Args:
            trust_pickles: convert the original's ``<name>.pkl`` state (restricted
                unpickler, once) when the run has no JSON state.

        Raises:
            RunNotFoundError: no run, or several runs, match; the data root does not exist.
            RLAError: the run only has the original's pickle state (never unpickled).
        """
        root = Path(data_root).expanduser()
        if not root.is_dir():
            raise RunNotFoundError(
                f"The data root {root} does not exist",
                expected="an existing data_root folder",
                found="no such folder",
                fix="pass the data_root the run was recorded in",
            )
        layout = find_run(root, str(record_date), task=task)
        return cls(layout, _read_state(layout, trust_pickles))

    @property
    def index(self) -> str:
        return self.layout.index

    @property
    def hyper_param(self) -> Dict[str, Any]:
        return dict(self.state.get("hyper_param") or {})

    @property
    def custom_data(self) -> Dict[str, Any]:
        return dict(self.state.get("custom_data") or {})

    @property
    def time_step(self) -> int:
        """The last checkpoint's step if any was saved, else the time-step at the last save of state."""
        custom = self.custom_data
        if isinstance(custom.get(TIME_STEP_KEY), int):
            return custom[TIME_STEP_KEY]
        return int(self.state.get("time_step") or 0)

    @property
    def framework(self) -> Optional[str]:
        config = self.state.get("config") or {}
        return config.get("DL_FRAMEWORK") if isinstance(config, dict) else None

    def saver(self, backend: Optional[str] = None) -> CheckpointSaver:
        """A read-only use of the run's checkpoint folder (the backend it was saved with by default)."""
        name = backend or backend_for_framework(self.framework)
        return CheckpointSaver(self.layout.checkpoint_dir, backend=name, max_to_keep=None)

    def has_checkpoints(self) -> bool:
        folder = self.layout.checkpoint_dir
        return folder.is_dir() and (
            any(p.name.startswith("checkpoint-") for p in folder.iterdir())
            or bool(legacy_checkpoints(folder))
        )

    def load_checkpoint(
        self,
        ckp_index: Union[None, int, str] = None,
        backend: Optional[str] = None,
        map_location: Any = "cpu",
    ) -> LoadedCheckpoint:
        """Load one of the run's checkpoints (the newest complete one by default).

        Raises:
            CheckpointError: no checkpoint, missing step, corrupt or foreign file.
        """
        saver = self.saver(backend)
        legacy = load_legacy_checkpoint(saver, ckp_index, map_location)
        if legacy is not None:
            return legacy
        try:
            return saver.load_checkpoint(ckp_index, map_location=map_location)
        except CheckpointError as exc:
            if "No such checkpoint" in exc.problem:
                raise CheckpointError(
                    f"Run {self.index} has no checkpoint to load "
                    f"({'step ' + str(ckp_index) if ckp_index is not None else 'any step'})",
                    expected=exc.expected,
                    found=f"{exc.found} in {self.layout.checkpoint_dir}",
                    fix=exc.fix,
                ) from exc
            raise


def _read_state(layout: RunLayout, trust_pickles: bool = False) -> Dict[str, Any]:
    state_file = layout.archive_tester_file
    if trust_pickles and not state_file.exists():
        convert_legacy_state(layout)
    if state_file.is_file():
        try:
            state = read_json(state_file)
        except ValueError as exc:
            raise RLAError(
                f"The resume state of run {layout.index} is not valid JSON",
                expected="the JSON written by exp_manager",
                found=f"{state_file}: {exc}",
                fix="restore the file from a backup or sync, or load its checkpoints with "
                "CheckpointSaver directly",
            ) from exc
        if isinstance(state, dict):
            return state
    info_file = layout.run_info_file
    if info_file.is_file():
        info = read_json(info_file)
        return {
            "hyper_param": info.get("hyper_params") or {},
            "hyper_param_record": info.get("tracked_keys") or [],
            "custom_data": {},
            "time_step": (info.get("last_checkpoint") or {}).get("step", 0),
            "config": info.get("config"),
            "index": info.get("index"),
        }
    text_state = state_from_text_files(layout)
    if text_state is not None:
        return text_state
    if state_file.with_suffix(".pkl").is_file():
        raise RLAError(
            f"Run {layout.index} only has the original RLA's pickled state",
            expected=f"{state_file.name} (JSON), or parameter.json / backup.txt with its hyper-parameters",
            found=f"{state_file.with_suffix('.pkl')}",
            fix=f"if the pickle is your own, convert it once with `rla migrate --convert-legacy-state "
            f"--data-root {layout.data_root} {layout.index}` or pass "
            f"ExperimentLoader(trust_pickles=True) (a restricted unpickler reads it)",
        )
    return {}
