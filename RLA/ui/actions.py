"""The dashboard's actions on runs: archive, delete (to the trash), restore, undelete, tag, note.

Archive / delete / restore / undelete go through :mod:`RLA.ops` (plan, then apply), the same
code as ``rla archive`` / ``rla delete`` / ``rla archive --restore`` / ``rla trash restore``
(``undelete`` takes the indices of trashed runs). A request first gets the plan
(``describe``), which the page shows in its confirmation dialog; only a second request
with ``confirm: true`` applies it.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Sequence

from RLA.annotations import (
    Annotations,
    add_tags,
    read_annotations,
    remove_tags,
    set_note,
)
from RLA.errors import RLAError
from RLA.ui.lookup import resolve_run

ACTIONS = ("archive", "delete", "restore", "undelete")
MAX_RUNS = 1000


class ActionError(RLAError):
    """An action request the dashboard refuses (unknown action, read-only, no runs)."""

    exit_code = 2


class ReadOnlyError(ActionError):
    """The dashboard runs read-only (``--read-only``, or bound off loopback)."""

    http_status = 403


def _plan(data_root: os.PathLike, action: str, indices: Sequence[str]) -> Any:
    from RLA.ops import plan_archive, plan_delete

    if action not in ACTIONS:
        raise ActionError(
            f"Unknown action {action!r}",
            expected=f"one of {', '.join(ACTIONS)}",
            found=repr(action),
            fix="pick a listed action",
        )
    if not indices or len(indices) > MAX_RUNS or not all(isinstance(i, str) for i in indices):
        raise ActionError(
            "Bad run list",
            expected=f"1 to {MAX_RUNS} run indices",
            found=f"{len(indices) if isinstance(indices, list) else type(indices).__name__}",
            fix="tick runs on the runs page",
        )
    if action == "undelete":
        from RLA.ops.trash import find_trashed, plan_restore

        return plan_restore(data_root, find_trashed(data_root, indices))
    archived = action == "restore"
    layouts = [resolve_run(data_root, index, archived=archived) for index in indices]
    if action == "delete":
        return plan_delete(data_root, layouts)
    return plan_archive(data_root, layouts, restore=archived)


def run_action(data_root: os.PathLike, action: str, indices: List[str], confirm: bool) -> Dict[str, Any]:
    """Plan ``action`` on ``indices``; apply it only when ``confirm`` is true.

    Returns:
        ``{"action", "plan": text, "applied": bool, "runs": [{"index", "result", "conflict"}]}``.

    Raises:
        ActionError, RunNotFoundError, UnsafePathError: a bad request (nothing changed).
    """
    plan = _plan(data_root, action, indices)
    text = plan.describe()
    if confirm is True:
        plan.apply()
    return {
        "action": action,
        "plan": text,
        "applied": confirm is True,
        "runs": [{"index": p.index, "result": p.result, "conflict": p.conflict} for p in plan.runs],
    }


def annotate(data_root: os.PathLike, index: str, body: Dict[str, Any]) -> Annotations:
    """Change a run's tags / note: ``{"add": [...], "remove": [...], "note": "..."}``."""
    layout = resolve_run(data_root, index)
    add, remove = body.get("add") or [], body.get("remove") or []
    if not isinstance(add, list) or not isinstance(remove, list):
        raise ActionError(
            "Bad tag change",
            expected='{"add": [tags], "remove": [tags]}',
            found=repr(body)[:200],
            fix="send lists of tags",
        )
    if add:
        add_tags(layout, add)
    if remove:
        remove_tags(layout, remove)
    if "note" in body:
        set_note(layout, body["note"])
    return read_annotations(layout)
