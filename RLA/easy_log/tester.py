"""Original import path of the global experiment manager (``exp_manager``), the ``Tester`` class
and the original's module-level loaders (``import_hyper_parameters``...)."""

from RLA.easy_log.original_tester import (
    Tester,
    fork_tester_log_files,
    import_hyper_parameters,
    load_from_record_date,
)
from RLA.manager.default import set_default_manager
from RLA.manager.experiment import ExperimentManager

#: The default manager every script configures once.
exp_manager = tester = Tester()
set_default_manager(exp_manager)  # core code reads it from RLA.manager.default, never from this face

__all__ = [
    "ExperimentManager",
    "Tester",
    "exp_manager",
    "fork_tester_log_files",
    "import_hyper_parameters",
    "load_from_record_date",
    "tester",
]
