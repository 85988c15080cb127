"""The experiment manager: the lifecycle of one run (configure, create, record, finish)."""
