"""Stable-Baselines3 adapter: an SB3 output format that writes into RLA's logger and results.

Usage::

    from RLA.integrations.sb3 import configure_sb3_logger
    model = PPO("MlpPolicy", env)
    model.set_logger(configure_sb3_logger())   # SB3 scalars -> progress.csv / tb of the RLA run
    model.learn(10_000)

SB3's ``step`` (``num_timesteps``) becomes RLA's time-step; figures, images and videos go to
the run's results folder (and TensorBoard) through :mod:`RLA.recorders`.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

from RLA.errors import BackendNotInstalledError, RLAError
from RLA.logger.time_step import time_step_holder

try:
    from stable_baselines3.common import logger as sb3_logger
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise BackendNotInstalledError(
        "The SB3 adapter needs stable-baselines3",
        expected="stable_baselines3 importable",
        found=str(exc),
        fix="pip install stable-baselines3",
    ) from exc

#: Output-format names SB3 and RLA share (SB3 ``exclude`` tuples are passed on for these).
SHARED_FORMATS = ("stdout", "log", "json", "csv", "tensorboard")


def _safe_name(key: str) -> str:
    return key.replace("/", "_").replace(" ", "_")


class RLAOutputFormat(sb3_logger.KVWriter, sb3_logger.SeqWriter):
    """An SB3 ``KVWriter`` forwarding every dump to the RLA logger (one RLA row per SB3 dump).

    Args:
        manager: the RLA experiment manager whose results folder receives media
            (default: the global ``exp_manager``).
        sync_time_step: set RLA's time-step to SB3's ``num_timesteps`` at each dump.
    """

    def __init__(self, manager: Any = None, sync_time_step: bool = True) -> None:
        self._manager = manager
        self.sync_time_step = sync_time_step

    @property
    def manager(self) -> Any:
        if self._manager is not None:
            return self._manager
        from RLA.easy_log.tester import exp_manager

        return exp_manager

    def _tb_writer(self) -> Any:
        from RLA.logger import api as logger

        try:
            return logger.get_tbx_writer()
        except RLAError:
            return None

    def write(
        self, key_values: Dict[str, Any], key_excluded: Dict[str, Tuple[str, ...]], step: int = 0
    ) -> None:
        from RLA.logger import api as logger
        from RLA.recorders import save_figure, save_image, save_video

        if self.sync_time_step:
            time_step_holder.set_time(int(step))
        step = time_step_holder.get_time()
        results = self.manager.results_dir
        for key, value in sorted(key_values.items()):
            excluded = tuple(key_excluded.get(key) or ())
            if "rla" in excluded:
                continue
            if isinstance(value, sb3_logger.Video):
                raw: Any = value.frames  # a torch tensor or an array
                frames = raw.detach().cpu().numpy() if hasattr(raw, "detach") else raw
                frames = frames[0] if frames.ndim == 5 else frames  # SB3: (N, T, C, H, W)
                save_video(
                    results,
                    _safe_name(key) + ".gif",
                    frames.transpose(0, 2, 3, 1),
                    fps=value.fps,
                    step=step,
                    tb_writer=None if "tensorboard" in excluded else self._tb_writer(),
                    tag=key,
                )
            elif isinstance(value, sb3_logger.Figure):
                save_figure(results, _safe_name(key), value.figure, step=step, close=value.close)
            elif isinstance(value, sb3_logger.Image):
                save_image(
                    results,
                    _safe_name(key),
                    value.image,
                    step=step,
                    tb_writer=None if "tensorboard" in excluded else self._tb_writer(),
                    tag=key,
                )
            elif isinstance(value, sb3_logger.HParam):
                continue  # RLA records the run's hyper-parameters itself
            else:
                skip = [f for f in excluded if f in SHARED_FORMATS]
                logger.record_tabular(key, value, exclude=skip or None)
        logger.dump_tabular()

    def write_sequence(self, sequence: Sequence[Any]) -> None:
        from RLA.logger import api as logger

        logger.log(" ".join(str(item) for item in sequence))

    def close(self) -> None:
        """Nothing to release: the RLA logger belongs to the experiment manager."""


def configure_sb3_logger(
    manager: Any = None, extra_formats: Sequence[str] = (), sync_time_step: bool = True
) -> "sb3_logger.Logger":
    """An SB3 ``Logger`` writing into the current RLA run (pass it to ``model.set_logger``).

    Args:
        manager: the experiment manager (default: the global ``exp_manager``).
        extra_formats: SB3's own formats to keep as well (e.g. ``("stdout",)``); they write
            into the run's log dir.
        sync_time_step: SB3's ``num_timesteps`` becomes RLA's time-step.
    """
    rla = RLAOutputFormat(manager, sync_time_step=sync_time_step)
    folder: Optional[str] = rla.manager.log_dir
    formats = [rla] + [sb3_logger.make_output_format(name, folder or ".") for name in extra_formats]
    return sb3_logger.Logger(folder=folder, output_formats=formats)


__all__ = ["RLAOutputFormat", "configure_sb3_logger", "SHARED_FORMATS"]
