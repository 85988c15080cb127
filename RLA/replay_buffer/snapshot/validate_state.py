"""The check of a ReplayBuffer shard's small state: episode tracker, sampler and RNG.

Part of the one manifest check (:mod:`.validate`): a load rebuilds these objects from the
manifest, so ``verify`` must refuse what that rebuild would refuse (it said "OK" on episode
counters of ``"x"`` or ``10**30`` and on sampler options the sampler does not take).
"""

from __future__ import annotations

import collections
import math
from typing import Any, Dict

import numpy as np

from RLA.errors import CorruptSnapshotError, RLAError

#: Episode ids and steps are stored as int64.
INT64_MAX = (1 << 63) - 1


def _corrupt(where: Any, problem: str, expected: str, found: str) -> CorruptSnapshotError:
    from RLA.replay_buffer.snapshot.validate import corrupt

    return corrupt(where, problem, expected, found)


def _ints(values: Any, where: Any, what: str, lo: int, length: int) -> None:
    if (
        not isinstance(values, list)
        or len(values) != length
        or not all(type(v) is int and lo <= v <= INT64_MAX for v in values)
    ):
        raise _corrupt(
            where, f"bad {what}", f"a list of {length} integers in [{lo}, 2**63)", repr(values)[:80]
        )


def check_episodes(episodes: Dict[str, Any], envs: int, where: Any) -> None:
    """The episode tracker's counters: int64 integers, one per environment where listed."""
    for key in ("origin", "next_counter"):
        value = episodes.get(key, 0)
        if type(value) is not int or not -INT64_MAX <= value <= INT64_MAX:
            raise _corrupt(where, f"bad episodes.{key}", "an int64 integer", repr(value)[:80])
    _ints(episodes.get("current"), where, "episodes.current", -1, envs)
    _ints(episodes.get("step"), where, "episodes.step", 0, envs)


def _scalars(mapping: Any, where: Any, what: str) -> Dict[str, Any]:
    """``mapping`` when it maps names to JSON scalars with finite numbers."""
    if not isinstance(mapping, dict):
        raise _corrupt(where, f"bad {what}", "a mapping", repr(mapping)[:80])
    for key, value in mapping.items():
        if (
            value is not None
            and not isinstance(value, (bool, int, float, str))
            or isinstance(value, float)
            and not math.isfinite(value)
        ):
            raise _corrupt(
                where,
                f"bad {what} {key!r}",
                "a finite number, a string, true, false or null",
                repr(value)[:80],
            )
    return mapping


def check_sampler(sampler: Any, where: Any) -> None:
    """The sampler record: a registered kind that builds with its options and takes its state
    (numbers finite), as a load would do."""
    from RLA.replay_buffer.samplers import make_sampler

    if not isinstance(sampler, dict) or not isinstance(sampler.get("kind"), str):
        raise _corrupt(where, "bad sampler", "{kind, params, state}", repr(sampler)[:80])
    params = _scalars(sampler.get("params"), where, "sampler params")
    state = _scalars(sampler.get("state", {}), where, "sampler state")
    try:  # what a load does, on a throw-away sampler of one slot and no items
        make_sampler(sampler["kind"], 1, **params).load_state(
            state, collections.defaultdict(lambda: np.zeros(0)), 0
        )
    except (RLAError, TypeError, ValueError, OverflowError) as exc:
        raise _corrupt(
            where,
            f"bad sampler {sampler['kind']!r}",
            "a sampler and options this RLA builds",
            str(exc).splitlines()[0][:160],
        ) from None


def check_rng(state: Any, where: Any) -> None:
    """The random generator's state is one numpy accepts (checked on a throw-away generator)."""
    try:
        np.random.default_rng().bit_generator.state = state
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise _corrupt(
            where,
            "bad rng state",
            "the state of a numpy PCG64 generator",
            f"{type(exc).__name__}: {exc}"[:120],
        ) from None


def check_state(shard: Dict[str, Any], envs: int, where: Any) -> None:
    """Episodes, sampler and RNG of a ReplayBuffer shard (see the module doc)."""
    check_episodes(shard["episodes"], envs, where)
    check_sampler(shard["sampler"], where)
    if "rng" in shard:
        check_rng(shard["rng"], where)
