"""Secrets in places the first redaction tests did not try: overlapping secrets, dict keys
under a secret key, credentials inside a URL value, a run's logged column names and a
Unicode secret in its other normal form."""
from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import pytest

from RLA.manager.code_backup import redact_file
from RLA.manager.experiment import ExperimentManager
from RLA.redaction import MARKER, RedactionPolicy

pytestmark = pytest.mark.timeout(120)


def test_two_overlapping_secrets_leave_no_character_of_either():
    """'abcdefgh' and 'efghijkl' in 'abcdefghijkl': the first match used to leave 'ijkl'."""
    policy = RedactionPolicy(values=["abcdefgh", "efghijkl"])
    assert policy.redact_text("xx abcdefghijkl yy") == f"xx {MARKER} yy"
    assert policy.redact_bytes(b"xx abcdefghijkl yy") == f"xx {MARKER} yy".encode()


def test_overlapping_secrets_are_hidden_in_a_streamed_file_across_chunk_borders(tmp_path):
    policy = RedactionPolicy(values=["abcdefgh", "efghijkl"])
    path = tmp_path / "settings.py"
    path.write_bytes(b"0123456" + b"abcdefghijkl" + b"tail")
    for chunk_size in (3, 7, 10, 64):
        path.write_bytes(b"0123456" + b"abcdefghijkl" + b"tail")
        redact_file(path, policy, chunk_size=chunk_size)
        assert path.read_bytes() == b"0123456" + MARKER.encode() + b"tail", chunk_size


def test_a_secret_inside_a_longer_value_is_hidden_there():
    policy = RedactionPolicy(values=["hunter22"])
    assert policy.redact_text("prefix-hunter22-suffix") == f"prefix-{MARKER}-suffix"


def test_keys_of_a_mapping_under_a_secret_key_are_secrets_too():
    """{'api_keys': {'sk-live-XXXX': 'billing'}}: the key is the secret."""
    policy = RedactionPolicy()
    hyper = {"api_keys": {"sk-live-4242abcd": "billing"}, "lr": 0.1}
    policy.learn(hyper)
    stored = policy.redact_mapping(hyper)
    assert "sk-live-4242abcd" not in json.dumps(stored)
    assert stored["lr"] == 0.1
    assert policy.redact_text("using sk-live-4242abcd") == f"using {MARKER}"


def test_two_secret_keys_of_one_mapping_stay_two_entries():
    stored = RedactionPolicy().redact_mapping({"tokens": {"first-token-1": "a", "second-token-2": "b"}})
    assert len(stored["tokens"]) == 2 and "first-token-1" not in json.dumps(stored)


@pytest.mark.parametrize("url", ["postgres://alice:Pa55w0rd-db@db.example:5432/x",
                                 "https://bot:ghp_tok3n42@github.com/o/r.git",
                                 "redis://:r3dis-Secret@cache:6379/0"])
def test_the_password_of_a_url_value_is_a_secret_wherever_it_appears(url):
    """A URL under an ordinary key (db_url) carries its credentials in clear."""
    password = url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    policy = RedactionPolicy()
    policy.learn({"db_url": url}, argv=["train.py", f"--remote={url}"])
    assert password not in json.dumps(policy.redact_mapping({"db_url": url}))
    assert password not in " ".join(policy.redact_argv(["train.py", f"--remote={url}"]))
    assert policy.redact_text(f"connect failed: {password}") == f"connect failed: {MARKER}"


def test_a_url_password_in_a_log_line_is_hidden_even_when_never_seen_before():
    line = RedactionPolicy().redact_text("retrying mysql://root:n3v3r-s33n@10.0.0.5/db")
    assert "n3v3r-s33n" not in line and "mysql://root:" in line and "@10.0.0.5/db" in line


def test_a_unicode_secret_is_hidden_in_both_normal_forms():
    secret = "pässwörd-42"
    policy = RedactionPolicy(values=[secret])
    for form in ("NFC", "NFD"):
        assert policy.redact_text(unicodedata.normalize(form, secret)) == MARKER, form


def _run(tmp_path: Path, monkeypatch, hyper: dict) -> ExperimentManager:
    project = tmp_path / "project"
    project.mkdir()
    (project / "rla_config.yaml").write_text("LOG_USED: [stdout, log, csv, json, tensorboard]\n"
                                             "DL_FRAMEWORK: none\nBACKUP_CONFIG: {backup_code_dir: []}\n")
    monkeypatch.setattr(sys, "argv", ["train.py"])
    mgr = ExperimentManager()
    mgr.set_hyper_param(**hyper)
    mgr.configure("attack", rla_config=str(project / "rla_config.yaml"), data_root=str(tmp_path / "data"))
    mgr.log_files_gen()
    return mgr


def _files_holding(root: Path, secret: str) -> list:
    needle = secret.encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())


def test_a_secret_in_a_logged_column_name_reaches_no_file(tmp_path, monkeypatch):
    """record_tabular(f'loss/{token}', ...): the values were redacted, the column names were not
    (progress.csv header, progress.json keys, the log.txt table, TensorBoard tags)."""
    from RLA.easy_log import logger

    secret = "ColumnTok-9876"
    mgr = _run(tmp_path, monkeypatch, {"hf_token": secret, "lr": 0.1})
    try:
        for step in range(2):
            logger.record_tabular(f"loss/{secret}", float(step))
            logger.record_tabular("reward", float(step))
            logger.dump_tabular()
    finally:
        mgr.finish()
        logger.reset()
    assert _files_holding(tmp_path / "data", secret) == []
    progress = (Path(mgr.log_dir) / "progress.csv").read_text()
    assert f"loss/{MARKER}" in progress and "reward" in progress


def test_a_url_password_in_a_hyper_parameter_reaches_no_file(tmp_path, monkeypatch):
    from RLA.easy_log import logger

    secret = "UrlPassw0rd-5555"
    mgr = _run(tmp_path, monkeypatch, {"db_url": f"postgres://u:{secret}@h/db", "lr": 0.1})
    try:
        mgr.print_args()
        logger.info(f"connecting to postgres://u:{secret}@h/db")
        mgr.finish(status="crashed", error=f"OperationalError: bad password {secret!r}")
    finally:
        logger.reset()
    assert _files_holding(tmp_path / "data", secret) == []
    assert "postgres://u:" in (Path(mgr.log_dir) / "run.json").read_text()
