"""Delete runs: every data type of a run to ``<data_root>/.trash/`` (or for good with purge)."""

from __future__ import annotations

import os
from typing import Iterable, Union

from RLA.layout import RunLayout
from RLA.ops.plan import PURGE, TRASH, Plan, build_plan


def plan_delete(data_root: Union[str, os.PathLike], runs: Iterable[RunLayout], purge: bool = False) -> Plan:
    """Plan deleting ``runs``: to the trash, or permanently with ``purge=True``."""
    return build_plan(PURGE if purge else TRASH, data_root, runs, verb="purge" if purge else "delete")
