"""Read ``rla_config.yaml`` (or a dict) into a validated :class:`RLAConfig`; the only YAML reader."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from RLA.config.fields import validate_section
from RLA.config.redact import RedactSettings
from RLA.config.remote import RemoteSettings
from RLA.config.schema import BackupConfig, ProjectType, RLAConfig
from RLA.errors import ConfigError

CONFIG_NAME = "rla_config.yaml"
_SECTIONS = {
    "PROJECT_TYPE": ProjectType,
    "BACKUP_CONFIG": BackupConfig,
    "REMOTE_SETTING": RemoteSettings,
    "REDACT": RedactSettings,
}
_SCALARS = {"LOG_USED", "DL_FRAMEWORK", "SEND_LOG_FILE", "DATA_ROOT", "HEARTBEAT_INTERVAL", "STDOUT_INTERVAL"}
_FRAMEWORKS = ("torch", "tensorflow", "none")


def read_yaml(path: Union[str, os.PathLike]) -> Any:
    """Parse a YAML file safely: a regular UTF-8 text file of at most
    :data:`~RLA.config.bounded_yaml.MAX_CONFIG_BYTES`, nested at most
    :data:`~RLA.config.bounded_yaml.MAX_DEPTH` levels, without alias bombs or huge integers.

    Raises:
        ConfigError: missing, binary, oversized, too deep or malformed file, naming it.
    """
    import yaml

    from RLA.config.bounded_yaml import MAX_CONFIG_BYTES, RefusedYAML, load_bounded
    from RLA.safe_read import UnreadableFileError, kind_of, read_text

    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"Config file {path} not found",
            expected="an existing rla_config.yaml",
            found="no such file" if not path.exists() else f"not a regular file ({kind_of(path)})",
            fix="create one with `rla init` or pass the right path to exp_manager.configure",
        )
    try:
        text = read_text(path.resolve(), MAX_CONFIG_BYTES)  # a linked config is fine: its target is read
    except (UnreadableFileError, FileNotFoundError) as exc:
        reason = getattr(exc, "reason", "no such file")
        raise ConfigError(
            f"{path}: cannot be read as a config",
            expected=f"a UTF-8 YAML text file of at most {MAX_CONFIG_BYTES} bytes",
            found=reason,
            fix="point to your rla_config.yaml (`rla init` writes one)",
        ) from None
    try:
        return load_bounded(text)
    except RefusedYAML as exc:
        raise ConfigError(
            f"{path}: {exc.problem}{exc.where}", expected=exc.expected, found=exc.found, fix=exc.fix
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(
            f"{path}: malformed YAML{where}",
            expected="valid YAML",
            found=str(getattr(exc, "problem", exc)),
            fix="fix the syntax (indentation, colons, quotes)",
        ) from exc


def load_config(
    source: Union[str, os.PathLike, Mapping[str, Any], RLAConfig, None],
    project_root: Optional[Union[str, os.PathLike]] = None,
) -> RLAConfig:
    """Load and validate a configuration.

    Args:
        source: a path to ``rla_config.yaml``, a mapping with the same keys, an already
            loaded :class:`RLAConfig`, or ``None`` for the defaults.
        project_root: folder relative paths refer to (defaults to the file's folder, or the
            current directory for a mapping).

    Raises:
        ConfigError: missing file, malformed YAML, unknown key, wrong type or bad value.
    """
    if isinstance(source, RLAConfig):
        return source
    if source is None:
        raw: Any = {}
        origin = "<defaults>"
        file_path: Optional[Path] = None
    elif isinstance(source, Mapping):
        raw = dict(source)
        origin = "<config dict>"
        file_path = None
    else:
        file_path = Path(source).expanduser().resolve()
        raw = read_yaml(file_path)
        origin = str(file_path)
        if raw is None:
            raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{origin}: the config is not a mapping",
            expected="top-level keys such as LOG_USED",
            found=f"{type(raw).__name__}",
            fix="write the config as 'KEY: value' lines",
        )
    root = (
        Path(project_root).resolve()
        if project_root is not None
        else (file_path.parent if file_path is not None else Path.cwd())
    )
    return _build(raw, origin, file_path, root)


def _build(raw: Dict[str, Any], origin: str, file_path: Optional[Path], root: Path) -> RLAConfig:
    known = set(_SECTIONS) | _SCALARS
    values: Dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}? " if close else ""
            raise ConfigError(
                f"{origin}: unknown key {key}",
                expected=f"one of {', '.join(sorted(known))}",
                found=str(key),
                fix=f"{hint}remove or rename the key",
            )
        if key in _SECTIONS:
            values[key] = validate_section(_SECTIONS[key], value, origin, prefix=f"{key}.")
    values.update(_scalars(raw, origin))
    return RLAConfig(**values, source=file_path, project_root=root)


def _scalars(raw: Dict[str, Any], origin: str) -> Dict[str, Any]:
    """The top-level scalar keys that are set, each checked and normalized."""
    return {key: check(raw[key], origin) for key, check in _SCALAR_CHECKS.items() if raw.get(key) is not None}


def _refuse(origin: str, key: str, problem: str, expected: str, found: Any, fix: str) -> ConfigError:
    return ConfigError(f"{origin}: key {key} has {problem}", expected=expected, found=repr(found), fix=fix)


def _log_used(used: Any, origin: str) -> List[str]:
    if isinstance(used, str):
        used = [used]
    if not isinstance(used, list) or not all(isinstance(u, str) for u in used):
        raise _refuse(
            origin,
            "LOG_USED",
            "the wrong type",
            "a list of output format names, e.g. [stdout, log, csv, tensorboard]",
            used,
            "write LOG_USED as a YAML list of names",
        )
    return list(dict.fromkeys(used))


def _framework(framework: Any, origin: str) -> str:
    if not isinstance(framework, str) or framework.lower() not in _FRAMEWORKS:
        raise _refuse(
            origin,
            "DL_FRAMEWORK",
            "a bad value",
            f"one of {', '.join(_FRAMEWORKS)}",
            framework,
            "choose the checkpoint backend of your framework",
        )
    return framework.lower()


def _send_log_file(value: Any, origin: str) -> bool:
    if not isinstance(value, bool):
        raise _refuse(
            origin,
            "SEND_LOG_FILE",
            "the wrong type",
            "true or false",
            value,
            "write SEND_LOG_FILE: true (or false)",
        )
    return value


def _data_root(value: Any, origin: str) -> str:
    if not isinstance(value, str):
        raise _refuse(
            origin,
            "DATA_ROOT",
            "the wrong type",
            "a path string",
            value,
            "write DATA_ROOT: ./data (relative to the config)",
        )
    return value


def _heartbeat(beat: Any, origin: str) -> float:
    if isinstance(beat, bool) or not isinstance(beat, (int, float)) or beat <= 0:
        raise _refuse(
            origin,
            "HEARTBEAT_INTERVAL",
            "a bad value",
            "a positive number of seconds",
            beat,
            "write HEARTBEAT_INTERVAL: 30",
        )
    return float(beat)


def _stdout_interval(every: Any, origin: str) -> float:
    if isinstance(every, bool) or not isinstance(every, (int, float)) or not every >= 0:
        raise _refuse(
            origin,
            "STDOUT_INTERVAL",
            "a bad value",
            "seconds between two tables printed on stdout, >= 0 (0 = every dump)",
            every,
            "write STDOUT_INTERVAL: 5",
        )
    return float(every)


#: The top-level scalar keys, checked in this order (the first bad one is reported).
_SCALAR_CHECKS: Dict[str, Callable[[Any, str], Any]] = {
    "LOG_USED": _log_used,
    "DL_FRAMEWORK": _framework,
    "SEND_LOG_FILE": _send_log_file,
    "DATA_ROOT": _data_root,
    "HEARTBEAT_INTERVAL": _heartbeat,
    "STDOUT_INTERVAL": _stdout_interval,
}


def find_config(start: Union[str, os.PathLike, None] = None) -> Optional[Path]:
    """The nearest ``rla_config.yaml`` in ``start`` (default: cwd) or its parents."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None
