"""plot_func: CSV numbers equal a hand computation; bands, IQM, unequal lengths, legends, errors."""
from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from RLA.errors import QueryError, RLAError, RunNotFoundError
from RLA.plot import bootstrap_ci, iqm, plot_func
from RLA.query.testing import make_run

# Two groups; x = 0, 10, 20. Hand-made values so the expected numbers are easy to check.
SAC = [[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]]
TD3 = [[0.0, 0.0, 0.0], [2.0, 4.0, 6.0], [4.0, 8.0, 12.0], [100.0, 100.0, 100.0]]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    i = 0
    for algo, curves in (("sac", SAC), ("td3", TD3)):
        for seed, values in enumerate(curves):
            make_run(root, task="t", params={"algo": algo, "seed": seed}, curves={"return": values},
                     steps=[0, 10, 20], when=dt.datetime(2026, 11, 1, 0, 0, i))
            i += 1
    return root


def read_csv(path: Path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.timeout(60)
def test_csv_numbers_equal_a_hand_computation(tiny, tmp_path):
    result = plot_func(tiny, "t", ["*"], ["algo"], ["return"], resample=0, smooth_step=0, band_kind="std",
                       save_dir=tmp_path / "out", save_name="hand.png", verbose=False)
    legends, stats = result  # unpacks like the original (g2lf, score_results)
    assert legends == {"algo=sac": 2, "algo=td3": 4}
    rows = read_csv(tmp_path / "out" / "hand.csv")
    sac = [r for r in rows if r["legend"] == "algo=sac"]
    assert [float(r["x"]) for r in sac] == [0.0, 10.0, 20.0]
    assert [float(r["center"]) for r in sac] == [2.0, 3.0, 4.0]
    # sample std of (1, 3) = sqrt(2)
    assert [float(r["low"]) for r in sac] == pytest.approx([2 - 2 ** 0.5, 3 - 2 ** 0.5, 4 - 2 ** 0.5])
    assert [float(r["high"]) for r in sac] == pytest.approx([2 + 2 ** 0.5, 3 + 2 ** 0.5, 4 + 2 ** 0.5])
    td3 = [r for r in rows if r["legend"] == "algo=td3"]
    assert [float(r["center"]) for r in td3] == pytest.approx([26.5, 28.0, 29.5])
    assert {int(r["n_at_x"]) for r in rows} == {2, 4}


@pytest.mark.timeout(60)
def test_stderr_band_and_iqm_center(tiny, tmp_path):
    plot_func(tiny, "t", ["*"], ["algo"], ["return"], resample=0, smooth_step=0, agg="iqm", band_kind="stderr",
              save_dir=tmp_path, save_name="iqm", verbose=False)
    td3 = [r for r in read_csv(tmp_path / "iqm.csv") if r["legend"] == "algo=td3"]
    # IQM of 4 values drops the lowest and the highest: x=20 -> mean(6, 12) = 9
    assert [float(r["center"]) for r in td3] == pytest.approx([3.0, 6.0, 9.0])
    values = np.array([0.0, 6.0, 12.0, 100.0])
    se = values.std(ddof=1) / 2
    assert float(td3[2]["high"]) - float(td3[2]["center"]) == pytest.approx(se)


@pytest.mark.timeout(60)
def test_final_window_statistics(tiny, tmp_path):
    _, stats = plot_func(tiny, "t", ["*"], ["algo"], ["return"], resample=0, smooth_step=0, final_window=0.5,
                         save_dir=tmp_path, save_name="final", verbose=False)
    sac = stats["return"]["algo=sac"]
    # window x >= 10: per-run scores mean(2, 3) = 2.5 and mean(4, 5) = 4.5
    assert sac["n"] == 2 and sac["mean"] == pytest.approx(3.5) and sac["median"] == pytest.approx(3.5)
    assert sac["std"] == pytest.approx(2 ** 0.5) and sac["stderr"] == pytest.approx(1.0)
    assert sac["ci_low"] >= 2.5 and sac["ci_high"] <= 4.5
    td3 = stats["return"]["algo=td3"]
    # scores 0, 5, 10, 100 -> IQM = mean(5, 10)
    assert td3["iqm"] == pytest.approx(7.5) and td3["median"] == pytest.approx(7.5)
    rows = read_csv(tmp_path / "final-final.csv")
    assert float([r for r in rows if r["legend"] == "algo=td3"][0]["mean"]) == pytest.approx(28.75)


@pytest.mark.timeout(60)
def test_png_is_a_real_image_and_pdf_on_request(tiny, tmp_path):
    result = plot_func(tiny, "t", ["*"], ["algo"], ["return"], save_dir=tmp_path, save_name="fig",
                       formats=("png", "pdf"), verbose=False)
    png, pdf = tmp_path / "fig.png", tmp_path / "fig.pdf"
    assert png in result.files and pdf in result.files
    import matplotlib.image as mpimg
    image = mpimg.imread(png)
    assert image.shape[0] > 200 and image.shape[1] > 200 and image.std() > 0
    assert pdf.read_bytes()[:4] == b"%PDF"


@pytest.mark.timeout(60)
def test_default_location_is_results_easy_plot(tiny):
    result = plot_func(tiny, "t", ["*"], ["algo"], ["return"], verbose=False)
    assert (tiny / "results" / "easy_plot" / "t-return.png") in result.files


@pytest.mark.timeout(60)
def test_unequal_lengths_are_cut_by_default_and_kept_on_request(tmp_path):
    root = tmp_path / "d"
    make_run(root, task="t", params={"algo": "a", "seed": 0}, curves={"r": [1.0, 1.0, 1.0, 1.0]}, steps=[0, 1, 2, 3])
    make_run(root, task="t", params={"algo": "a", "seed": 1}, curves={"r": [3.0, 3.0]}, steps=[0, 1])
    cut = plot_func(root, "t", ["*"], ["algo"], ["r"], resample=0, smooth_step=0, save_dir=tmp_path,
                    save_name="cut", verbose=False)
    assert [float(r["x"]) for r in read_csv(tmp_path / "cut.csv")] == [0.0, 1.0]
    assert any("cut to x <= 1" in note for note in cut.notes)
    plot_func(root, "t", ["*"], ["algo"], ["r"], resample=0, smooth_step=0, vary_len_plot=True,
              save_dir=tmp_path, save_name="keep", verbose=False)
    rows = read_csv(tmp_path / "keep.csv")
    assert [float(r["center"]) for r in rows] == [2.0, 2.0, 1.0, 1.0]
    assert [int(r["n_at_x"]) for r in rows] == [2, 2, 1, 1]


@pytest.mark.timeout(60)
def test_resampling_averages_bins_and_interpolates(tmp_path):
    root = tmp_path / "d"
    make_run(root, task="t", params={"s": 0}, curves={"r": [0.0, 10.0, 20.0, 30.0, 40.0]}, steps=[0, 1, 2, 3, 4])
    make_run(root, task="t", params={"s": 1}, curves={"r": [0.0, 40.0]}, steps=[0, 4])
    plot_func(root, "t", ["*"], [], ["r"], resample=3, smooth_step=0, save_dir=tmp_path, save_name="rs",
              verbose=False)
    rows = read_csv(tmp_path / "rs.csv")
    # grid 0, 2, 4; bins [g-1, g+1): run 0 bins {0}->0, {1,2}->15, {3,4}->35; run 1: 0, interp 20, 40.
    assert [float(r["center"]) for r in rows] == pytest.approx([0.0, 17.5, 37.5])


@pytest.mark.timeout(60)
def test_smoothing_keeps_a_constant_curve_constant(tmp_path):
    root = tmp_path / "d"
    make_run(root, task="t", params={"s": 0}, curves={"r": [5.0] * 50})
    plot_func(root, "t", ["*"], [], ["r"], resample=20, smooth_step=4, save_dir=tmp_path, save_name="c",
              verbose=False)
    assert {round(float(r["center"]), 9) for r in read_csv(tmp_path / "c.csv")} == {5.0}


@pytest.mark.timeout(60)
def test_regs2legends_scale_dict_and_key_to_legend_fn(tiny, tmp_path):
    legends, _ = plot_func(tiny, "t", ["*algo=td3*", "*algo=sac*"], [], ["return"], regs2legends=["TD3", "SAC"],
                           resample=0, smooth_step=0, scale_dict={"return": lambda y: y * 10}, save_dir=tmp_path,
                           save_name="r2l", verbose=False)
    assert list(legends) == ["TD3", "SAC"]
    sac = [r for r in read_csv(tmp_path / "r2l.csv") if r["legend"] == "SAC"]
    assert float(sac[0]["center"]) == pytest.approx(20.0)
    legends, _ = plot_func(tiny, "t", ["*"], ["algo", "seed"], ["return"],
                           key_to_legend_fn=lambda d, keys, y, use: f"{d['algo']}#{d['seed']}",
                           save_dir=tmp_path, save_name="k2l", verbose=False)
    assert "sac#0" in legends and len(legends) == 6


@pytest.mark.timeout(60)
def test_xlim_bounds_the_data(tiny, tmp_path):
    plot_func(tiny, "t", ["*"], ["algo"], ["return"], resample=0, smooth_step=0, xlim=10, save_dir=tmp_path,
              save_name="xl", verbose=False)
    assert max(float(r["x"]) for r in read_csv(tmp_path / "xl.csv")) == 10.0


@pytest.mark.timeout(60)
def test_bootstrap_ci_is_reproducible_and_contains_the_mean():
    data = np.random.default_rng(3).normal(10, 2, size=(30, 5))
    low1, high1 = bootstrap_ci(data, "mean", samples=500, seed=1)
    low2, high2 = bootstrap_ci(data, "mean", samples=500, seed=1)
    assert np.array_equal(low1, low2) and np.array_equal(high1, high2)
    assert np.all(low1 < data.mean(axis=0)) and np.all(data.mean(axis=0) < high1)


def test_iqm_matches_trimmed_mean_definition():
    values = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [100.0]])
    assert iqm(values)[0] == pytest.approx(np.mean([3.0, 4.0, 5.0, 6.0]))


