"""The [plot] lines count runs in words: a group of one run says "(1 run)"."""

from __future__ import annotations

from pathlib import Path

from RLA.plot.report import report


def _stats(n: int):
    keys = ("window_start", "mean", "stderr", "median", "iqm", "ci_low", "ci_high")
    return {"n": n, **{key: 1.0 for key in keys}}


def test_plot_report_says_one_run_for_a_group_of_one(capsys):
    report([], {"return": {"lr=0.1": _stats(1), "lr=0.2": _stats(2)}}, "mean", [Path("p.png")])
    out = capsys.readouterr().out
    assert "return | lr=0.1 (1 run): final mean" in out and "return | lr=0.2 (2 runs): final" in out
    assert "1 runs" not in out
