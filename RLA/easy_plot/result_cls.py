"""polixir's ``RLA.easy_plot.result_cls``: what the plot loaders return per run."""

from __future__ import annotations

from typing import Any, Dict, Optional


class Result:
    """A run's folder and hyper-parameters."""

    def __init__(self, hyper_param: Optional[Dict[str, Any]] = None, dirname: Optional[str] = None) -> None:
        self.hyper_param = hyper_param
        self.dirname = dirname


class CsvResult(Result):
    """A run's ``progress`` table (pandas DataFrame), with optional ``monitor``/``metadata``."""

    def __init__(
        self,
        monitor: Any = None,
        progress: Any = None,
        dirname: Optional[str] = None,
        metadata: Any = None,
        hyper_param: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__(hyper_param=hyper_param, dirname=dirname)
        self.monitor, self.progress, self.metadata = monitor, progress, metadata


class ImgResult(Result):
    """A run's saved images: ``img_path_dict`` maps a pattern to the matching files."""

    def __init__(
        self,
        hyper_param: Optional[Dict[str, Any]] = None,
        dirname: Optional[str] = None,
        img_path_dict: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__(hyper_param=hyper_param, dirname=dirname)
        self.img_path_dict = img_path_dict


__all__ = ["Result", "CsvResult", "ImgResult"]
