"""Checkpoints: backends (torch, numpy, tensorflow slot), the rotating saver and RNG state capture.

Importing this package does not import torch; the torch backend imports it when used.
"""

from __future__ import annotations

from RLA.checkpoint.base import CheckpointBackend
from RLA.checkpoint.registry import backend_for_framework, backends, get_backend
from RLA.checkpoint.rng import capture_rng_state, restore_rng_state
from RLA.checkpoint.saver import CheckpointSaver, LoadedCheckpoint

__all__ = [
    "CheckpointBackend",
    "CheckpointSaver",
    "LoadedCheckpoint",
    "backends",
    "get_backend",
    "backend_for_framework",
    "capture_rng_state",
    "restore_rng_state",
]
