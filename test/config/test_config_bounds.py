"""A crafted rla_config.yaml is a ConfigError naming the file and what was found, never a crash."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from RLA.config.bounded_yaml import MAX_DEPTH, MAX_EXPANDED_NODES, expanded_size, load_bounded
from RLA.config.loader import load_config, read_yaml
from RLA.errors import ConfigError

BOMB = "".join(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
               for prev, name in zip([None, "a", "b", "c", "d", "e", "f", "g"], "abcdefgh"))


def _write(tmp_path: Path, content, name: str = "rla_config.yaml") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.timeout(60)
@pytest.mark.parametrize("content, found", [
    (b"LOG_USED: [csv]\n\x00\x01\x02", "binary file (NUL byte"),
    (b"LOG_USED: [\xff\xfe]\n", "binary file (invalid UTF-8"),
    ("HEARTBEAT_INTERVAL: " + "9" * 5000 + "\n", "an integer of 5000 digits"),
    ("REMOTE_SETTING: {port: " + "1" * 200 + "}\n", "an integer of 200 digits"),
    ("LOG_USED: " + "[" * 50_000 + "]" * 50_000 + "\n", f"more than {MAX_DEPTH} levels"),
    ("".join(" " * i + f"k{i}:\n" for i in range(200)), f"more than {MAX_DEPTH} levels"),
    (BOMB, f"more than {MAX_EXPANDED_NODES}"),
    ("# " + "x" * (2 << 20) + "\n", "bytes (at most 1048576"),
])
def test_crafted_configs_are_config_errors_naming_the_file(tmp_path, content, found):
    path = _write(tmp_path, content)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message and found in message, message


@pytest.mark.timeout(30)
@pytest.mark.parametrize("make, found", [
    (lambda p: os.mkfifo(p), "FIFO"),
    (lambda p: p.mkdir(), "directory"),
])
def test_a_config_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path, make, found):
    path = tmp_path / "rla_config.yaml"
    make(path)
    with pytest.raises(ConfigError, match=found):
        read_yaml(path)


def test_a_linked_config_is_read(tmp_path):
    target = _write(tmp_path, "LOG_USED: [csv]\n", "real.yaml")
    link = tmp_path / "rla_config.yaml"
    link.symlink_to(target)
    assert load_config(link).LOG_USED == ["csv"]


def test_ordinary_anchors_and_nesting_at_the_limit_still_load():
    text = "base: &b {a: 1, b: [1, 2]}\nx: *b\ny: *b\nz: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    data = load_bounded(text)
    assert data["x"] == data["y"] == {"a": 1, "b": [1, 2]}


def test_the_expanded_size_counts_every_alias_use():
    import yaml
    node = yaml.compose("a: &a [1, 2, 3]\nb: [*a, *a, *a]\n")
    # mapping + (key a + seq of 3 = 5) + (key b + seq of 3 x (seq of 3 = 4) = 14)
    assert expanded_size(node) == 1 + 5 + 14
