"""The original ``RLA.easy_log.const`` names: the data-type folders of a database."""

from __future__ import annotations

from RLA import layout

LOG = layout.LOG
CODE = layout.CODE
CHECKPOINT = layout.CHECKPOINT
ARCHIVE_TESTER = layout.ARCHIVE_TESTER
OTHER_RESULTS = layout.RESULTS
ARCHIVED_TABLE = layout.ARCHIVE
#: polixir's scratch and hyper-parameter folders (read by RLA, not written).
TMP_DATA = "tmp_data"
HYPARAMETER = "hyperparameter"
HYPARAM_FILE_NAME = "parameter"
#: The data types the original's tools act on (RLA's own ``replay`` is added by RLA's tools).
default_log_types = [LOG, CODE, CHECKPOINT, ARCHIVE_TESTER, OTHER_RESULTS, TMP_DATA, HYPARAMETER]


class LoadTesterMode:
    """The original's loader mode name."""

    FORK_TO_NEW = "fork"


class LogDataType:
    """Values of ``LOG_USED``."""

    TB = "tensorboard"
    CSV = "csv"
    TXT = "log"
    STDOUT = "stdout"


__all__ = [
    "LOG",
    "CODE",
    "CHECKPOINT",
    "ARCHIVE_TESTER",
    "OTHER_RESULTS",
    "ARCHIVED_TABLE",
    "TMP_DATA",
    "HYPARAMETER",
    "HYPARAM_FILE_NAME",
    "default_log_types",
    "LoadTesterMode",
    "LogDataType",
]
