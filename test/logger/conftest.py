"""Fixtures of the logger tests: a clean module face and time-step for every test."""
from __future__ import annotations

from typing import Iterator

import pytest

from small_disk import small_disk  # noqa: F401 - the 8 MiB tmpfs of the full-disk tests

from RLA.easy_log import logger as face
from RLA.logger.time_step import time_step_holder


@pytest.fixture(autouse=True)
def clean_logger() -> Iterator[None]:
    """Every test starts and ends with the stdout-only default logger at time-step 0."""
    face.reset()
    time_step_holder.config(0)
    yield
    face.reset()
    time_step_holder.config(0)
