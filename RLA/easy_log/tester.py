"""Original import path of the global experiment manager (``exp_manager``)."""
from RLA.manager.experiment import ExperimentManager, Tester

#: The default manager every script configures once.
exp_manager = tester = ExperimentManager()

__all__ = ["ExperimentManager", "Tester", "exp_manager", "tester"]
