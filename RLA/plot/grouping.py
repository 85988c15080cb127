"""Group selected runs into curves: by hyper-parameter values (``split_keys``) or by reg."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from RLA.errors import RLAError
from RLA.plot.checks import split_value
from RLA.query.selection import RunRow

#: Value shown for a split key a run does not have (the original's "not found").
NOT_FOUND = "NF"


def default_key_to_legend(
    parse_dict: Dict[str, Any], split_keys: Sequence[str], y_name: str, use_y_name: bool = False
) -> str:
    """``'k1=v1, k2=v2'`` (plus ``' eval:<metric>'`` when several metrics share a plot)."""
    text = ", ".join(f"{key}={parse_dict[key]}" for key in split_keys)
    return f"{text} eval:{y_name}" if use_y_name else text


@dataclass
class Group:
    """One curve: its sort key, legend and runs."""

    key: Tuple[Any, ...]
    legend: str
    runs: List[RunRow] = field(default_factory=list)


def _sortable(value: Any) -> Tuple[int, Any]:
    if isinstance(value, bool):
        return (1, str(value))
    if isinstance(value, (int, float)):
        return (0, float(value))
    return (1, str(value))


def group_runs(
    runs_per_reg: Sequence[Sequence[RunRow]],
    split_keys: Sequence[str],
    metric: str,
    regs2legends: Optional[Sequence[str]] = None,
    key_to_legend_fn: Callable[..., str] = default_key_to_legend,
    use_y_name: bool = False,
) -> List[Group]:
    """Group runs; the order is by typed split-key values (numbers numerically), or reg order.

    A split key is a hyper-parameter or, for a run without one of that name, a run column
    (``task``, ``host`` ...): see :func:`RLA.plot.checks.split_value`.

    Raises:
        RLAError: ``regs2legends`` does not give one legend per reg.
    """
    if regs2legends is not None:
        if len(regs2legends) != len(runs_per_reg):
            raise RLAError(
                "regs2legends needs one legend per reg",
                expected=f"{len(runs_per_reg)} legends",
                found=f"{len(regs2legends)}",
                fix="give as many legends as regs",
            )
        return [
            Group((i,), str(legend), list(runs))
            for i, (legend, runs) in enumerate(zip(regs2legends, runs_per_reg))
            if runs
        ]
    groups: Dict[Tuple[Any, ...], Group] = {}
    seen = set()
    for runs in runs_per_reg:
        for row in runs:
            if row.index in seen:
                continue
            seen.add(row.index)
            values = {key: split_value(row, key, NOT_FOUND) for key in split_keys}
            key = tuple(_sortable(values[k]) for k in split_keys)
            if key not in groups:
                parse_dict = {k: str(v) for k, v in values.items()}
                groups[key] = Group(key, key_to_legend_fn(parse_dict, list(split_keys), metric, use_y_name))
            groups[key].runs.append(row)
    return [groups[k] for k in sorted(groups)]
