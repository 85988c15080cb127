"""``RLA.easy_plot.plot_func.plot_res_func`` takes its arguments where the newest original did."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from RLA.easy_plot.plot_func import plot_res_func
from RLA.errors import RLAError

#: The newest original's positional parameters, in order (xionghuichen/RLAssistant, easy_plot).
ORIGINAL_ORDER = [
    "prefix_dir", "regs", "param_keys", "value_keys", "scale_dict", "replace_legend_keys", "legend_rescale",
    "save_name", "resample", "smooth_step", "ylabel", "x_bound", "y_bound", "x_start", "use_buf",
    "remove_outlier", "xlabel", "key_to_legend_fn", "verbose",
]  # fmt: skip


def test_positional_parameters_are_the_original_ones_in_order():
    params = [
        p for p in inspect.signature(plot_res_func).parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    assert [p.name for p in params] == ORIGINAL_ORDER


def test_save_name_given_by_position_lands_where_the_original_put_it(legacy_db: Path):
    prefix = str(legacy_db / "log" / "demo_task")
    plot_res_func(prefix, ["/2022/03/01/21-13*"], ["learning_rate"], ["y_out"], None, None, None, "pos.png", 0, 0,
                  verbose=False)  # fmt: skip
    assert (legacy_db / "results" / "easy_plot" / "demo_task" / "pos.png").is_file()


def test_older_misc_scale_keywords_scale_the_metric(legacy_db: Path):
    prefix = str(legacy_db / "log" / "demo_task")
    common = dict(resample=0, smooth_step=0, x_bound=25, verbose=False)
    _, plain = plot_res_func(prefix, ["/2022/03/01/21-13*"], ["learning_rate"], ["y_out"], **common)
    _, scaled = plot_res_func(prefix, ["/2022/03/01/21-13*"], ["learning_rate"], ["y_out"],
                              misc_scale=[0.5], misc_scale_index=[0], **common)  # fmt: skip
    assert plain["learning_rate=0.001-range"] == [40.0, 40.0]
    assert scaled["learning_rate=0.001-range"] == [20.0, 20.0]


@pytest.mark.parametrize(
    ("scale", "index"), [([0.5], [1]), ([0.5, 2.0], [0]), ([0.5], ["0"]), ([0.5], [-1])], ids=str
)
def test_misc_scale_that_does_not_match_value_keys_is_refused(legacy_db: Path, scale, index):
    with pytest.raises(RLAError, match="misc_scale and misc_scale_index do not match"):
        plot_res_func(str(legacy_db / "log" / "demo_task"), ["*"], [], ["y_out"], misc_scale=scale,
                      misc_scale_index=index, verbose=False)  # fmt: skip


def test_extra_positional_arguments_are_refused_not_dropped(legacy_db: Path):
    args = [str(legacy_db / "log" / "demo_task"), ["*"], [], ["y_out"]] + [None] * 15 + [True, "extra"]
    with pytest.raises(RLAError, match="2 more after verbose: True, 'extra'"):
        plot_res_func(*args)


def test_legend_rescale_warns_that_it_has_no_effect(legacy_db: Path):
    with pytest.warns(UserWarning, match="legend_rescale has no effect"):
        plot_res_func(str(legacy_db / "log" / "demo_task"), ["/2022/03/01/21-13*"], ["learning_rate"], ["y_out"],
                      legend_rescale=0.5, resample=0, smooth_step=0, verbose=False)  # fmt: skip
