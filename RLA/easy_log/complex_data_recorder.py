"""Original import path of the recorders, bound to the default ``exp_manager`` and time-step.

``MatplotlibRecorder.save('curve')`` writes ``<results_dir>/<time-step>-curve.png`` of the
current run; ``cover=False`` never overwrites an existing file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from RLA.errors import RLAError
from RLA.logger.time_step import time_step_holder
from RLA.recorders import pretty_plot as _pretty_plot
from RLA.recorders import save_figure, save_image, save_video


def _results_dir() -> Optional[str]:
    from RLA.easy_log.tester import exp_manager

    return exp_manager.results_dir


def _tb_writer() -> Any:
    from RLA.easy_log import logger

    try:
        return logger.get_tbx_writer()
    except RLAError:
        return None  # TensorBoard output is not configured: files only


class MatplotlibRecorder:
    """Save matplotlib figures of the current run (the original's static API)."""

    @staticmethod
    def save(
        name: Optional[str] = None,
        fig: Any = None,
        cover: bool = False,
        add_timestamp: bool = True,
        results_dir: Optional[str] = None,
        **savefig_kw: Any,
    ) -> Optional[Path]:
        """Save ``fig`` (default: the current figure) as ``<results_dir>/<time-step>-<name>``.

        ``results_dir`` (polixir) saves elsewhere than the current run's results folder.
        """
        return save_figure(
            results_dir or _results_dir(),
            name or "figure",
            fig,
            step=time_step_holder.get_time(),
            cover=cover,
            add_timestamp=add_timestamp,
            **savefig_kw,
        )

    @staticmethod
    def pretty_plot_wrapper(
        name: str,
        plot_func: Callable[[], Any],
        cover: bool = False,
        legend_outside: bool = False,
        pretty_plot: bool = False,
        xlabel: str = "",
        ylabel: str = "",
        title: str = "",
        add_timestamp: bool = True,
        close_all_fig: bool = True,
        results_dir: Optional[str] = None,
        *args: Any,
        **kwargs: Any,
    ) -> Optional[Path]:
        """Call ``plot_func()`` on a fresh figure, add legend/labels/grid/title and save it (polixir's keywords).

        Args:
            pretty_plot: larger fonts for labels, ticks and title.
            close_all_fig: close every figure afterwards (else the drawn figure stays open).
            results_dir: save there instead of the current run's results folder.
            kwargs: passed on to ``savefig`` (as in the original), e.g. ``dpi=200``.
        """
        import matplotlib.pyplot as plt

        if args:  # the original handed these to save(), where they landed in fig=...
            raise RLAError(
                "pretty_plot_wrapper got extra positional arguments",
                expected="savefig options as keywords (dpi=200, format='pdf')",
                found=f"{len(args)} positional value(s) after results_dir",
                fix="pass them by name",
            )
        path = _pretty_plot(
            results_dir or _results_dir(),
            name,
            plot_func,
            time_step_holder.get_time(),
            cover,
            legend_outside,
            xlabel,
            ylabel,
            title,
            add_timestamp,
            close_all_fig,
            pretty=pretty_plot,
            savefig_kw=kwargs,
        )
        if close_all_fig:
            plt.close("all")
        return path


class ImgRecorder:
    """Save images (numpy arrays) of the current run as PNG (no OpenCV needed)."""

    @staticmethod
    def save(
        name: Optional[str] = None,
        img: Any = None,
        cover: bool = False,
        add_timestamp: bool = True,
        to_tensorboard: bool = False,
    ) -> Optional[Path]:
        """Save ``img`` as ``<results_dir>/<time-step>-<name>.png`` (and to TensorBoard if asked)."""
        if img is None:
            raise RLAError(
                "ImgRecorder.save needs an image",
                expected="img=<HxW[xC] array>",
                found="img=None",
                fix="pass the image array",
            )
        return save_image(
            _results_dir(),
            name or "image",
            img,
            step=time_step_holder.get_time(),
            cover=cover,
            add_timestamp=add_timestamp,
            tb_writer=_tb_writer() if to_tensorboard else None,
        )


class VideoRecorder:
    """Save videos (frame sequences) of the current run as mp4/gif, and to TensorBoard."""

    @staticmethod
    def save(
        name: str,
        frames: Any,
        fps: float = 30.0,
        cover: bool = False,
        add_timestamp: bool = True,
        to_tensorboard: bool = True,
    ) -> Optional[Path]:
        """Save ``frames`` as ``<results_dir>/<time-step>-<name>.mp4`` (``name.gif`` for a GIF).

        With ``to_tensorboard`` (and the tensorboard output configured) the clip is also
        added to TensorBoard at the current time-step.
        """
        return save_video(
            _results_dir(),
            name,
            frames,
            fps=fps,
            step=time_step_holder.get_time(),
            cover=cover,
            add_timestamp=add_timestamp,
            tb_writer=_tb_writer() if to_tensorboard else None,
        )


__all__ = ["MatplotlibRecorder", "ImgRecorder", "VideoRecorder"]
