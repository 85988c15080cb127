"""The original ``RLA.utils`` package (helpers in :mod:`RLA.utils.utils`)."""
