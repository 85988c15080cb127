"""polixir's ``plot_saved_images``: show the images runs saved in ``results/`` (e.g. by
``MatplotlibRecorder``), newest first, for the runs matching some globs.

``img_names`` are gitignore-style patterns on the file's path inside the run's results
folder (``'*react_func.png'``); for each, the ``max_keep_num`` newest files are shown.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from RLA.easy_log.const import OTHER_RESULTS
from RLA.easy_plot.result_cls import ImgResult
from RLA.easy_plot.utils import results_loader


def meta_image_data_loader_func(
    query_res: object, selected_images: Sequence[str], max_keep_num: int
) -> ImgResult:
    """An :class:`ImgResult` mapping each pattern to the newest ``max_keep_num`` matching files."""
    import pathspec

    dirname = os.path.abspath(query_res.dirname)  # type: ignore[attr-defined]
    files = [os.path.abspath(p) for p in getattr(query_res, "location", [])]
    found: dict[str, list[str]] = {}
    for pattern in selected_images:
        spec = pathspec.GitIgnoreSpec.from_lines([pattern])
        hits = [p for p in files if spec.match_file(os.path.relpath(p, dirname))]
        hits.sort(key=lambda p: (os.path.getmtime(p), p), reverse=True)
        found[pattern] = hits[:max_keep_num]
    return ImgResult(dirname=dirname, img_path_dict=found)


def _show(path: str) -> None:
    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt

    image = mpimg.imread(path)
    dpi = 60
    height, width = image.shape[:2]
    plt.figure(figsize=(width / dpi, height / dpi))
    plt.title(os.path.basename(path))
    plt.imshow(image)
    plt.show()


def plot_saved_images(
    data_root: str,
    task_table_name: str,
    regs: list,
    img_names: list,
    hp_filter_dict: dict | None = None,
    verbose: bool = False,
    max_keep_num: int = 1,
    summarize_res: bool = True,
    show: bool = True,
) -> dict[str, list[ImgResult]]:
    """Show the saved images of each matching run; returns ``{reg: [ImgResult, ...]}``.

    Args:
        data_root, task_table_name, regs: the runs (globs on ``YYYY/MM/DD/<name>``).
        img_names: patterns of the images to show.
        hp_filter_dict: ``{key: [allowed values]}``.
        verbose: print why runs are skipped.
        max_keep_num: newest files kept per pattern.
        summarize_res: print the runs each reg found.
        show: draw each image with ``plt.show()`` (the original always did).
    """
    _, reg_group = results_loader(
        data_root,
        task_table_name,
        regs,
        hp_filter_dict,
        lambda hit: meta_image_data_loader_func(hit, img_names, max_keep_num),
        verbose,
        data_type=OTHER_RESULTS,
    )
    if summarize_res:
        for reg, found in reg_group.items():
            print(f"for regex {reg}, we have the following results:")
            for res in found:
                print("find log", res.dirname)
    for reg in regs:
        print(f"---print reg {reg} ----")
        for res in reg_group[reg]:
            print(f"+++ print log {res.dirname} ++++")
            for pattern in img_names:
                paths = (getattr(res, "img_path_dict", None) or {}).get(pattern) or []
                if not paths:
                    print("can not find", pattern)
                for path in paths:
                    print(path)
                    if show:
                        _show(path)
    return reg_group  # type: ignore[return-value]  # the loader made ImgResults


__all__ = ["meta_image_data_loader_func", "plot_saved_images"]
