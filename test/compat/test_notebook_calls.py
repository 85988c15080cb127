"""The calls of the original's plotting notebooks (``test/test_plot.ipynb``, ``example/plot_res.ipynb``
of both repositories), made on a small database in the original's format."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from RLA.query.testing import make_run

TASK = "demo_task"
REG = "2022/03/01/21-[12]*"


@pytest.fixture(scope="module")
def nb_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs named as the original named them: 2022/03/01 21-1x/21-2x (lr 0.01, 0.001, 0.0001),
    2022/11/24 and 2023/02/02 (lr 0.001, 0.0001), metrics perf/mse, y_out, y_out_std."""
    root = tmp_path_factory.mktemp("nb") / "test_data_root"
    plan = [("2022-03-01 21:13", 0.0001, 1), ("2022-03-01 21:14", 0.01, 2), ("2022-03-01 21:20", 0.01, 3),
            ("2022-03-01 21:23", 0.001, 4), ("2022-11-24 10:00", 0.001, 5), ("2023-02-02 10:00", 0.0001, 6)]
    for when, lr, seed in plan:
        steps = list(range(0, 300, 3))
        mse = [lr * 5 / (1 + s / 50) + 0.001 * seed for s in steps]
        make_run(root, TASK, {"env_id": "Test-v1", "learning_rate": lr, "seed": seed}, tracked=["env_id", "learning_rate"],
                 curves={"perf/mse": mse, "y_out": [m * 2 for m in mse], "y_out_std": [0.1] * len(steps)},
                 steps=steps, when=dt.datetime.strptime(when, "%Y-%m-%d %H:%M"), style="original",
                 ip="11.0.91.89")
    return root


def _v2(root: Path, regs, metrics, **options):
    from RLA.easy_plot.plot_func_v2 import plot_func
    return plot_func(data_root=str(root), task_table_name=TASK, regs=regs, split_keys=["learning_rate"],
                     metrics=metrics, **options)


@pytest.mark.parametrize("options", [
    {}, {"ylim": (0, 0.1)}, {"ylim": (0, 0.1), "xlabel": "epochs", "ylabel": "reward ratio"},
    {"legend_outside": False}, {"legend_outside": False, "colors": ["green", "pink", "black"]},
    {"use_marker": True}, {"use_marker": True, "resample": 200}, {"use_marker": True, "markers": ["1", "2", "3"]},
    {"shaded_range": False, "show_number": False, "pretty": True},
], ids=lambda o: ",".join(o) or "plain")
def test_v2_figure_options_of_test_plot(nb_root: Path, options):
    g2lf, score_results = _v2(nb_root, [REG], ["perf/mse"], **options)
    assert {k[:-3] for k in g2lf["perf/mse"]} == {"learning_rate=0.01", "learning_rate=0.001",
                                                   "learning_rate=0.0001"}
    assert score_results["learning_rate=0.01-range"][0] < score_results["learning_rate=0.01-range"][1]


def test_v2_reg_map_legends(nb_root: Path):
    regs = ["2022/03/01/21-[12]*learning_rate=0.01*", "2022/03/01/21-[12]*learning_rate=0.00*"]
    g2lf, _ = _v2(nb_root, regs, ["perf/mse"], regs2legends=["lr=0.01", "lr<=0.001"], shaded_range=False,
                  pretty=True)
    assert {k[:-3] for k in g2lf["perf/mse"]} == {"lr=0.01", "lr<=0.001"}


def test_v2_key_to_legend_fn_with_four_arguments(nb_root: Path):
    def my_key_to_legend(parse_dict, split_keys, y_name, use_y_name):
        return ".".join(f"{k}={parse_dict[k]}" for k in split_keys).replace("learning_rate", "α")

    g2lf, _ = _v2(nb_root, [REG], ["perf/mse"], key_to_legend_fn=my_key_to_legend, shaded_range=False,
                  pretty=True, show_number=False)
    assert {k[:-3] for k in g2lf["perf/mse"]} == {"α=0.01", "α=0.001", "α=0.0001"}


def test_v2_scale_dict_log(nb_root: Path):
    plain, _ = _v2(nb_root, [REG], ["perf/mse"])
    logged, _ = _v2(nb_root, [REG], ["perf/mse"], scale_dict={"perf/mse": lambda x: np.log(x)}, ylabel="RMSE")
    key = "learning_rate=0.001-se"
    assert np.allclose(logged["perf/mse"][key][1], np.log(plain["perf/mse"][key][1]), rtol=1e-2)


def test_v2_several_metrics_and_experiments_saved(nb_root: Path):
    regs = ["2022/11/24/*", "2023/02/02/*"]
    metrics = ["perf/mse", "y_out", "y_out_std"]
    g2lf, _ = _v2(nb_root, regs, metrics, use_marker=True, resample=100, regs2legends=["lr=0.001", "lr=0.0001"],
                  ylabel=["MSE", "Y", "Y std"], pretty=True, legend_ncol=4, save_name="multi_plot.pdf")
    assert set(g2lf) == set(metrics) and set(g2lf["y_out"]) >= {"lr=0.001-se", "lr=0.0001-se"}
    assert (nb_root / "results" / "easy_plot" / "multi_plot.pdf").stat().st_size > 0


def test_v1_plot_res_func_of_plot_res(nb_root: Path):
    from RLA.easy_plot.plot_func import plot_res_func
    g2lf, _ = plot_res_func(prefix_dir=str(nb_root / "log" / TASK), regs=[REG], param_keys=["learning_rate"],
                            value_keys=["perf/mse"], y_bound=0.01, verbose=False, xlabel="epochs",
                            ylabel="reward ratio", shaded_range=False, pretty=True, legend_outside=True,
                            save_name="simple_res.pdf")
    assert max(float(np.max(v[1])) for v in g2lf["perf/mse"].values()) <= 0.01 + 1e-12  # y_bound clips
    assert (nb_root / "results" / "easy_plot" / TASK / "simple_res.pdf").stat().st_size > 0
