"""Images (numpy arrays) saved as PNG into a run's results folder, optionally to TensorBoard."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import numpy as np

from RLA.errors import RLAError
from RLA.recorders.base import PathLike, publish, result_path


def to_uint8_image(img: Any) -> np.ndarray:
    """An ``HxW``, ``HxWx3`` or ``HxWx4`` uint8 array from ints (0-255) or floats (0-1).

    ``CxHxW`` arrays (torch layout, C in 1/3/4) are moved to ``HxWxC``.

    Raises:
        RLAError: not an image shape.
    """
    arr = np.asarray(img.detach().cpu().numpy() if hasattr(img, "detach") else img)
    if arr.ndim == 3 and arr.shape[0] in (1, 3, 4) and arr.shape[-1] not in (1, 3, 4):
        arr = np.moveaxis(arr, 0, -1)
    if arr.ndim == 3 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[-1] not in (3, 4)) or arr.size == 0:
        raise RLAError(
            "Not an image",
            expected="an HxW, HxWx3 or HxWx4 array (or CxHxW)",
            found=f"shape {arr.shape}",
            fix="pass one frame as a numpy array",
        )
    if arr.dtype == np.uint8:
        return arr
    if arr.dtype == bool:
        return arr.astype(np.uint8) * 255
    if np.issubdtype(arr.dtype, np.floating):
        return (np.clip(np.nan_to_num(arr), 0.0, 1.0) * 255).round().astype(np.uint8)
    return np.clip(arr, 0, 255).astype(np.uint8)


def save_image(
    results_dir: Optional[PathLike],
    name: str,
    img: Any,
    step: Optional[int] = None,
    cover: bool = False,
    add_timestamp: bool = True,
    tb_writer: Any = None,
    tag: Optional[str] = None,
) -> Optional[Path]:
    """Save ``img`` as ``<results_dir>/<step>-<name>.png`` (Pillow through imageio, no OpenCV).

    Args:
        tb_writer: a tensorboardX ``SummaryWriter``; the image is also added under ``tag``.

    Returns:
        The file, or ``None`` when it exists and ``cover`` is False.
    """
    import imageio.v3 as iio

    frame = to_uint8_image(img)
    path = result_path(results_dir, name, step, add_timestamp, default_ext=".png")
    if tb_writer is not None:
        tb_writer.add_image(
            tag or Path(name).stem, frame, global_step=step, dataformats="HW" if frame.ndim == 2 else "HWC"
        )
    with publish(path, cover) as tmp:
        if tmp is None:
            return None
        iio.imwrite(tmp, frame, extension=path.suffix or ".png")
    return path
