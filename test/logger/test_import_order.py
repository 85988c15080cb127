"""One logger, whatever the import order: ``from RLA import logger`` is always ``RLA.logger``.

Each order runs in a fresh interpreter (the module cache decides what a name is bound to, so
one process could only test one order). Every spelling of the logger a script may use records
into the same current ``Logger``: a row recorded through one spelling is dumped by another.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]

#: Statements a script may start with; each binds a name to "the logger" or pulls in a module
#: that imports it.
SPELLINGS: Dict[str, str] = {
    "from_rla": "from RLA import logger as from_rla",
    "core": "import RLA.logger as core",
    "face": "from RLA.easy_log import logger as face",
    "face_module": "import RLA.easy_log.logger as face_module",
    "tester": "import RLA.easy_log.tester",
    "exp_manager": "from RLA import exp_manager",
    "api": "from RLA.logger import api",
    "star": "from RLA import *",
}

#: After the imports: which object each spelling gave, and where records land.
CHECK = """
import json, sys
from RLA import logger as late
import RLA.logger
import RLA.easy_log.logger as face_late
core = sys.modules["RLA.logger"]  # the package itself (the attribute RLA.logger could be rebound)
out = {"late_is_core": late is core,
       "attr_is_core": sys.modules["RLA"].logger is core,
       "same_functions": all(getattr(face_late, n) is getattr(core, n)
                             for n in core.__all__ if n != "TensorBoardOutputFormat")}
if "from_rla" in globals():
    out["from_rla_is_core"] = from_rla is core
face_late.configure(sys.argv[1], ["csv"])
face_late.record_tabular("via_face", 1)
late.record_tabular("via_rla", 2)
core.api.record_tabular("via_api", 3)
out["same_logger"] = face_late.get_current() is late.get_current() is core.api.get_current()
out["row"] = sorted(late.dump_tabular())
late.reset()
print(json.dumps(out))
"""


#: Orders that differ in what is imported first and whether the face, the manager or the core
#: is loaded before ``from RLA import logger`` (each costs a fresh interpreter: kept short).
ORDERS: List[Tuple[str, ...]] = [
    ("from_rla",),
    ("face", "from_rla"),
    ("core", "from_rla"),
    ("api", "face_module", "from_rla"),
    ("tester", "from_rla"),
    ("exp_manager", "face", "from_rla"),
    ("from_rla", "face", "tester"),
    ("star", "face"),
    ("tester", "face_module", "core", "from_rla"),
]


def _start(order: Tuple[str, ...], log_dir: Path) -> "subprocess.Popen[str]":
    code = "\n".join(SPELLINGS[name] for name in order) + "\n" + CHECK
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen(
        [sys.executable, "-c", code, str(log_dir)],
        env=env,
        cwd=str(log_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _results(tmp_path: Path) -> Iterator[Tuple[Tuple[str, ...], Path, Dict[str, object]]]:
    """Run the orders two at a time (fresh interpreters); yield each one's report."""
    for first in range(0, len(ORDERS), 2):
        batch = []
        for i, order in enumerate(ORDERS[first : first + 2], start=first):
            log_dir = tmp_path / f"order{i}"
            log_dir.mkdir()
            batch.append((order, log_dir, _start(order, log_dir)))
        for order, log_dir, proc in batch:
            try:
                out, err = proc.communicate(timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
            assert proc.returncode == 0, f"order {order}:\n{err}"
            yield order, log_dir, json.loads(out.strip().splitlines()[-1])


ROW = ["time-step", "timestamp", "via_api", "via_face", "via_rla"]


@pytest.mark.timeout(300)
def test_from_rla_import_logger_is_the_core_in_every_import_order(tmp_path: Path) -> None:
    failures = []
    for order, log_dir, out in _results(tmp_path):
        checks = {k: v for k, v in out.items() if k != "row"}
        if checks != {k: True for k in checks} or len(checks) < 4:
            failures.append((order, checks))
        if out["row"] != ROW:
            failures.append((order, out["row"]))
        header = (log_dir / "progress.csv").read_text().splitlines()[0].split(",")
        if sorted(header) != ROW:
            failures.append((order, header))
    assert failures == []


def test_the_face_names_are_the_core_objects() -> None:
    import RLA.logger
    from RLA.easy_log import logger as face

    assert face.__all__ == RLA.logger.__all__
    for name in RLA.logger.__all__:
        assert getattr(face, name) is getattr(RLA.logger, name), name
    assert face.ma_dict is RLA.logger.get_current()._ma
