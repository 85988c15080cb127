"""The original's ``RLA.easy_tf.tools`` (``run_with_metadata``: TF1 run traces): TensorFlow only."""

from __future__ import annotations

from RLA.easy_tf import tensorflow_only

run_with_metadata = tensorflow_only(
    "RLA.easy_tf.tools.run_with_metadata",
    "profile with torch.profiler and write the trace with logger.get_tbx_writer()",
)

__all__ = ["run_with_metadata"]
