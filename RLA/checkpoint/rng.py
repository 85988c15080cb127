"""Capture and restore random-number-generator states (python, numpy, torch) for resuming."""

from __future__ import annotations

import random
import sys
from typing import Any, Dict, Mapping, Optional

import numpy as np

from RLA.errors import CheckpointError


def capture_rng_state(generators: Optional[Mapping[str, np.random.Generator]] = None) -> Dict[str, Any]:
    """The state of the global generators, storable in a checkpoint.

    Covers ``random``, ``numpy.random`` (legacy global) and, if torch is already imported,
    torch's CPU generator and every CUDA device's. ``generators`` adds named numpy
    ``Generator`` objects the training code owns.
    """
    version, internal, gauss = random.getstate()
    state: Dict[str, Any] = {"python": {"version": version, "internal": list(internal), "gauss_next": gauss}}
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state["numpy"] = {
        "kind": kind,
        "keys": keys,
        "pos": int(pos),
        "has_gauss": int(has_gauss),
        "cached_gaussian": float(cached),
    }
    torch = sys.modules.get("torch")  # never import torch just to look at its RNG
    if torch is not None:
        state["torch"] = torch.get_rng_state()
        if torch.cuda.is_available():
            state["torch_cuda"] = list(torch.cuda.get_rng_state_all())
    if generators:
        state["generators"] = {name: gen.bit_generator.state for name, gen in generators.items()}
    return state


def restore_rng_state(
    state: Mapping[str, Any], generators: Optional[Mapping[str, np.random.Generator]] = None
) -> None:
    """Put the generators back into a state returned by :func:`capture_rng_state`.

    Raises:
        CheckpointError: the state is malformed, or a requested generator was not saved.
    """
    try:
        py = state.get("python")
        if py is not None:
            random.setstate((py["version"], tuple(int(x) for x in py["internal"]), py["gauss_next"]))
        nps = state.get("numpy")
        if nps is not None:
            np.random.set_state(
                (
                    nps["kind"],
                    np.asarray(nps["keys"], dtype=np.uint32),
                    nps["pos"],
                    nps["has_gauss"],
                    nps["cached_gaussian"],
                )
            )
        if "torch" in state:
            import torch

            torch.set_rng_state(_byte_tensor(state["torch"]))
            if "torch_cuda" in state and torch.cuda.is_available():
                torch.cuda.set_rng_state_all([_byte_tensor(s) for s in state["torch_cuda"]])
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(
            "The saved random-generator state cannot be restored",
            expected="a dict from capture_rng_state()",
            found=f"{type(exc).__name__}: {exc}",
            fix="save the checkpoint again with save_rng=True",
        ) from exc
    for name, gen in (generators or {}).items():
        saved = state.get("generators", {})
        if name not in saved:
            raise CheckpointError(
                f"No saved state for the generator {name!r}",
                expected=f"one of {sorted(saved) or '(none saved)'}",
                found=repr(name),
                fix="pass the same generators= to save and load",
            )
        gen.bit_generator.state = saved[name]


def _byte_tensor(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device="cpu", dtype=torch.uint8)
    return torch.as_tensor(np.asarray(value, dtype=np.uint8))
