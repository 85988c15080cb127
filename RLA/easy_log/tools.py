"""The original's oldest helpers (``RLA.easy_log.tools``): ``DeleteLogTool`` and time records.

``DeleteLogTool(log_root, sub_proj, task, regex, config)`` selects the runs of
``<log_root>/<sub_proj>`` like :class:`RLA.easy_log.log_tools.DeleteLogTool` and deletes them
through RLA's plans (into ``.trash/``, every data type of a run together); ``config`` is a
:class:`~RLA.easy_log.log_tools.Filter` or ``None`` (every match).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from RLA.easy_log import logger
from RLA.easy_log.log_tools import DeleteLogTool as _DeleteLogTool
from RLA.easy_log.log_tools import Filter
from RLA.trackers.time_used_recorder import rc_start_time, time_record, time_record_end


class DeleteLogTool(_DeleteLogTool):
    """The first ``DeleteLogTool``: the database is ``<log_root>/<sub_proj>``."""

    def __init__(
        self,
        log_root: str,
        sub_proj: str,
        task: str,
        regex: str,
        config: Filter | None = None,
        optional_log_type: Sequence[str] | None = None,
    ) -> None:
        self.log_root, self.sub_proj, self.task, self.config = log_root, sub_proj, task, config
        super().__init__(
            os.path.join(log_root, sub_proj),
            task,
            regex,
            config or Filter(),
            optional_log_type=optional_log_type,
        )

    def delete_related_log(
        self,
        skip_ask: bool = False,
        delete_log_types: Sequence[str] | None = None,
    ) -> int:
        """Show the matches, ask ``delete these files? (y/n)``, delete; returns the (run x type) count."""
        return super().delete_related_log(skip_ask=skip_ask, delete_log_types=delete_log_types)


def time_used_wrap(name: str, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``func(*args, **kwargs)``, record ``time_used/<name>``, dump the row; returns its output."""
    start = time.perf_counter()
    output = func(*args, **kwargs)
    used = time.perf_counter() - start
    logger.info(f"[test] func {name} time used {used:.2f}")
    logger.record_tabular(f"time_used/{name}", used)
    logger.dump_tabular()
    return output


__all__ = ["DeleteLogTool", "rc_start_time", "time_record", "time_record_end", "time_used_wrap"]
