"""Per-env episode bookkeeping: episode ids and steps on add, classification on save."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from RLA.errors import ReplayBufferError
from RLA.replay_buffer.schema import FLAG_LAST

#: Bits of an episode id reserved for the per-origin counter; the origin rank sits above.
COUNTER_BITS = 40
#: Episode classes reported on save.
CLASSES = ("complete", "headless", "open", "headless_open")
#: What may be done with each class when a snapshot is loaded with a policy.
POLICIES = ("keep", "carry", "mark_truncated", "drop")


def make_episode_id(origin: int, counter: np.ndarray | int) -> np.ndarray:
    """Globally unique id: ``origin_rank << 40 | local counter``."""
    return (np.int64(origin) << np.int64(COUNTER_BITS)) | np.asarray(counter, dtype=np.int64)


def episode_counter(ids: np.ndarray) -> np.ndarray:
    return np.asarray(ids, dtype=np.int64) & np.int64((1 << COUNTER_BITS) - 1)


class EpisodeTracker:
    """Tracks the open episode and next step of every env of one rank.

    Args:
        num_envs: number of envs feeding the buffer (``env_ids`` are ``0..num_envs-1``).
        origin: the rank that mints new episode ids.
    """

    def __init__(self, num_envs: int = 1, origin: int = 0) -> None:
        if int(num_envs) < 1:
            raise ReplayBufferError(
                "num_envs must be positive",
                expected=">= 1",
                found=str(num_envs),
                fix="pass num_envs=1 or more",
            )
        self.num_envs = int(num_envs)
        self.origin = int(origin)
        self.next_counter = 0
        self.current = np.full(self.num_envs, -1, dtype=np.int64)  # -1: no open episode
        self.step = np.zeros(self.num_envs, dtype=np.int64)

    def _new_ids(self, n: int) -> np.ndarray:
        ids = make_episode_id(self.origin, np.arange(self.next_counter, self.next_counter + n))
        self.next_counter += n
        return ids

    def assign(self, env_ids: np.ndarray, done: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Episode id and step of each new item (items of one env are in time order)."""
        n = len(env_ids)
        if n and (env_ids.min() < 0 or env_ids.max() >= self.num_envs):
            raise ReplayBufferError(
                "env_ids out of range",
                expected=f"0 <= env_id < num_envs={self.num_envs}",
                found=f"[{env_ids.min()}, {env_ids.max()}]",
                fix="build the buffer with a larger num_envs",
            )
        ep_out = np.empty(n, dtype=np.int64)
        step_out = np.empty(n, dtype=np.int64)
        for env in np.unique(env_ids):
            pos = np.flatnonzero(env_ids == env)
            d = done[pos]
            seg = np.concatenate(([0], np.cumsum(d[:-1]))).astype(np.int64)
            n_new = int(seg[-1]) + (1 if self.current[env] < 0 else 0)
            new_ids = self._new_ids(n_new)
            if self.current[env] < 0:
                ids_by_seg = new_ids
                base0 = 0
            else:
                ids_by_seg = np.concatenate(([self.current[env]], new_ids))
                base0 = int(self.step[env])
            ep_out[pos] = ids_by_seg[seg]
            first = np.concatenate(([0], np.flatnonzero(np.diff(seg)) + 1))
            seg_start = np.repeat(first, np.diff(np.append(first, len(pos))))
            steps = np.arange(len(pos)) - seg_start
            steps[seg == 0] += base0
            step_out[pos] = steps
            if d[-1]:
                self.current[env], self.step[env] = -1, 0
            else:
                self.current[env] = ids_by_seg[seg[-1]]
                self.step[env] = steps[-1] + 1
        return ep_out, step_out

    def state(self) -> Dict[str, Any]:
        return {
            "num_envs": self.num_envs,
            "origin": self.origin,
            "next_counter": self.next_counter,
            "current": self.current.tolist(),
            "step": self.step.tolist(),
        }

    def load_state(self, state: Dict[str, Any]) -> None:
        if int(state["num_envs"]) != self.num_envs:
            raise ReplayBufferError(
                "Snapshot num_envs differs from the buffer's",
                expected=str(self.num_envs),
                found=str(state["num_envs"]),
                fix="build the buffer with the snapshot's num_envs or load with world_size resharding",
            )
        self.origin = int(state["origin"])
        self.next_counter = int(state["next_counter"])
        self.current = np.asarray(state["current"], dtype=np.int64)
        self.step = np.asarray(state["step"], dtype=np.int64)

    def reset(self) -> None:
        self.current.fill(-1)
        self.step.fill(0)


