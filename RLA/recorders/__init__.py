"""Recorders of unstructured results: figures, images and videos under a run's results folder.

Each recorder takes its target folder (and optional TensorBoard writer) as arguments; the
original-face classes in :mod:`RLA.easy_log.complex_data_recorder` bind them to the
default ``exp_manager`` and time-step at call time.
"""

from __future__ import annotations

from RLA.recorders.base import publish, result_path
from RLA.recorders.figure import pretty_plot, save_figure
from RLA.recorders.image import save_image, to_uint8_image
from RLA.recorders.video import add_video_to_tensorboard, save_video, to_frames

__all__ = [
    "result_path",
    "publish",
    "save_figure",
    "pretty_plot",
    "save_image",
    "to_uint8_image",
    "save_video",
    "to_frames",
    "add_video_to_tensorboard",
]
