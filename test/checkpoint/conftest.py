"""Fixtures of the checkpoint tests: the backends every round trip runs over."""
from __future__ import annotations

import pytest

from small_disk import small_disk  # noqa: F401 - the 8 MiB tmpfs of the full-disk tests

BACKENDS = ["torch", "numpy"]


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """Every backend that works in this environment (each round trip runs once per backend)."""
    return request.param
