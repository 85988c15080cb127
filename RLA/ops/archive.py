"""Archive runs: move (or copy) every data type of a run to ``<data_root>/arc/``, or back."""

from __future__ import annotations

import os
from typing import Iterable, Union

from RLA.layout import RunLayout
from RLA.ops.plan import COPY, MOVE, Plan, build_plan


def plan_archive(
    data_root: Union[str, os.PathLike], runs: Iterable[RunLayout], copy: bool = False, restore: bool = False
) -> Plan:
    """Plan archiving ``runs`` (all data types together).

    Args:
        data_root: the database root.
        runs: active runs (or archived runs with ``restore=True``).
        copy: keep the originals (the original project's behaviour).
        restore: move archived runs back to the active tables.
    """
    return build_plan(
        COPY if copy else MOVE,
        data_root,
        runs,
        target=lambda run: run.moved(archived=not restore),
        verb="restore" if restore else "archive",
    )
