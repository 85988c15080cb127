"""Operations on whole runs (archive, delete, migrate): plan first, then apply.

Example::

    from RLA.query import select_runs
    from RLA.ops import plan_delete
    runs = [row.layout for row in select_runs("./data", task="demo", where="lr > 0.1")]
    plan = plan_delete("./data", runs)
    print(plan.describe())      # nothing changed yet
    plan.apply()                # every data type of each run goes to ./data/.trash/

``apply`` takes the data root's lock, finishes any interrupted operation and writes an
intent journal before it moves anything; :func:`RLA.ops.fsck.scan` / :func:`repair` check
and repair a data root (``rla fsck``).
"""

from __future__ import annotations

from RLA.ops.archive import plan_archive
from RLA.ops.delete import plan_delete
from RLA.ops.migrate import plan_migrate
from RLA.ops.plan import ACTIONS, Plan, RunPlan, Step, build_plan, inside
from RLA.ops.recover import Recovery, recover

__all__ = [
    "ACTIONS",
    "Plan",
    "Recovery",
    "RunPlan",
    "Step",
    "build_plan",
    "inside",
    "plan_archive",
    "plan_delete",
    "plan_migrate",
    "recover",
]
