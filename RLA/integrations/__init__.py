"""Adapters that let other RL frameworks log into RLA (one module per framework, imported on use)."""
