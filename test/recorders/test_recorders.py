"""Recorders: figures, images and videos under results_dir with the time-step prefix."""
from __future__ import annotations

import warnings

import imageio.v3 as iio
import numpy as np
import pytest

from RLA.errors import RLAError
from RLA.logger.time_step import time_step_holder
from RLA.recorders import save_figure, save_image, save_video


@pytest.fixture
def run(tmp_path):
    """The default exp_manager on a fresh run with TensorBoard output (the recorders' face binds to it)."""
    from RLA.easy_log.tester import exp_manager

    exp_manager.set_hyper_param(seed=0)
    exp_manager.configure("rec", rla_config={"LOG_USED": ["csv", "tensorboard"], "DL_FRAMEWORK": "none"},
                          data_root=str(tmp_path / "data"), run_file=[], code_root=str(tmp_path))
    layout = exp_manager.log_files_gen()
    time_step_holder.set_time(7)
    yield layout
    exp_manager.finish()
    time_step_holder.set_time(0)


def finish_run():
    from RLA.easy_log.tester import exp_manager

    exp_manager.finish()


def files(folder):
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


@pytest.mark.timeout(60)
def test_readme_pretty_plot_wrapper_saves_under_results_with_the_time_step(run):
    from RLA.easy_log.complex_data_recorder import MatplotlibRecorder as mpr

    def plot_func():
        import matplotlib.pyplot as plt
        plt.plot([1, 1, 1], [2, 2, 2], label="line")

    mpr.pretty_plot_wrapper("func", plot_func, xlabel="x", ylabel="y", title="react test")
    assert files(run.results_dir) == ["7-func.png"]
    assert iio.imread(run.results_dir / "7-func.png").ndim == 3


@pytest.mark.timeout(60)
def test_matplotlib_save_current_figure_and_extension(run):
    import matplotlib
    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    from RLA import MatplotlibRecorder

    plt.figure()
    plt.plot([0, 1], [1, 0])
    MatplotlibRecorder.save("curve")
    MatplotlibRecorder.save("sub/curve.pdf", add_timestamp=False)
    plt.close("all")
    assert files(run.results_dir) == ["7-curve.png", "curve.pdf"]
    assert (run.results_dir / "sub" / "curve.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.timeout(60)
def test_cover_false_never_overwrites_and_cover_true_does(tmp_path):
    first = save_image(tmp_path, "img", np.zeros((4, 4)), step=1)
    original = first.read_bytes()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert save_image(tmp_path, "img", np.ones((4, 4)), step=1) is None
    assert first.read_bytes() == original and "cover=False" in str(caught[0].message)
    save_image(tmp_path, "img", np.ones((4, 4)), step=1, cover=True)
    assert iio.imread(first).min() == 255
    assert files(tmp_path) == ["1-img.png"], "no temp file is left behind"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("img, expected", [
    (np.full((3, 5), 0.5), np.full((3, 5), 128, np.uint8)),
    (np.full((3, 5, 3), 200, np.uint8), np.full((3, 5, 3), 200, np.uint8)),
    (np.zeros((3, 3, 5)) + 1.0, np.full((3, 5, 3), 255, np.uint8)),  # CxHxW
    (np.full((2, 2, 4), 10, np.int64), np.full((2, 2, 4), 10, np.uint8)),
])
def test_image_arrays_become_exact_pngs(tmp_path, img, expected):
    path = save_image(tmp_path, "frame", img, step=0)
    np.testing.assert_array_equal(iio.imread(path), expected)


@pytest.mark.timeout(60)
def test_image_recorder_face_and_tensorboard(run):
    from RLA.easy_log.complex_data_recorder import ImgRecorder
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ImgRecorder.save("obs", np.zeros((8, 8, 3), np.uint8), to_tensorboard=True)
    finish_run()  # closing the writer drains tensorboardX's event queue (flush() does not wait)
    assert files(run.results_dir) == ["7-obs.png"]
    acc = EventAccumulator(str(run.log_dir / "tb"))
    acc.Reload()
    assert acc.Images("obs")[0].step == 7


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name, ext", [("rollout", ".mp4"), ("rollout.gif", ".gif")])
def test_video_files_hold_every_frame(tmp_path, name, ext):
    frames = (np.random.default_rng(0).random((6, 31, 45, 3)) * 255).astype(np.uint8)
    path = save_video(tmp_path, name, list(frames), fps=10, step=2)
    assert path.name == f"2-rollout{ext}"
    back = iio.imread(path)
    assert back.shape[0] == 6 and back.shape[-1] == 3
    assert back.shape[1:3] in ((31, 45), (32, 46)), "mp4 pads odd sizes by one edge row/column"


@pytest.mark.timeout(120)
def test_video_recorder_adds_the_clip_to_tensorboard(run):
    from RLA.easy_log.complex_data_recorder import VideoRecorder
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    VideoRecorder.save("episode.gif", np.zeros((4, 16, 16, 3), np.uint8), fps=5)
    finish_run()  # closing the writer drains tensorboardX's event queue (flush() does not wait)
    acc = EventAccumulator(str(run.log_dir / "tb"))
    acc.Reload()
    event = acc.Images("episode")[0]
    assert event.step == 7 and event.encoded_image_string.startswith(b"GIF8")
    assert files(run.results_dir) == ["7-episode.gif"]


@pytest.mark.timeout(60)
def test_recorders_need_a_run_and_good_input(tmp_path):
    from RLA.manager.experiment import ExperimentManager

    with pytest.raises(RLAError, match="log_files_gen"):
        save_figure(ExperimentManager().results_dir, "x")
    with pytest.raises(RLAError, match="Bad result name"):
        save_image(tmp_path, "../escape", np.zeros((2, 2)), step=0)
    with pytest.raises(RLAError, match="Not an image") as info:
        save_image(tmp_path, "bad", np.zeros((2, 2, 2, 2)), step=0)
    assert "shape (2, 2, 2, 2)" in str(info.value)
    with pytest.raises(RLAError, match="differ in size"):
        save_video(tmp_path, "v", [np.zeros((4, 4, 3)), np.zeros((6, 6, 3))], step=0)
    with pytest.raises(RLAError, match="Unknown video format"):
        save_video(tmp_path, "v.avi", np.zeros((2, 4, 4, 3)), step=0)
    with pytest.raises(RLAError, match="needs frames"):
        save_video(tmp_path, "v", [], step=0)
    assert files(tmp_path) == []


def test_a_video_for_a_closed_tensorboard_writer_is_refused(tmp_path):
    from tensorboardX import SummaryWriter

    from RLA.recorders.video import add_video_to_tensorboard

    writer = SummaryWriter(str(tmp_path / "tb"))
    writer.close()
    with pytest.raises(RLAError, match="TensorBoard writer is closed"):
        add_video_to_tensorboard(writer, "clip", np.zeros((2, 4, 4, 3), np.uint8), 10.0, 0)
