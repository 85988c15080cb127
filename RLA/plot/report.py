"""What a plot prints with ``verbose``: its notes, each group's final statistics, the files written."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Sequence


def report(notes: Sequence[str], stats: Dict[str, Dict[str, Any]], agg: str, files: Sequence[Path]) -> None:
    """Print ``[plot]`` lines (text from the runs is escaped: legends and notes quote their values)."""
    from RLA.terminal import escape
    from RLA.text import count

    for note in notes:
        print(f"[plot] {escape(note)}")
    for metric, by_legend in stats.items():
        for legend, s in by_legend.items():
            print(
                f"[plot] {escape(metric)} | {escape(legend)} ({count(s['n'], 'run')}): final {agg} window "
                f"x>={s['window_start']:g}: mean {s['mean']:.4g} ± {s['stderr']:.3g} (stderr), "
                f"median {s['median']:.4g}, IQM {s['iqm']:.4g}, 95% CI [{s['ci_low']:.4g}, {s['ci_high']:.4g}]"
            )
    print(f"[plot] saved {escape(', '.join(str(p) for p in files))}")
