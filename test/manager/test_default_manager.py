"""The core finds the global ``exp_manager`` through ``RLA.manager.default``, not through the face."""

from __future__ import annotations

import subprocess
import sys


def test_the_face_registers_exp_manager_as_the_default() -> None:
    from RLA.easy_log.tester import exp_manager
    from RLA.loader.loader import ExperimentLoader
    from RLA.manager.default import default_manager

    assert default_manager() is exp_manager
    assert ExperimentLoader().manager is exp_manager


def test_the_loader_imported_alone_does_not_load_the_face_and_later_sees_exp_manager() -> None:
    code = (
        "import sys\n"
        "from RLA.loader.loader import ExperimentLoader\n"
        "loader = ExperimentLoader()\n"
        "plain = loader.manager\n"
        "assert 'RLA.easy_log.tester' not in sys.modules\n"
        "assert loader.manager is plain\n"
        "from RLA import exp_manager\n"
        "assert loader.manager is exp_manager\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
