"""Command-line tools of RLA (the ``rla`` console script and the original scripts)."""
