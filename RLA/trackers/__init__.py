"""Trackers: time spent in named code sections and memory use, recorded through the logger."""

from __future__ import annotations

from RLA.trackers.memory_tracker import MemoryTracker, memory_tracker
from RLA.trackers.time_tracker import SectionStats, TimeTracker, time_tracker

__all__ = ["TimeTracker", "SectionStats", "time_tracker", "MemoryTracker", "memory_tracker"]
