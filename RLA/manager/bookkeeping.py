"""Bookkeeping options that scripts pass with their hyper-parameters but that are not ones.

``arg_parser_postprocess`` adds ``--info``, ``--loaded_date`` and ``--loaded_task_name``, and
scripts commonly have a ``--data_root``; ``exp_manager.set_hyper_param(**vars(args))`` hands
them over with the real hyper-parameters. They stay in ``exp_manager.hyper_param`` (the
loader reads ``loaded_date`` there, scripts read their own values), but what the run records
as hyper-parameters (``run.json``'s ``hyper_params``, ``parameter.json``, ``backup.txt``,
TensorBoard, the resume state) leaves them out: they go to ``run.json``'s own ``bookkeeping``
field. A bookkeeping key the run tracks in its name (``add_record_param(['info'])``) is a
hyper-parameter of that run and is recorded as one.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Mapping, Tuple

#: The keys kept out of the recorded hyper-parameters by default
#: (``exp_manager.bookkeeping_keys`` changes them per manager).
BOOKKEEPING_KEYS: Tuple[str, ...] = ("info", "loaded_date", "loaded_task_name", "data_root")


def split_bookkeeping(
    hyper_param: Mapping[str, Any], tracked: Iterable[str] = (), keys: Iterable[str] = BOOKKEEPING_KEYS
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``(hyper-parameters, bookkeeping)`` of ``hyper_param`` (neither is a copy of the values).

    Args:
        hyper_param: what the script set.
        tracked: the keys tracked in the run's name (they stay hyper-parameters).
        keys: the bookkeeping keys.
    """
    aside = set(keys) - set(tracked)
    params = {k: v for k, v in hyper_param.items() if k not in aside}
    bookkeeping = {k: v for k, v in hyper_param.items() if k in aside}
    return params, bookkeeping


def bookkeeping_of(manager: Any) -> Tuple[str, ...]:
    """The bookkeeping keys of ``manager`` not tracked in its run's name."""
    keys = getattr(manager, "bookkeeping_keys", BOOKKEEPING_KEYS)
    tracked = set(getattr(manager, "hyper_param_record", []) or [])
    return tuple(k for k in keys if k not in tracked)
