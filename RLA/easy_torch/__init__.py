"""The original's PyTorch helpers (``RLA.easy_torch``); the checkpoints are RLA's own."""
