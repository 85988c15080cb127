"""polixir's ``RLA.easy_plot.utils.results_loader``: per-run results of the runs matching some
globs, with their hyper-parameters, filtered by ``hp_filter_dict``.

The hyper-parameters come from what RLA's query reads (``run.json``, ``parameter.json``,
``backup.txt``...); no pickle is ever loaded (the original unpickled every run's Tester).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from RLA.easy_plot.result_cls import Result
from RLA.errors import RLAError
from RLA.query_tool import experiment_data_query


def _params_by_index(data_root: str, task_table_name: str, reg: str) -> dict[str, dict[str, Any]]:
    from RLA.query import select_runs

    rows = select_runs(data_root, task=task_table_name or None, regex=[reg]).runs
    return {row.layout.record_date: dict(row.params) for row in rows}


def _kept(
    hyper_param: dict[str, Any], hp_filter_dict: dict[str, Sequence[Any]] | None, where: str, verbose: bool
) -> bool:
    """Whether the run passes ``hp_filter_dict`` (values compared as strings, as in the original)."""
    for key, allowed in (hp_filter_dict or {}).items():
        if key not in hyper_param:
            if verbose:
                print(f"[WARN] the key {key} in hp_filter_dict can not be found in the experiment log", where)
            continue
        if str(hyper_param[key]) not in {str(v) for v in allowed}:
            if verbose:
                print(
                    f"skip the experiment log {where} which {key} is {hyper_param[key]} not in {list(allowed)}"
                )
            return False
    return True


def results_loader(
    data_root: str,
    task_table_name: str,
    regs: Sequence[str],
    hp_filter_dict: dict[str, Sequence[Any]] | None,
    data_loader_func: Callable[[Any], Any],
    verbose: bool,
    data_type: str,
) -> tuple[list[Result], dict[str, list[Result]]]:
    """``(results, {reg: results})``: ``data_loader_func(query result)`` per matching run of ``data_type``.

    A loader returning ``None`` skips the run; each result gets ``hyper_param``.

    Raises:
        RLAError: ``data_loader_func`` returned something other than a ``Result``.
    """
    results: list[Result] = []
    reg_group: dict[str, list[Result]] = {}
    for reg in regs:
        reg_group[reg] = []
        print("searching", reg)
        params = _params_by_index(data_root, task_table_name, reg)
        for index, hit in experiment_data_query(data_root, task_table_name, reg, data_type).items():
            result = data_loader_func(hit)
            if result is None:
                continue
            if not isinstance(result, Result):
                raise RLAError(
                    "data_loader_func must return a Result",
                    expected="an RLA.easy_plot.result_cls Result (or None to skip)",
                    found=type(result).__name__,
                    fix="wrap the data in CsvResult/ImgResult",
                )
            result.hyper_param = params.get(index, {})
            if not _kept(result.hyper_param, hp_filter_dict, hit.dirname, verbose):
                continue
            results.append(result)
            reg_group[reg].append(result)
        print("find log number", len(reg_group[reg]))
    return results, reg_group


__all__ = ["results_loader"]
