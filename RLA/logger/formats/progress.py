"""The one-line progress summary of the ``stdout`` format: step, rate, ETA (pure, clock injected)."""

from __future__ import annotations

from collections import deque
from typing import Deque, Optional, Tuple

#: Samples closer together than this (seconds) replace the newest one instead of adding one.
_MIN_SPACING = 0.25
#: The rate is measured over the last samples (at least the last 16 s of a steady run).
_WINDOW = 64


def format_duration(seconds: float) -> str:
    """``H:MM:SS`` (days as ``Dd H:MM:SS``) of a non-negative duration."""
    total = int(round(max(0.0, seconds)))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{days}d {text}" if days else text


def _rate_text(rate: float) -> str:
    if rate >= 100:
        return f"{rate:,.0f} steps/s"
    return f"{rate:.3g} steps/s" if rate >= 1 or rate <= 0 else f"{1 / rate:.3g} s/step"


class Progress:
    """Time-steps seen by the stdout format, their rate and the ETA when the total is known.

    The elapsed time counts from the first dump (the start of training, not of the setup).
    """

    def __init__(self) -> None:
        self.start: Optional[float] = None
        self.total: Optional[int] = None
        self.dumps = 0
        self.step: Optional[int] = None
        self._samples: Deque[Tuple[float, int]] = deque(maxlen=_WINDOW)

    def add(self, step: int, now: float) -> None:
        """Record one dump at time-step ``step`` (a step that goes back, e.g. a resume, restarts the rate)."""
        self.dumps += 1
        if self.start is None:
            self.start = now
        if self.step is not None and step < self.step:
            self._samples.clear()
        self.step = step
        if len(self._samples) >= 2 and now - self._samples[-2][0] < _MIN_SPACING:
            self._samples[-1] = (now, step)
        else:
            self._samples.append((now, step))

    def rate(self) -> Optional[float]:
        """Time-steps per second over the recent samples (``None`` until two samples apart in time)."""
        if len(self._samples) < 2:
            return None
        (t0, s0), (t1, s1) = self._samples[0], self._samples[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 else None

    def eta(self) -> Optional[float]:
        """Seconds until ``total`` at the current rate (``None`` without a total or a positive rate)."""
        rate = self.rate()
        if self.total is None or self.step is None or not rate or rate <= 0:
            return None
        return max(0.0, (self.total - self.step) / rate)

    def line(self, now: float) -> str:
        """``progress: step 1200/10000 (12.0%) | 240 steps/s | ETA 0:00:36 | elapsed 0:00:05 | 31 dumps``."""
        step = 0 if self.step is None else self.step
        parts = [f"step {step}"]
        if self.total:
            parts[0] += f"/{self.total} ({100.0 * step / self.total:.1f}%)"
        rate = self.rate()
        if rate is not None:
            parts.append(_rate_text(rate))
        eta = self.eta()
        if eta is not None:
            parts.append(f"ETA {format_duration(eta)}")
        parts.append(f"elapsed {format_duration(now - (now if self.start is None else self.start))}")
        parts.append(f"{self.dumps} dump{'' if self.dumps == 1 else 's'}")
        return "progress: " + " | ".join(parts)
