"""Keeping the remote password out of messages: :func:`scrub`."""
from __future__ import annotations

from typing import Optional


def scrub(text: str, secret: Optional[str]) -> str:
    """``text`` with every occurrence of ``secret`` replaced by ``***``."""
    if secret:
        text = text.replace(secret, "***")
    return text
