"""Keeping the remote password out of transport messages: :func:`scrub` (policy in :mod:`RLA.redaction`)."""

from __future__ import annotations

from RLA.redaction import scrub

__all__ = ["scrub"]
