"""The original project's import paths (``RLA.easy_log.*``), kept as thin faces."""
