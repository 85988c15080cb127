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

import warnings
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


def _merge_misc_scale(
    value_keys: list[str], scale_dict: dict[str, Callable] | None, misc_scale: Any, misc_scale_index: Any
) -> dict[str, Callable] | None:
    """``scale_dict`` with the older originals' ``misc_scale[i]`` multiplier for ``value_keys[misc_scale_index[i]]``.

    Raises:
        RLAError: the two lists differ in length or an index is not one of ``value_keys``.
    """
    if misc_scale is None and misc_scale_index is None:
        return scale_dict
    scales, indexes = list(misc_scale or []), list(misc_scale_index or [])
    if len(scales) != len(indexes) or any(
        not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(value_keys) for i in indexes
    ):
        raise RLAError(
            "misc_scale and misc_scale_index do not match",
            expected=f"as many scales as indexes, each index in 0..{len(value_keys) - 1} (a position in value_keys)",
            found=f"misc_scale={scales!r}, misc_scale_index={indexes!r}",
            fix="pass scale_dict={metric: fn} instead, e.g. scale_dict={'return': lambda y: y * 0.01}",
        )
    merged = dict(scale_dict or {})
    for index, factor in zip(indexes, scales):
        merged[value_keys[index]] = lambda y, factor=factor: y * factor
    return merged


def _bounds(x_start: float | None, x_bound: float | None) -> Any:
    if x_start is None:
        return x_bound
    return (x_start, float("inf") if x_bound is None else x_bound)


# size: the original's 19 positional parameters in its order, their documentation and argument checks
def plot_res_func(
    prefix_dir: str,
    regs: Sequence[str],
    param_keys: Sequence[str],
    value_keys: Sequence[str],
    scale_dict: dict[str, Callable] | None = None,
    replace_legend_keys: Sequence[str] | None = None,
    legend_rescale: Any = None,
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

    The positional order is the newest original's; ``legend_rescale`` is accepted there and,
    as in the original, has no effect. The older originals' ``misc_scale`` /
    ``misc_scale_index`` keywords (multipliers for the metrics at those indexes) become a
    ``scale_dict``.

    Raises:
        RLAError: a bad ``prefix_dir`` or option, or positional arguments after ``verbose``
        (the original failed on them too); RunNotFoundError: nothing matched.
    """
    if args:
        raise RLAError(
            "plot_res_func got more positional arguments than the original takes",
            expected="at most 19 positional arguments (prefix_dir ... verbose), the rest by name",
            found=f"{len(args)} more after verbose: {', '.join(repr(a) for a in args)}",
            fix="pass the other options by keyword, e.g. plot_res_func(..., show=True)",
        )
    if legend_rescale is not None:
        warnings.warn("plot_res_func: legend_rescale has no effect (as in the original)", stacklevel=2)
    scale_dict = _merge_misc_scale(
        list(value_keys), scale_dict, kwargs.pop("misc_scale", None), kwargs.pop("misc_scale_index", None)
    )
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
