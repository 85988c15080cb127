"""rla_config.yaml loading and validation."""
from __future__ import annotations

from pathlib import Path

import pytest

from RLA.config import default_config_text, find_config, load_config
from RLA.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rla_config.yaml"
    path.write_text(text)
    return path


def test_documented_default_file_loads_and_matches_repository_copy():
    assert (REPO / "rla_config.yaml").read_text() == default_config_text()
    config = load_config(REPO / "rla_config.yaml")
    assert config.log_used == ["stdout", "log", "csv", "tensorboard"]
    assert config.backup_code_by == "source"


def test_empty_file_gives_defaults(tmp_path):
    config = load_config(write(tmp_path, ""))
    assert config.dl_framework == "torch"
    assert config.send_log_file is False
    assert config.remote.file_transfer_protocol == "sftp"
    assert config.project_root == tmp_path.resolve()


def test_original_keys_are_accepted(tmp_path):
    config = load_config(write(tmp_path, """
PROJECT_TYPE: {backup_code_by: lib}
BACKUP_CONFIG: {backup_code_dir: [src], lib_dir: ./build/lib/}
LOG_USED: [stdout, csv]
DL_FRAMEWORK: none
SEND_LOG_FILE: true
REMOTE_SETTING:
  ftp_server: 127.0.0.1
  username: me
  remote_log_root: /data
"""))
    assert config.backup_code_by == "lib"
    assert config.remote.remote_data_root == "/data"
    assert config.send_log_file is True


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(ConfigError, match="not found") as info:
        load_config(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(info.value) and "rla init" in str(info.value)


def test_unknown_key_suggests_the_right_one(tmp_path):
    path = write(tmp_path, "LOG_USD: [csv]\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message and "LOG_USD" in message and "did you mean LOG_USED" in message


def test_unknown_nested_key_suggests_the_right_one(tmp_path):
    with pytest.raises(ConfigError, match="did you mean BACKUP_CONFIG.backup_code_dir"):
        load_config(write(tmp_path, "BACKUP_CONFIG: {backup_code_dirs: [a]}\n"))


@pytest.mark.parametrize("text, key", [
    ("SEND_LOG_FILE: 'yes'\n", "SEND_LOG_FILE"),
    ("REMOTE_SETTING: {port: 'twenty-two'}\n", "REMOTE_SETTING.port"),
    ("BACKUP_CONFIG: {backup_code_dir: src}\n", "BACKUP_CONFIG.backup_code_dir"),
    ("LOG_USED: {a: 1}\n", "LOG_USED"),
    ("HEARTBEAT_INTERVAL: -1\n", "HEARTBEAT_INTERVAL"),
    ("DATA_ROOT: 5\n", "DATA_ROOT"),
    ("STDOUT_INTERVAL: -1\n", "STDOUT_INTERVAL"),
])
def test_wrong_type_names_key_expected_and_found(tmp_path, text, key):
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    message = str(info.value)
    assert key in message and "Expected:" in message and "Found:" in message


@pytest.mark.parametrize("text, found", [
    ("DL_FRAMEWORK: jax\n", "jax"),
    ("PROJECT_TYPE: {backup_code_by: copy}\n", "copy"),
    ("REMOTE_SETTING: {file_transfer_protocol: sftpp}\n", "sftpp"),
])
def test_bad_value_lists_the_allowed_ones(tmp_path, text, found):
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert found in str(info.value) and "Expected: one of" in str(info.value)


def test_malformed_yaml_reports_the_line(tmp_path):
    with pytest.raises(ConfigError, match="malformed YAML at line 2"):
        load_config(write(tmp_path, "LOG_USED: [csv\nDL_FRAMEWORK: none\n"))


def test_password_is_never_shown(tmp_path):
    config = load_config(write(tmp_path, "REMOTE_SETTING: {password: hunter2secret}\n"))
    assert "hunter2secret" not in repr(config)
    assert "hunter2secret" not in str(config.public_dict())
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, "REMOTE_SETTING: {password: 12345678}\n"))
    assert "12345678" not in str(info.value)


def test_password_environment_variable_wins(tmp_path, monkeypatch):
    config = load_config(write(tmp_path, "REMOTE_SETTING: {password: fromfile}\n"))
    monkeypatch.setenv("RLA_REMOTE_PASSWORD", "fromenv")
    assert config.remote.resolved_password() == "fromenv"


def test_dict_config_is_validated_too():
    with pytest.raises(ConfigError, match="<config dict>: unknown key"):
        load_config({"DL_FRAMEWRK": "torch"})


def test_relative_paths_resolve_against_the_config_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    config = load_config(write(tmp_path / "sub", "BACKUP_CONFIG: {backup_code_dir: [src]}\n"))
    assert config.resolve("src") == (tmp_path / "sub" / "src").resolve()


def test_find_config_walks_upwards(tmp_path):
    write(tmp_path, "")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(deep) == tmp_path / "rla_config.yaml"
