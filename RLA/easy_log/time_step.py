"""Original import path of the global time-step holder."""

from RLA.logger.time_step import TimeStepHolder, time_step_holder

__all__ = ["TimeStepHolder", "time_step_holder"]
