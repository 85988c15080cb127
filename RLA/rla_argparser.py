"""The original ``RLA.rla_argparser``: ``boolean_flag`` and ``arg_parser_postprocess``.

RLA's ``arg_parser_postprocess`` keeps the three flags (``--loaded_task_name``, ``--info``,
``--loaded_date``) but defaults ``--loaded_date`` to "nothing selected" instead of the
original's ``True``, which made a fresh loader crash in ``strptime``.
"""

from __future__ import annotations

from RLA.loader.argparse_helpers import arg_parser_postprocess, boolean_flag

__all__ = ["boolean_flag", "arg_parser_postprocess"]
