"""The package version (read by setup.py and recorded in run.json)."""

__version__ = "1.0.0"