@pytest.mark.timeout(60)
def test_bad_input_errors(tiny, tmp_path):
    with pytest.raises(QueryError, match="No selected run logged 'retrun'"):
        plot_func(tiny, "t", ["*"], ["algo"], ["retrun"], save_dir=tmp_path, verbose=False)
    with pytest.raises(RunNotFoundError, match="No run matches regs"):
        plot_func(tiny, "t", ["1999/*"], ["algo"], ["return"], save_dir=tmp_path, verbose=False)
    with pytest.raises(RunNotFoundError, match="Unknown task"):
        plot_func(tiny, "nope", ["*"], ["algo"], ["return"], save_dir=tmp_path, verbose=False)
    with pytest.raises(RLAError, match="Bad agg/band option"):
        plot_func(tiny, "t", ["*"], ["algo"], ["return"], agg="avg", save_dir=tmp_path, verbose=False)
    with pytest.raises(RLAError, match="regs2legends needs one legend per reg"):
        plot_func(tiny, "t", ["*"], [], ["return"], regs2legends=["a", "b"], save_dir=tmp_path, verbose=False)
    with pytest.raises(RLAError, match="Unknown plot_func option 'colour'"):
        plot_func(tiny, "t", ["*"], [], ["return"], colour="red", save_dir=tmp_path, verbose=False)


@pytest.mark.timeout(60)
def test_never_shows_and_import_rla_stays_light(tmp_path):
    import subprocess
    import sys
    code = ("import sys, RLA; assert 'matplotlib' not in sys.modules and 'pandas' not in sys.modules; "
            "RLA.plot_func; assert 'matplotlib.pyplot' not in sys.modules; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.strip() == "ok", done.stderr
