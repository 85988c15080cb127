"""The manager reaches the sync engine and the query index only through its named plug-in points."""

from __future__ import annotations

from RLA.manager.plugins import RUN_CHANGED_HOOKS, SYNC_ENGINES


def test_the_registered_engines_and_hooks_resolve_to_the_real_ones() -> None:
    from RLA.query.catalog import mark_changed
    from RLA.sync.background import BackgroundSyncer
    from RLA.sync.syncer import RunSyncer

    assert SYNC_ENGINES.get("push") is RunSyncer
    assert SYNC_ENGINES.get("background") is BackgroundSyncer
    assert RUN_CHANGED_HOOKS.get("query-index") is mark_changed


def test_a_reopened_run_tells_every_run_changed_hook(tmp_path) -> None:
    from RLA.manager.plugins import tell_run_changed

    from RLA.layout import RunLayout

    run = RunLayout(tmp_path, "task", "2026/11/25", "10-00-00-000000_127.0.0.1", False)
    seen = []
    RUN_CHANGED_HOOKS.register("probe", lambda root, layouts: seen.append((root, list(layouts))))
    try:
        tell_run_changed(tmp_path, [run])  # no index file: the query hook does nothing
    finally:
        RUN_CHANGED_HOOKS.unregister("probe")
    assert seen == [(tmp_path, [run])]
