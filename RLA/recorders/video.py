"""Videos (frame arrays) saved as mp4/gif into a run's results folder and to TensorBoard."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from RLA.errors import BackendNotInstalledError, RLAError
from RLA.recorders.base import PathLike, publish, result_path
from RLA.recorders.image import to_uint8_image

FORMATS = (".mp4", ".gif")


def to_frames(frames: Any) -> np.ndarray:
    """A ``TxHxWx3`` uint8 array from a sequence of frames or an array (``TxHxW[xC]``)."""
    if isinstance(frames, np.ndarray) and frames.ndim in (3, 4):
        items: Sequence[Any] = list(frames)
    else:
        items = list(frames)
    if not items:
        raise RLAError(
            "A video needs frames",
            expected="at least one HxWx3 frame",
            found="no frames",
            fix="collect env.render() outputs first",
        )
    out = [to_uint8_image(f) for f in items]
    out = [np.stack([f] * 3, axis=-1) if f.ndim == 2 else f[..., :3] for f in out]
    shapes = {f.shape for f in out}
    if len(shapes) != 1:
        raise RLAError(
            "Video frames differ in size",
            expected="frames of one shape",
            found=f"shapes {sorted(shapes)[:3]}",
            fix="resize or crop the frames to one shape",
        )
    return np.stack(out)


def encode_gif(frames: np.ndarray, fps: float) -> bytes:
    """Animated GIF bytes (looping) of ``TxHxWx3`` frames."""
    import imageio.v3 as iio

    buf = io.BytesIO()
    iio.imwrite(buf, frames, extension=".gif", duration=1000.0 / fps, loop=0)
    return buf.getvalue()


def add_video_to_tensorboard(
    tb_writer: Any, tag: str, frames: np.ndarray, fps: float, step: Optional[int]
) -> None:
    """Add the frames as an animated image, as ``SummaryWriter.add_video`` does, without moviepy."""
    from tensorboardX.proto.summary_pb2 import Summary

    _, height, width, channels = frames.shape
    image = Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=encode_gif(frames, fps)
    )
    summary = Summary(value=[Summary.Value(tag=tag, image=image)])
    file_writer = getattr(
        tb_writer, "file_writer", None
    )  # public: set when the writer opens, None once closed
    if file_writer is None:
        raise RLAError(
            "The TensorBoard writer is closed",
            expected="an open tensorboardX SummaryWriter (the run's, from logger.get_tbx_writer())",
            found=f"{type(tb_writer).__name__} without an open file_writer",
            fix="record videos while the run is open, or pass to_tensorboard=False",
        )
    file_writer.add_summary(summary, step)


def save_video(
    results_dir: Optional[PathLike],
    name: str,
    frames: Any,
    fps: float = 30.0,
    step: Optional[int] = None,
    cover: bool = False,
    add_timestamp: bool = True,
    tb_writer: Any = None,
    tag: Optional[str] = None,
) -> Optional[Path]:
    """Save frames as ``<results_dir>/<step>-<name>.mp4`` (or ``.gif`` by the name's extension).

    Args:
        frames: ``TxHxW[xC]`` array or a list of frames (uint8 0-255 or float 0-1).
        tb_writer: a tensorboardX ``SummaryWriter``; the video is also added (as a GIF) under ``tag``.

    Returns:
        The file, or ``None`` when it exists and ``cover`` is False.

    Raises:
        RLAError: no frames, frames of different sizes, an unknown extension.
        BackendNotInstalledError: mp4 without the imageio-ffmpeg package.
    """
    video = to_frames(frames)
    path = result_path(results_dir, name, step, add_timestamp, default_ext=".mp4")
    if path.suffix.lower() not in FORMATS:
        raise RLAError(
            "Unknown video format",
            expected=" or ".join(FORMATS),
            found=path.suffix,
            fix="name the video '<name>.mp4' or '<name>.gif'",
        )
    if tb_writer is not None:
        add_video_to_tensorboard(tb_writer, tag or Path(name).stem, video, fps, step)
    with publish(path, cover) as tmp:
        if tmp is None:
            return None
        if path.suffix.lower() == ".gif":
            tmp.write_bytes(encode_gif(video, fps))
        else:
            _write_mp4(tmp, video, fps, path)
    return path


def _write_mp4(tmp: Path, video: np.ndarray, fps: float, path: Path) -> None:
    """Encode ``video`` (``TxHxWxC`` uint8) as H.264 into ``tmp`` (published as ``path``)."""
    import imageio.v3 as iio

    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError as exc:
        raise BackendNotInstalledError(
            "mp4 videos need imageio-ffmpeg",
            expected="imageio_ffmpeg importable",
            found=str(exc),
            fix="pip install imageio-ffmpeg, or save a .gif",
        ) from exc
    # H.264 in yuv420p needs even sizes: pad one edge row/column instead of resizing.
    pad_h, pad_w = video.shape[1] % 2, video.shape[2] % 2
    if pad_h or pad_w:
        video = np.pad(video, ((0, 0), (0, pad_h), (0, pad_w), (0, 0)), mode="edge")
    iio.imwrite(
        tmp,
        video,
        extension=".mp4",
        fps=fps,
        codec="libx264",
        macro_block_size=1,
        pixelformat="yuv420p",
        plugin="FFMPEG",
    )
    if tmp.stat().st_size == 0:  # ffmpeg failures are reported on its stderr only
        raise RLAError(
            "ffmpeg wrote no video",
            expected="an mp4 file",
            found=f"an empty file for {path}",
            fix="check the ffmpeg messages above, or save a .gif",
        )