def episode_table(
    ep: np.ndarray, step: np.ndarray, flags: np.ndarray, order: np.ndarray
) -> Dict[str, np.ndarray]:
    """Group valid slots (given in ring order, oldest first) by episode.

    Returns arrays aligned per episode: ``id``, ``first_pos`` (ring position of its oldest
    stored step), ``length``, ``min_step``, ``has_last`` and ``slots`` offsets into
    ``slots_sorted`` (slots of each episode in step order).
    """
    ep_o = ep[order]
    # Items of one episode are written in step order, so ring order is step order inside an
    # episode: a stable sort by episode id alone groups them (much cheaper than lexsort).
    srt = np.argsort(ep_o, kind="stable")
    ep_s = ep_o[srt]
    if ep_s.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return {
            "id": z,
            "first_pos": z,
            "length": z,
            "min_step": z,
            "has_last": z.astype(bool),
            "start": z,
            "slots_sorted": z,
        }
    boundaries = np.flatnonzero(ep_s[1:] != ep_s[:-1]) + 1
    start = np.concatenate(([0], boundaries))
    length = np.diff(np.append(start, ep_s.size))
    slots_sorted = order[srt]
    last_slot = slots_sorted[start + length - 1]
    first_pos = srt[start]
    return {
        "id": ep_s[start],
        "first_pos": first_pos.astype(np.int64),
        "length": length,
        "min_step": step[slots_sorted[start]],
        "has_last": (flags[last_slot] & FLAG_LAST) > 0,
        "start": start,
        "slots_sorted": slots_sorted,
    }


def classify(table: Dict[str, np.ndarray]) -> np.ndarray:
    """Class name of every episode of :func:`episode_table` (see :data:`CLASSES`)."""
    headless = table["min_step"] > 0
    open_ = ~table["has_last"]
    names = np.array(CLASSES)
    return names[np.where(open_, np.where(headless, 3, 2), np.where(headless, 1, 0))]


def report(table: Dict[str, np.ndarray]) -> Dict[str, Dict[str, int]]:
    """Counts of episodes and steps per class (what the manifest records and the log shows)."""
    cls = classify(table)
    out: Dict[str, Dict[str, int]] = {}
    for name in CLASSES:
        mask = cls == name
        out[name] = {"episodes": int(mask.sum()), "steps": int(table["length"][mask].sum())}
    return out


def check_policy(policy: Dict[str, str] | None) -> Dict[str, str]:
    """Validate an episode policy mapping (class -> action); missing classes keep."""
    merged = {"complete": "keep", "headless": "keep", "open": "carry", "headless_open": "carry"}
    for cls, action in (policy or {}).items():
        if cls not in CLASSES or action not in POLICIES:
            raise ReplayBufferError(
                "Bad episode policy",
                expected=f"classes {CLASSES} mapped to one of {POLICIES}",
                found=f"{cls!r}: {action!r}",
                fix="fix the episode_policy mapping",
            )
        if cls == "complete" and action != "keep":
            raise ReplayBufferError(
                "Complete episodes are always kept",
                expected="'keep'",
                found=repr(action),
                fix="drop the 'complete' entry",
            )
        merged[cls] = action
    return merged


def describe_report(rep: Dict[str, Dict[str, int]]) -> str:
    """One log line for a classification report."""
    parts: List[str] = [f"{k}={v['episodes']} ({v['steps']} steps)" for k, v in rep.items()]
    return "episodes: " + ", ".join(parts)
