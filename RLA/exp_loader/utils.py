"""polixir's ``RLA.exp_loader.utils``: the archive_tester query (states read without unpickling)."""

from __future__ import annotations

from typing import Dict

from RLA.easy_log.const import ARCHIVE_TESTER
from RLA.query_tool import BasicQueryResult, experiment_data_query


def _archive_tester_query(
    data_root: str, task_table_name: str, reg: str, log_type: str = ARCHIVE_TESTER
) -> Dict[str, BasicQueryResult]:
    """``{index: ArchiveQueryResult}`` of the matching runs."""
    return experiment_data_query(data_root, task_table_name, reg, log_type)


__all__ = ["_archive_tester_query"]
