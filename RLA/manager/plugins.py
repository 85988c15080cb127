"""The two points where a run's lifecycle calls code of the layer above, found by name.

The manager sits below ``RLA.sync`` and ``RLA.query`` (docs/ARCHITECTURE.md) and never imports
them. What it needs from them is looked up here when first used, the way output formats and
transports are: a run that pushes asks for the ``push`` and ``background`` sync engines, a run
reopened in place (``reattach``) tells every ``run_changed`` hook so the query index looks at
it again. Tests and other engines can register their own (``override=True``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Protocol, Sequence

from RLA.registry import Registry


class Pusher(Protocol):
    """What the ``push`` engine makes (``RLA.sync.syncer.RunSyncer``)."""

    def push(self, layouts: Sequence[Any]) -> Any: ...


class BackgroundPusher(Protocol):
    """What the ``background`` engine makes (``RLA.sync.background.BackgroundSyncer``)."""

    def submit(self, layouts: Sequence[Any]) -> None: ...

    def close(self, raise_errors: bool = True) -> Optional[Any]: ...


#: Makers of the objects that push one run: ``push(remote, data_root, project_root=, warn=)``
#: returns a syncer with ``push(layouts)``; ``background(syncer, warn=)`` one with
#: ``submit(layouts)`` and ``close(raise_errors=)``.
SYNC_ENGINES: Registry[Callable[..., Any]] = Registry("sync engine")
SYNC_ENGINES.register("push", "RLA.sync.syncer:RunSyncer")
SYNC_ENGINES.register("background", "RLA.sync.background:BackgroundSyncer")

#: ``hook(data_root, layouts)`` called after RLA rewrote runs in place (a reattached run).
RUN_CHANGED_HOOKS: Registry[Callable[..., None]] = Registry("run-changed hook")
RUN_CHANGED_HOOKS.register("query-index", "RLA.query.catalog:mark_changed")


def tell_run_changed(data_root: Any, layouts: list) -> None:
    """Call every registered ``run_changed`` hook with ``(data_root, layouts)``."""
    for name in RUN_CHANGED_HOOKS.names():
        RUN_CHANGED_HOOKS.get(name)(data_root, layouts)
