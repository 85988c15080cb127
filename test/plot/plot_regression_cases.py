"""The regression net under the plot stages: a generated database, representative calls, snapshots.

``plot_func_expected.json`` (next to this file) holds what each call in :data:`CASES` produced
on the database :func:`build_database` makes, computed by the code before the plot stages
were split (commit 'plot: regression snapshot ...'). ``test_plot_func_regression.py`` runs the
calls again and compares. After an intended change of the numbers, regenerate it with
``PYTHONPATH=. python test/plot/plot_regression_cases.py`` and say why in the commit.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np

from RLA.plot.outliers import ValueFilter
from RLA.query.testing import make_run

EXPECTED = Path(__file__).with_name("plot_func_expected.json")
TASK = "bench"


def build_database(root: Path) -> Path:
    """Two tasks of runs with seeded noisy curves, uneven logging steps and unequal lengths.

    ``bench``: algo (sac, td3) x lr (0.1, 0.01) x 3 seeds; runs log every 7 or 10 steps,
    the third seed of each pair stops early; metrics ``return`` (rising) and ``loss``
    (positive, falling: for the log scale). ``other``: two runs of algo sac.
    """
    rng = np.random.default_rng(20261125)
    second = 0
    for algo, base in (("sac", 1.0), ("td3", 0.6)):
        for lr in (0.1, 0.01):
            for seed in range(3):
                every, rows = (7, 40) if seed % 2 else (10, 30)
                rows = rows - 12 if seed == 2 else rows
                steps = [every * i for i in range(rows)]
                ret = [base * s / 10 * (1 + lr) + float(rng.normal(0, 2)) for s in steps]
                loss = [10.0 / (1 + s / 50) * float(rng.uniform(0.8, 1.2)) for s in steps]
                if algo == "td3" and seed == 1:
                    ret[5] += 1e6  # an outlier for the value filter
                make_run(
                    root,
                    task=TASK,
                    params={"algo": algo, "lr": lr, "seed": seed},
                    curves={"return": ret, "loss": loss},
                    steps=steps,
                    when=dt.datetime(2026, 11, 1, 0, 0, second),
                )
                second += 1
    for seed in range(2):
        steps = [10 * i for i in range(25)]
        make_run(
            root,
            task="other",
            params={"algo": "sac", "lr": 0.1, "seed": seed},
            curves={
                "return": [s / 5 + float(rng.normal(0, 1)) for s in steps],
                "loss": [1.0 + float(rng.uniform()) for _ in steps],
            },
            steps=steps,
            when=dt.datetime(2026, 11, 1, 0, 1, seed),
        )
    return root


def _log(y: np.ndarray) -> np.ndarray:
    return np.log(np.abs(y) + 1.0)


#: name -> (positional args after data_root, keyword args). Each covers some options.
CASES: Dict[str, Any] = {
    "mean_stderr_by_algo": ((TASK, ["*"], ["algo"], ["return"]), {"resample": 32}),
    "median_std_two_keys": (
        (TASK, ["*"], ["algo", "lr"], ["return"]),
        {"agg": "median", "band_kind": "std", "resample": 24, "smooth_step": 2.0},
    ),
    "iqm_ci_no_resample": (
        (TASK, ["*"], ["algo"], ["return"]),
        {
            "agg": "iqm",
            "band_kind": "ci",
            "resample": 0,
            "smooth_step": 0,
            "bootstrap_samples": 200,
            "seed": 3,
        },
    ),
    "vary_len_none_band": (
        (TASK, ["*"], ["lr"], ["loss"]),
        {"vary_len_plot": True, "band_kind": "none", "resample": 20, "log": True, "final_window": 0.25},
    ),
    "xlim_pair_title_legend": (
        (TASK, ["*"], ["algo"], ["return", "loss"]),
        {
            "xlim": (20, 150),
            "resample": 16,
            "title": "two metrics",
            "ylabel": ["R", "L"],
            "legend_ncol": 2,
            "show_number": False,
        },
    ),
    "x_bound_scale_filter": (
        (TASK, ["*"], ["algo"], ["return"]),
        {
            "x_bound": 200,
            "resample": 16,
            "scale_dict": {"return": _log},
            "value_filter": ValueFilter(y_bound=500.0, remove_outlier=True),
            "legend_outside": True,
            "use_marker": True,
        },
    ),
    "merged_metrics_shaded_std": (
        (TASK, ["*"], ["algo"], ["return", "loss"]),
        {"split_by_metrics": False, "resample": 12, "shaded_std": True, "skip_legend": True},
    ),
    "regs2legends_rescale_pretty": (
        (TASK, ["*algo=sac*", "*algo=td3*"], [], ["return"]),
        {
            "regs2legends": ["SAC", "TD3"],
            "resample": 16,
            "rescale_idx": 1.0,
            "pretty": True,
            "tiling": "horizontal",
            "figsize": (5.0, 4.0),
        },
    ),
    "where_hp_filter_svg": (
        (TASK, ["*"], ["seed"], ["return"]),
        {
            "where": "lr == 0.1",
            "hp_filter_dict": {"algo": ["sac"]},
            "resample": 10,
            "formats": ["svg"],
            "colors": ["red", "blue", "green"],
            "ylim": (-10, 80),
        },
    ),
    "all_tasks_vertical": (
        (None, ["*"], ["algo"], ["return"]),
        {"all_tasks": True, "resample": 10, "tiling": "vertical", "xlabel": "steps"},
    ),
    "positional_originals": (
        (TASK, ["*"], ["algo"], ["return"], False, False, 150, "x", "y"),
        {"resample": 8},
    ),
}


def run_case(root: Path, out: Path, name: str) -> Dict[str, Any]:
    """Run one case of :data:`CASES` on ``root`` (figures under ``out``) and snapshot it."""
    from RLA.plot import plot_func

    call: Callable[..., Any] = plot_func  # the cases' arguments are checked by plot_func itself
    args, kwargs = CASES[name]
    quiet: Dict[str, Any] = {} if len(args) > 5 else {"verbose": False}  # verbose is the 6th positional
    result = call(root, *args, save_dir=out, save_name=name, **quiet, **kwargs)
    return snapshot(result, out)


def _arr(values: Any) -> List[Any]:
    return [None if not np.isfinite(v) else float(v) for v in np.asarray(values, dtype=float).ravel()]


def _figure(fig: Any) -> Dict[str, Any]:
    """What was drawn: per axes its labels, scales, limits, lines, bands and legend."""
    from matplotlib.colors import to_hex

    axes = []
    for ax in fig.axes:
        legend = ax.get_legend()
        axes.append(
            {
                "title": ax.get_title(),
                "xlabel": ax.get_xlabel(),
                "ylabel": ax.get_ylabel(),
                "xscale": ax.get_xscale(),
                "yscale": ax.get_yscale(),
                "xlim": _arr(ax.get_xlim()),
                "ylim": _arr(ax.get_ylim()),
                "lines": [
                    {
                        "label": line.get_label(),
                        "color": to_hex(line.get_color()),
                        "marker": str(line.get_marker()),
                        "style": line.get_linestyle(),
                        "x": _arr(line.get_xdata()),
                        "y": _arr(line.get_ydata()),
                    }
                    for line in ax.get_lines()
                ],
                "bands": [
                    {
                        "color": to_hex(c.get_facecolor()[0], keep_alpha=True),
                        "vertices": _arr(np.concatenate([p.vertices for p in c.get_paths()])),
                    }
                    for c in ax.collections
                ],
                "legend": None if legend is None else [t.get_text() for t in legend.get_texts()],
            }
        )
    legends = [[t.get_text() for t in lg.get_texts()] for lg in fig.legends]
    title = fig._suptitle.get_text() if fig._suptitle is not None else None  # noqa: SLF001 - no public getter
    return {"size": _arr(fig.get_size_inches()), "suptitle": title, "figure_legends": legends, "axes": axes}


def snapshot(result: Any, out: Path) -> Dict[str, Any]:
    """A JSON-able record of a ``PlotResult`` and the files it wrote under ``out``."""
    legends, stats = result
    g2lf = {m: {k: [_arr(v[1]), _arr(v[2])] for k, v in by.items()} for m, by in result.g2lf.items()}
    texts = {p.name: p.read_text() for p in result.files if p.suffix == ".csv"}
    return {
        "legends": legends,
        "stats": {
            m: {g: {k: float(v) for k, v in s.items()} for g, s in by.items()} for m, by in stats.items()
        },
        "g2lf": g2lf,
        "score_results": {k: [float(v) for v in vs] for k, vs in result.score_results.items()},
        "notes": list(result.notes),
        "files": sorted(str(Path(p).relative_to(out)) for p in result.files),
        "csv": texts,
        "figure": _figure(result.figure),
    }


def generate(work: Path) -> Dict[str, Any]:
    """Every case's snapshot on a fresh database under ``work``."""
    import time

    root = build_database(work / "data")
    out = {}
    for name in CASES:
        t = time.perf_counter()
        out[name] = run_case(root, work / "out" / name, name)
        print(name, round(time.perf_counter() - t, 2), file=sys.stderr)
    return out


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        data = generate(Path(tmp))
    EXPECTED.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {EXPECTED} ({len(data)} cases)", file=sys.stderr)
