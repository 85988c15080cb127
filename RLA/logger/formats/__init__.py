"""The output-format registry: format name (as in ``LOG_USED``) -> writer factory.

Built-in formats are registered as dotted paths, so ``tensorboardX`` is imported only
when the ``tensorboard`` format is used. Third-party formats join either at run time,
``register_output_format("mlflow", MyWriter)``, or through the ``rla.output_formats``
entry-point group of their package::

    [project.entry-points."rla.output_formats"]
    mlflow = "my_pkg.rla_forwarder:MlflowForwarder"

A factory is called as ``factory(log_dir)`` (``log_dir`` may be ``None`` when the logger
has no directory) and returns a :class:`~RLA.logger.formats.base.KVWriter`.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from RLA.errors import LoggerError, RLAError
from RLA.logger.formats.base import KVWriter, SeqWriter
from RLA.registry import Registry

ENTRY_POINT_GROUP = "rla.output_formats"

#: Every output format by name.
output_formats: "Registry[Callable[[Optional[str]], KVWriter]]" = Registry(
    "output format", entry_point_group=ENTRY_POINT_GROUP
)
output_formats.register("stdout", "RLA.logger.formats.stdout:StdoutOutputFormat")
output_formats.register("log", "RLA.logger.formats.log:LogTxtOutputFormat")
output_formats.register("csv", "RLA.logger.formats.csv:CSVOutputFormat")
output_formats.register("json", "RLA.logger.formats.json:JSONOutputFormat")
output_formats.register(
    "tensorboard",
    "RLA.logger.formats.tensorboard:TensorBoardOutputFormat",
    install_hint="pip install tensorboardX, or remove 'tensorboard' from LOG_USED",
    requires=("tensorboardX",),
)

BUILTIN_FORMATS = ("stdout", "log", "csv", "json", "tensorboard")


def register_output_format(
    name: str, factory: Callable[[Optional[str]], KVWriter] | str, override: bool = False
) -> None:
    """Make ``name`` usable in ``format_strs`` / ``LOG_USED``.

    Args:
        name: the format name (also what ``exclude=`` compares against).
        factory: a ``KVWriter`` subclass or any callable ``factory(log_dir) -> KVWriter``,
            or a dotted path ``"pkg.module:Name"`` imported on first use.
        override: replace an existing entry of the same name.
    """
    if not isinstance(name, str) or not name:
        raise LoggerError(
            "An output format needs a non-empty string name",
            expected="a name such as 'mlflow'",
            found=repr(name),
            fix="pass the name as a string",
        )
    try:
        output_formats.register(name, factory, override=override)
    except RLAError as exc:
        raise LoggerError(exc.problem, expected=exc.expected, found=exc.found, fix=exc.fix) from None


def make_output_format(name: str, log_dir: Optional[str]) -> KVWriter:
    """Create the writer registered as ``name`` for ``log_dir``.

    Raises:
        LoggerError: unknown name (with a did-you-mean hint) or a factory returning
            something that is not a ``KVWriter``.
        BackendNotInstalledError: the format's optional dependency is missing.
    """
    try:
        factory = output_formats.get(name)
    except LoggerError:
        raise
    except RLAError as exc:
        if type(exc) is not RLAError:
            raise
        raise LoggerError(exc.problem, expected=exc.expected, found=exc.found, fix=exc.fix) from None
    writer: Any = factory(log_dir)
    if not isinstance(writer, KVWriter):
        raise LoggerError(
            f"The output format {name!r} did not build a KVWriter",
            expected="factory(log_dir) -> RLA.logger.formats.base.KVWriter",
            found=type(writer).__name__,
            fix="subclass KVWriter and implement write(kvs, step)",
        )
    writer.name = name  # ``exclude=`` matches the name the user configured
    return writer


__all__ = [
    "KVWriter",
    "SeqWriter",
    "output_formats",
    "register_output_format",
    "make_output_format",
    "BUILTIN_FORMATS",
    "ENTRY_POINT_GROUP",
]
