"""Narrow a query's candidates by evaluating single-parameter terms once per distinct value.

Sweeps repeat a few values of each hyper-parameter over many runs (4 envs x 5 algos x 25
seeds ...). A top-level ``and`` term that reads one hyper-parameter and nothing else
(``algo in ['sac', 'td3']``, ``lr >= 1e-4``, ``matches(env, 'Hop')``) has the same truth
value for every run holding the same value, so it is evaluated once per distinct value
and the runs of the passing values are kept. The exact row-by-row evaluation of the whole
query then runs on the survivors only: the pre-filter may keep too many runs, never too
few (runs lacking the parameter, unhashable values and terms that raise are always kept).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from RLA.query.expr import Query, RowView
from RLA.query.records import RunRecord

#: ``{value key: (value, ids of records)}`` plus the ids of records that cannot be grouped.
ValueGroups = Tuple[Dict[Tuple[str, Any], Tuple[Any, List[int]]], List[int]]


def group_values(name: str, records: Iterable[RunRecord]) -> ValueGroups:
    """Group records (by ``id``; the caller keeps them alive) by their (type, value) of
    hyper-parameter ``name``."""
    groups: Dict[Tuple[str, Any], Tuple[Any, List[int]]] = {}
    ungrouped: List[int] = []
    for record in records:
        key = id(record)
        params = record.params
        if name not in params:
            ungrouped.append(key)  # the name may be a run column here: evaluated row by row
            continue
        value = params[name]
        try:
            slot = groups.get((type(value).__name__, value))
        except TypeError:  # unhashable (a list value)
            ungrouped.append(key)
            continue
        if slot is None:
            groups[(type(value).__name__, value)] = (value, [key])
        else:
            slot[1].append(key)
    return groups, ungrouped


def candidates(query: Query, groups_of: Callable[[str], ValueGroups]) -> Tuple[Optional[Set[int]], Set[int]]:
    """Ids of the records that may match ``query``, and those of them still to be evaluated.

    Returns:
        ``(keep, unsure)``: ``keep`` is None when no term of the query can be used. A kept
        record is *sure* when every term of the query was decided for its value; the
        others (``unsure``) must go through the exact evaluation.

    Args:
        query: the parsed query.
        groups_of: :func:`group_values` of a name over every run in scope (memoised by the caller).
    """
    keep: Optional[Set[int]] = None
    unsure: Set[int] = set()
    all_used = True
    for names, metrics, term in query.conjuncts:
        if len(names) != 1 or metrics:
            all_used = False
            continue
        name = next(iter(names))
        groups, ungrouped = groups_of(name)
        passing: Set[int] = set(ungrouped)
        unsure.update(ungrouped)
        for value, keys in groups.values():
            try:
                ok = bool(term(RowView({name: value}, {}, None)))
            except Exception:  # noqa: BLE001 - let the exact evaluation decide
                ok = True
                unsure.update(keys)
            if ok:
                passing.update(keys)
        keep = passing if keep is None else keep & passing
        if not keep:
            break
    if keep is None:
        return None, set()
    return keep, (set(keep) if not all_used else unsure & keep)
