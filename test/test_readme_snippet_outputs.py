"""The manual's snippets produce what the manual says, not only run: figures have ink, files hold the data."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
PARTS = REPO / "docs" / "readme"


def python_block(part: str, marker: str) -> str:
    """The ```python block of ``docs/readme/<part>`` that contains ``marker``."""
    blocks = re.findall(r"```python\n(.*?)```", (PARTS / part).read_text(), flags=re.S)
    found = [block for block in blocks if marker in block]
    assert len(found) == 1, f"{part}: {len(found)} python blocks contain {marker!r}"
    return found[0]


def ink(png: Path) -> float:
    """Pixel variance of an image file (0 for a blank, single-colour image)."""
    import matplotlib.image as mpimg

    return float(np.asarray(mpimg.imread(png), dtype=float)[..., :3].var())


def run_script(tmp_path: Path, body: str, env: dict) -> Path:
    """Run ``body`` after configuring a run on ``tmp_path/data``; returns the run's results folder."""
    prelude = textwrap.dedent("""
        import numpy as np
        from RLA import exp_manager, time_step_holder
        exp_manager.configure("snippets", rla_config={"LOG_USED": ["csv", "tensorboard"], "DL_FRAMEWORK": "none"},
                              data_root="data", run_file=[])
        exp_manager.log_files_gen()
        time_step_holder.set_time(7)
        rng = np.random.default_rng(0)
        frame = rng.integers(0, 256, size=(24, 32, 3), dtype=np.uint8)
        frames = rng.integers(0, 256, size=(5, 16, 16, 3), dtype=np.uint8)
        np.save("frame.npy", frame)
    """)
    epilogue = "\nprint('RESULTS', exp_manager.results_dir)\nexp_manager.finish()\n"
    (tmp_path / "main.py").write_text(prelude + body + epilogue)
    result = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=150)
    assert result.returncode == 0, result.stderr[-3000:]
    return Path(re.search(r"^RESULTS (.+)$", result.stdout, flags=re.M).group(1))


@pytest.mark.timeout(180)
def test_the_recorders_snippet_saves_figures_with_ink_and_the_exact_image(tmp_path: Path, subprocess_env) -> None:
    results = run_script(tmp_path, python_block("checkpoints.md", "mpr.pretty_plot_wrapper"), subprocess_env)
    func, curve = results / "7-func.png", results / "7-curve.png"
    assert ink(func) > 1e-4 and ink(curve) > 1e-4  # mpr.save after pretty_plot_wrapper was blank
    from PIL import Image

    assert np.array_equal(np.asarray(Image.open(results / "7-obs.png").convert("RGB")), np.load(tmp_path / "frame.npy"))
    with Image.open(results / "7-episode.gif") as gif:
        assert gif.n_frames == 5
    assert (results / "7-episode.mp4").stat().st_size > 0


@pytest.mark.timeout(180)
def test_the_original_readme_figure_snippet_has_ink(tmp_path: Path, subprocess_env) -> None:
    from test_seed_readme import SNIPPET_FIGURE

    results = run_script(tmp_path, SNIPPET_FIGURE, subprocess_env)
    assert ink(results / "7-func.png") > 1e-4


def test_save_without_an_open_figure_is_an_error_not_a_blank_file(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    from RLA.errors import RecorderError
    from RLA.recorders import pretty_plot, save_figure

    plt.close("all")
    pretty_plot(tmp_path, "func", lambda: plt.plot([0, 1], [1, 0]), step=1)
    with pytest.raises(RecorderError, match="no matplotlib figure is open"):
        save_figure(tmp_path, "curve", step=1)
    plt.figure()
    with pytest.raises(RecorderError, match="empty"):
        save_figure(tmp_path, "empty", step=1)
    plt.close("all")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["1-func.png"]  # no blank file, no temp left


@pytest.mark.timeout(180)
def test_the_quick_start_snippet_fills_the_database(tmp_path: Path, subprocess_env) -> None:
    import pandas as pd

    (tmp_path / "rla_config.yaml").write_text("LOG_USED: [stdout, log, csv]\nDATA_ROOT: ./data\n")
    (tmp_path / "main.py").write_text(python_block("10_foundation.md", "exp_manager.log_files_gen()"))
    result = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, env=subprocess_env, capture_output=True,
                            text=True, timeout=150)
    assert result.returncode == 0, result.stderr[-3000:]
    (run,) = (tmp_path / "data" / "log" / "demo_task").glob("*/*/*/*&env_id=Hopper-v4&seed=0")
    frame = pd.read_csv(run / "progress.csv")
    assert len(frame) == 1000 and frame["return"].iloc[-1] == pytest.approx(999 ** 0.5, rel=1e-6)
    assert len(result.stdout.splitlines()) < 100  # a table per STDOUT_INTERVAL, not 5 lines per dump
