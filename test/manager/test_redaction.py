"""The redaction policy alone: every quoting form, key patterns, command lines, files, config, resume."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from RLA.config import load_config
from RLA.errors import ConfigError, HyperParameterError
from RLA.loader.loader import ExperimentLoader
from RLA.manager.experiment import ExperimentManager
from RLA.manager.run_info import read_run_info
from RLA.manager.code_backup import redact_file
from RLA.redaction import DEFAULT_KEY_PATTERNS, MARKER, RedactionPolicy, scrub
from redaction_forms import NASTY, encodings

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("form", sorted(encodings(NASTY)))
def test_every_quoting_form_of_a_known_value_is_redacted(form):
    encoded = encodings(NASTY)[form]
    policy = RedactionPolicy(values=[NASTY])
    out = policy.redact_text(f"before {encoded} after")
    assert out == f"before {MARKER} after"
    assert policy.redact_bytes(f"x{encoded}y".encode()) == f"x{MARKER}y".encode()


@pytest.mark.parametrize("form", ["json", "json_unicode", "yaml_double", "yaml_double_unicode"])
def test_json_and_yaml_escapes_of_control_characters_are_redacted(form):
    secret = "bell\x07\u00e9-tok"  # JSON writes \u0007, YAML \a; only ASCII output escapes the e-acute
    encoded = encodings(secret)[form]
    assert RedactionPolicy(values=[secret]).redact_text(f"[{encoded}]") == f"[{MARKER}]"


def test_each_line_of_a_multi_line_secret_is_redacted_in_a_diff():
    secret = "-----BEGIN KEY-----\nQmFzZTY0TGluZTE=\nQmFzZTY0TGluZTI=\n-----END KEY-----"
    diff = "".join(f"+{line}\n" for line in secret.splitlines())
    out = RedactionPolicy(values=[secret]).redact_text(diff)
    assert "QmFzZTY0TGluZTE=" not in out and "QmFzZTY0TGluZTI=" not in out


def test_values_shorter_than_min_length_are_not_searched_in_text():
    policy = RedactionPolicy(values=["abc", "abcd"])
    assert policy.redact_text("abc abcd") == f"abc {MARKER}"
    assert RedactionPolicy(values=["abc"], min_length=3).redact_text("abc") == MARKER
    # ... but a short value under a secret key is still hidden in a mapping
    assert RedactionPolicy().redact_mapping({"password": "abc"}) == {"password": MARKER}


@pytest.mark.parametrize("key", ["password", "DB_PASSWORD", "db.password", "api-key", "apiKey", "hf_token",
                                 "aws.SECRET_ACCESS_KEY", "ssh_private_key", "gcp_credentials", "passwd"])
def test_default_key_patterns_match_case_insensitively(key):
    assert RedactionPolicy().is_secret_key(key)


@pytest.mark.parametrize("key", ["lr", "env_id", "seed", "keyboard", "pass_rate"])
def test_ordinary_keys_are_not_secrets(key):
    assert not RedactionPolicy().is_secret_key(key)


def test_key_patterns_match_the_full_dotted_key_and_its_last_component():
    policy = RedactionPolicy(key_patterns=["db.*", "pin", "API_*"])
    hp = {"db": {"host": "h.example", "port": 5432}, "bank": {"pin": "8831"}, "pin_count": "7777",
          "svc": {"api_url": "https://x"}}
    assert policy.redact_mapping(hp) == {"db": {"host": MARKER, "port": 5432}, "bank": {"pin": MARKER},
                                         "pin_count": "7777", "svc": {"api_url": MARKER}}


def test_mapping_redaction_keeps_numbers_and_does_not_touch_the_input():
    hp = {"num_tokens": 512, "use_token": True, "api_token": "tok_0123456789", "nested": [{"secret": "zz-top-99"}],
          "note": "pre tok_0123456789 post"}
    before = json.dumps(hp)
    policy = RedactionPolicy()
    policy.learn(hp)
    out = policy.redact_mapping(hp)
    assert out == {"num_tokens": 512, "use_token": True, "api_token": MARKER, "nested": [{"secret": MARKER}],
                   "note": f"pre {MARKER} post"}
    assert json.dumps(hp) == before


def test_argv_hides_secret_options_in_every_spelling():
    policy = RedactionPolicy(values=["known-value-1"])
    argv = ["train.py", "--password", "p1-secret", "--api-key=k2-secret", "db.password=p3-secret",
            "--auth_token", "a=b-secret", "-p", "known-value-1", "-q", "visible", "--lr", "0.1"]
    out = policy.redact_argv(argv)
    assert out == ["train.py", "--password", MARKER, f"--api-key={MARKER}", f"db.password={MARKER}",
                   "--auth_token", MARKER, "-p", MARKER, "-q", "visible", "--lr", "0.1"]
    policy.learn(argv=argv)
    assert policy.redact_text("p1-secret k2-secret p3-secret a=b-secret") == " ".join([MARKER] * 4)


def test_numbers_and_booleans_under_secret_keys_are_not_searched_elsewhere():
    policy = RedactionPolicy()
    argv = ["train.py", "--num_tokens", "1024", "--use-token=true"]
    policy.learn({"max_tokens": "2048", "api_token": "tok_0123456789"}, argv=argv)
    assert policy.redact_argv(argv) == ["train.py", "--num_tokens", MARKER, f"--use-token={MARKER}"]
    assert policy.redact_text("batch 1024 of 2048, flag true, tok_0123456789") == \
        f"batch 1024 of 2048, flag true, {MARKER}"


def test_scrub_hides_every_form_of_a_short_transport_password():
    assert scrub("login failed: 'a''b'", "a'b") == f"login failed: '{MARKER}'"
    assert scrub("nothing", None) == "nothing"


def test_redact_file_streams_across_chunk_borders_and_keeps_the_mode(tmp_path):
    secret = "chunk-border-secret"
    path = tmp_path / "big.txt"
    body = ("x" * 37 + secret) * 50 + json.dumps(secret)
    path.write_text(body)
    os.chmod(path, 0o600)
    assert redact_file(path, RedactionPolicy(values=[secret]), chunk_size=16)
    data = path.read_text()
    assert secret not in data and data.count(MARKER) == 51
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    untouched = tmp_path / "clean.txt"
    untouched.write_text("nothing here")
    assert not redact_file(untouched, RedactionPolicy(values=[secret]), chunk_size=4)


# -- the REDACT section of rla_config.yaml ----------------------------------------------------
def test_redact_config_defaults_when_absent():
    redact = load_config({}).REDACT
    assert "*password*" in redact.key_patterns and redact.env == ["RLA_REMOTE_PASSWORD"]
    assert redact.min_length == 4 and redact.values == []


def test_the_documented_config_lists_the_default_key_patterns():
    repo = Path(__file__).resolve().parents[2]
    assert tuple(load_config(repo / "rla_config.yaml").REDACT.key_patterns) == DEFAULT_KEY_PATTERNS


@pytest.mark.parametrize("section, match", [
    ({"key_patterns": "*pin*"}, "REDACT.key_patterns has the wrong type"),
    ({"key_patterns": ["*pin*", " "]}, "empty pattern"),
    ({"env": ["NOT-A-NAME"]}, "environment variable name"),
    ({"min_length": 0}, "REDACT.min_length has a bad value"),
    ({"values": [["nested"]]}, "REDACT.values has an element of the wrong type"),
    ({"key_pattern": ["*pin*"]}, "did you mean REDACT.key_patterns"),
])
def test_bad_redact_config_is_a_config_error(section, match):
    with pytest.raises(ConfigError, match=match):
        load_config({"REDACT": section})


def test_values_of_the_redact_section_are_never_shown():
    config = load_config({"REDACT": {"values": ["cfg-secret-42"]}})
    assert "cfg-secret-42" not in repr(config) and "cfg-secret-42" not in json.dumps(config.public_dict())


def _run(tmp_path: Path, config: dict, **hp) -> ExperimentManager:
    mgr = ExperimentManager()
    mgr.set_hyper_param(**hp)
    mgr.configure("t", rla_config=dict(config, LOG_USED=["log", "csv"], DL_FRAMEWORK="none"),
                  data_root=str(tmp_path / "data"), run_file=[], code_root=str(tmp_path))
    mgr.log_files_gen()
    return mgr


def test_key_patterns_and_values_from_the_config_apply_to_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_KEY", "env-named-secret")
    mgr = _run(tmp_path, {"REDACT": {"key_patterns": ["*pin*"], "values": ["cfg-secret-42"],
                                     "env": ["MY_SERVICE_KEY"]}},
               bank_pin="8831-xyz", password="kept-because-replaced", note="cfg-secret-42 env-named-secret")
    mgr.print_args()
    mgr.finish()
    info = read_run_info(mgr.layout.run_info_file)
    assert info["hyper_params"] == {"bank_pin": MARKER, "password": "kept-because-replaced",
                                    "note": f"{MARKER} {MARKER}"}
    assert "cfg-secret-42" not in (mgr.layout.log_dir / "backup.txt").read_text()


# -- resume --------------------------------------------------------------------------------------
def test_resume_takes_a_redacted_value_from_the_current_hyper_parameters(tmp_path):
    old = _run(tmp_path, {}, password="old-secret-1", lr=0.1)
    old.finish()
    new = _run(tmp_path, {}, password="new-secret-2", lr=0.5, loaded_date=old.index)
    args = ExperimentLoader(new).import_hyper_parameters()
    assert args.password == "new-secret-2" and args.lr == 0.1
    new.finish()


def test_resume_without_the_redacted_value_is_an_error(tmp_path):
    old = _run(tmp_path, {}, api_token="old-token-1", lr=0.1)
    old.finish()
    new = _run(tmp_path, {}, lr=0.5, loaded_date=old.index)
    with pytest.raises(HyperParameterError, match="'api_token'.*redacted") as info:
        ExperimentLoader(new).import_hyper_parameters()
    assert "--api_token" in str(info.value)
    new.finish()
