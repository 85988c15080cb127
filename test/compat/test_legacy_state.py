"""Legacy state: pickles unread by default, an opt-in restricted unpickler, text fallbacks,
and both checkpoint naming schemes."""
from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from RLA.errors import RLAError
from RLA.layout import RunLayout
from RLA.loader import ExperimentLoader
from RLA.loader.legacy_pickle import LegacyStateError, read_legacy_pickle
from RLA.loader.legacy_state import convert_legacy_state

from _legacy_tree import BARE_NAME, LEGACY_NAME, TASK, V1_NAME, write_run


def _loader(root: Path, record: str, **kw) -> ExperimentLoader:
    return ExperimentLoader(**kw).config(TASK, record, root)


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


@pytest.mark.timeout(60)
def test_a_code_running_pickle_is_refused_before_the_call(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"hyper_param": _Evil()}))
    with pytest.raises(LegacyStateError, match="posix.system|os.system|nt.system"):
        read_legacy_pickle(path)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_restricted_unpickler_rebuilds_the_originals_tester(tmp_path: Path, protocol: int):
    paths = write_run(tmp_path, V1_NAME, {"learning_rate": 0.001, "seed": 0}, [0, 7], pickle_protocol=protocol)
    tester = read_legacy_pickle(paths["archive_tester"])
    assert tester.legacy_class == "Tester"
    assert tester.attribute("hyper_param") == {"learning_rate": 0.001, "seed": 0}
    assert tester.attribute("ipaddr") == "10.0.0.1"  # name-mangled _Tester__ipaddr
    assert list(tester.attribute("custom_data")["best"]) == [1.0, 2.0]


@pytest.mark.timeout(60)
def test_pickle_is_not_read_by_default_and_text_files_are_used(legacy_runs, monkeypatch):
    root = legacy_runs["v1"]["log"].parents[5]
    monkeypatch.setattr("RLA.loader.legacy_state.read_legacy_pickle", lambda *_: pytest.fail("a pickle was read"))
    args = _loader(root, "2022/03/01/21-13-03-230208").import_hyper_parameters()
    assert args.learning_rate == 0.001 and args.seed == 0  # from backup.txt
    args = _loader(root, "2022/03/01/21-13-05-000001").import_hyper_parameters()
    assert args.env_id == "Test-v1"  # from code/parameter.json


@pytest.mark.timeout(60)
def test_without_text_files_the_error_names_the_command(tmp_path: Path):
    write_run(tmp_path, V1_NAME, {"lr": 1}, [0, 1], backup=False)
    with pytest.raises(RLAError) as info:
        _loader(tmp_path, "2022/03/01/21-13-03-230208").import_hyper_parameters()
    assert "rla migrate --convert-legacy-state" in str(info.value) and "trust_pickles=True" in str(info.value)


@pytest.mark.timeout(60)
def test_trust_pickles_converts_once_without_the_password(tmp_path: Path):
    paths = write_run(tmp_path, V1_NAME, {"lr": 0.5, "net": {"hidden": [64, 64]}}, [0, 9], backup=False,
                      password="hunter2-secret")
    args = _loader(tmp_path, "2022/03/01/21-13-03-230208", trust_pickles=True).import_hyper_parameters()
    assert args.lr == 0.5 and args.net == {"hidden": [64, 64]}
    state_file = paths["archive_tester"].with_suffix(".json")
    text = state_file.read_text()
    assert "hunter2-secret" not in text  # RLA's fix: the original copied the password into every pickle
    state = json.loads(text)
    assert state["time_step"] == 9 and state["custom_data"]["best"] == [1.0, 2.0]
    assert state["config"]["DL_FRAMEWORK"] == "torch"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name, stem", [(V1_NAME, "checkpoint-"), (BARE_NAME, "checkpoint_"),
                                        (LEGACY_NAME, "checkpoint_")])
def test_both_checkpoint_names_load(tmp_path: Path, name: str, stem: str):
    write_run(tmp_path, name, {"seed": 0}, [0, 5, 10], checkpoints=[(stem, 5), (stem, 10), ("best_", 7)])
    record = "2022/03/01/" + name[:15]
    step, models, _ = _loader(tmp_path, record).load_from_record_date()
    assert step == 10 and float(models["policy"]["w"][0]) == 10.0
    step, models, _ = _loader(tmp_path, record).load_from_record_date(ckp_index=5)
    assert step == 5 and float(models["policy"]["w"][0]) == 5.0


@pytest.mark.timeout(60)
def test_polixir_named_series_loads_by_name(tmp_path: Path):
    write_run(tmp_path, V1_NAME, {"seed": 0}, [0, 10], checkpoints=[("checkpoint_", 10), ("best_", 3), ("best_", 8)])
    step, models, _ = _loader(tmp_path, "2022/03/01/21-13-03-230208").load_from_record_date(ckp_index="best")
    assert step == 8 and float(models["policy"]["w"][0]) == 8.0


@pytest.mark.timeout(60)
def test_convert_keeps_an_existing_json_state(tmp_path: Path):
    write_run(tmp_path, V1_NAME, {"lr": 1}, [0, 1])
    layout = RunLayout(tmp_path, TASK, "2022/03/01", V1_NAME)
    assert convert_legacy_state(layout) == layout.archive_tester_file
    assert convert_legacy_state(layout) is None


@pytest.mark.timeout(60)
def test_a_truncated_pickle_is_a_legacy_state_error(tmp_path: Path):
    paths = write_run(tmp_path, V1_NAME, {"lr": 1}, [0, 1])
    paths["archive_tester"].write_bytes(paths["archive_tester"].read_bytes()[:40])
    with pytest.raises(LegacyStateError):
        read_legacy_pickle(paths["archive_tester"])


