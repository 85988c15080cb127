"""progress.csv's rewrites (creation, a new column) are durable: temp fsynced, renamed, folder fsynced."""
from __future__ import annotations

import sys
from pathlib import Path

from RLA.logger import Logger, TimeStepHolder

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from write_order import WriteOrder  # noqa: E402


def test_csv_creation_is_fsynced_renamed_then_the_folder_fsynced(tmp_path: Path, monkeypatch) -> None:
    order = WriteOrder(monkeypatch)
    with Logger(tmp_path, ["csv"], time_step=TimeStepHolder()) as logger:
        logger.logkv("a", 1)
        logger.dumpkvs()
    order.assert_durable(tmp_path / "progress.csv")


def test_csv_widening_is_fsynced_renamed_then_the_folder_fsynced(tmp_path: Path, monkeypatch) -> None:
    with Logger(tmp_path, ["csv", "json"], time_step=TimeStepHolder()) as logger:
        logger.logkv("a", 1)
        logger.dumpkvs()
        order = WriteOrder(monkeypatch)  # record only the widening
        logger.logkv("a", 2)
        logger.logkv("b", 3)
        logger.dumpkvs()
    order.assert_durable(tmp_path / "progress.csv")
