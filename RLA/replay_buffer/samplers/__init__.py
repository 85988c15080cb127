"""Samplers (uniform, prioritized, without replacement, sequence) behind one registry."""

from RLA.replay_buffer.samplers.base import SAMPLERS, Sampler, make_sampler

__all__ = ["SAMPLERS", "Sampler", "make_sampler"]
