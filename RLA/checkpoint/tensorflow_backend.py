"""The TensorFlow checkpoint slot: ``checkpoint-<step>.tf.npz`` when TensorFlow is installed."""

from __future__ import annotations

from RLA.checkpoint.numpy_backend import NumpyBackend
from RLA.errors import BackendNotInstalledError


class TensorflowBackend(NumpyBackend):
    """Variables and tensors (anything with ``__array__``) stored as numpy arrays.

    Selected by ``DL_FRAMEWORK: tensorflow``. Without TensorFlow installed every use raises
    :class:`RLA.errors.BackendNotInstalledError` with the install command; TF1 graph
    savers of the original are not reproduced.
    """

    name = "tensorflow"
    extension = "tf.npz"

    def check_available(self) -> None:
        try:
            import tensorflow  # noqa: F401
        except ImportError as exc:
            raise BackendNotInstalledError(
                "DL_FRAMEWORK is 'tensorflow' but TensorFlow is not installed",
                expected="the tensorflow package importable",
                found=f"ImportError: {exc}",
                fix="pip install tensorflow, or set DL_FRAMEWORK: torch / none in rla_config.yaml",
            ) from exc
