"""Original import path of the global experiment manager (``exp_manager``), the ``Tester`` class
and the original's module-level loaders (``import_hyper_parameters``...)."""

from RLA.easy_log.original_tester import (
    Tester,
    fork_tester_log_files,
    import_hyper_parameters,
    load_from_record_date,
)
from RLA.manager.experiment import ExperimentManager

#: The default manager every script configures once.
exp_manager = tester = Tester()

__all__ = [
    "ExperimentManager",
    "Tester",
    "exp_manager",
    "fork_tester_log_files",
    "import_hyper_parameters",
    "load_from_record_date",
    "tester",
]
