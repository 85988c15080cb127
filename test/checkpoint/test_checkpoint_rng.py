"""RNG capture/restore: python, numpy (global and Generators) and torch continue the same stream."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from RLA.checkpoint import CheckpointSaver, capture_rng_state, restore_rng_state
from RLA.errors import CheckpointError


def draw(gen: np.random.Generator) -> tuple:
    return random.random(), float(np.random.rand()), float(torch.rand(1)), float(gen.normal())


@pytest.mark.timeout(60)
def test_restored_generators_draw_the_same_numbers(tmp_path, backend):
    gen = np.random.default_rng(3)
    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    draw(gen)
    saver = CheckpointSaver(tmp_path, backend=backend)
    saver.save(1, {"rng": capture_rng_state(generators={"env": gen})})
    expected = [draw(gen) for _ in range(3)]
    random.seed(99), np.random.seed(99), torch.manual_seed(99)
    other = np.random.default_rng(99)
    restore_rng_state(saver.load()[1]["rng"], generators={"env": other})
    assert [draw(other) for _ in range(3)] == expected


@pytest.mark.timeout(60)
def test_unknown_generator_and_malformed_state_are_errors():
    with pytest.raises(CheckpointError, match="'env'"):
        restore_rng_state(capture_rng_state(), generators={"env": np.random.default_rng()})
    with pytest.raises(CheckpointError, match="cannot be restored"):
        restore_rng_state({"python": {"version": 3}})
