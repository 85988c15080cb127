"""The original's first plotting entry (``RLA.easy_plot.plot_func.plot_res_func``) over
:func:`RLA.plot.plot_func`.

``prefix_dir`` is a task's log folder (``<data_root>/log/<task>``) and ``regs`` are globs on
``YYYY/MM/DD/<name>`` inside it, as in the original; ``param_keys`` split the runs into
curves, ``value_keys`` are the metrics. The figure goes to
``<data_root>/results/easy_plot/<task>/<save_name>`` and the original's pair
``(g2lf, score_results)`` is returned. ``y_bound`` clips and ``remove_outlier``
drops outliers per run as the original did. Fixed: the figure is not shown (pass
``show=True``), and no ``progress-[...].csv`` cache is written into the database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from RLA.easy_log.const import LOG, OTHER_RESULTS
from RLA.easy_plot.plot_util import word_replace
from RLA.errors import RLAError
from RLA.plot import default_key_to_legend
from RLA.plot import plot_func as _plot_func
from RLA.plot.outliers import ValueFilter


def split_prefix_dir(prefix_dir: str) -> tuple[Path, str]:
    """``(data_root, task)`` of ``<data_root>/log/<task>``.

    Raises:
        RLAError: the folder is not a task folder under a ``log`` folder.
    """
    folder = Path(prefix_dir).expanduser().resolve()
    if folder.parent.name != LOG:
        raise RLAError(
            f"{prefix_dir} is not a task's log folder",
            expected="<data_root>/log/<task>",
            found=str(folder),
            fix="pass prefix_dir=os.path.join(data_root, 'log', task)",
        )
    return folder.parent.parent, folder.name


def _bounds(x_start: float | None, x_bound: float | None) -> Any:
    if x_start is None:
        return x_bound
    return (x_start, float("inf") if x_bound is None else x_bound)


def plot_res_func(
    prefix_dir: str,
    regs: Sequence[str],
    param_keys: Sequence[str],
    value_keys: Sequence[str],
    scale_dict: dict[str, Callable] | None = None,
    replace_legend_keys: Sequence[str] | None = None,
    save_name: str | None = None,
    resample: int = int(1e3),
    smooth_step: float = 1.0,
    ylabel: Any = None,
    x_bound: float | None = None,
    y_bound: float | None = None,
    x_start: float | None = None,
    use_buf: bool = False,
    remove_outlier: bool = False,
    xlabel: str | None = None,
    key_to_legend_fn: Callable[..., str] | None = None,
    verbose: bool = True,
    *args: Any,
    **kwargs: Any,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Plot the runs matching ``regs`` under ``prefix_dir``; returns ``(g2lf, score_results)``.

    As in the original, each run's values above ``y_bound`` are clipped to ``y_bound`` and
    ``remove_outlier=True`` drops the rows whose z-score within the run is 10 or more (both
    before ``scale_dict``; see :mod:`RLA.plot.outliers`). ``replace_legend_keys`` gives one
    legend per reg (the original's manual legend mode).

    Raises:
        RLAError: a bad ``prefix_dir`` or option; RunNotFoundError: nothing matched.
    """
    del args
    value_filter = ValueFilter(y_bound=y_bound, remove_outlier=bool(remove_outlier))
    data_root, task = split_prefix_dir(prefix_dir)
    regs = [reg.lstrip("/") for reg in ([regs] if isinstance(regs, str) else regs)]
    result = _plot_func(
        data_root,
        task,
        regs,
        list(param_keys),
        list(value_keys),
        use_buf=use_buf,
        verbose=verbose,
        xlim=_bounds(x_start, x_bound),
        xlabel=xlabel or "time-step",
        ylabel=ylabel,
        scale_dict=scale_dict,
        regs2legends=replace_legend_keys,
        key_to_legend_fn=key_to_legend_fn or default_key_to_legend,
        save_name=save_name,
        save_dir=data_root / OTHER_RESULTS / "easy_plot" / task,
        resample=resample,
        smooth_step=smooth_step,
        value_filter=value_filter if value_filter.active else None,
        **kwargs,
    )
    return result.g2lf, result.score_results


def show_plt() -> None:
    """``plt.show()``."""
    import matplotlib.pyplot as plt

    plt.show()


def scale_index_to_dict(
    measure: Sequence[str], scale_index: Sequence[int], scale: Sequence[float]
) -> dict[str, float]:
    """``{measure[i]: scale factor}`` (1 for indexes not in ``scale_index``)."""
    return {m: (scale[list(scale_index).index(i)] if i in scale_index else 1) for i, m in enumerate(measure)}


def word_replace_back(strings: str) -> Any:
    """The inverse of :func:`word_replace` on a list literal (parsed safely, never evaluated)."""
    import ast

    return ast.literal_eval(strings.replace("--", "/").replace("||", "'"))


__all__ = [
    "default_key_to_legend",
    "plot_res_func",
    "scale_index_to_dict",
    "show_plt",
    "split_prefix_dir",
    "word_replace",
    "word_replace_back",
]
