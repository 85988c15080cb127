"""The output-format contract (every registered format) and the format registry."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Mapping

import pandas as pd
import pytest

from RLA.errors import BackendNotInstalledError, LoggerError
from RLA.logger import BUILTIN_FORMATS, KVWriter, Logger, TimeStepHolder, output_formats
from RLA.logger.formats import make_output_format, register_output_format
from RLA.logger.formats.human import render_table

pytestmark = pytest.mark.timeout(60)

ROWS: List[Dict[str, Any]] = [
    {"a": 1, "b": 0.5, "s": "x,y \"quoted\"", "time-step": 0},
    {"a": 2, "b": float("nan"), "s": "line\nbreak", "time-step": 10},
    {"a": 3, "b": 1e-9, "c": 7, "s": "", "time-step": 20},
]


def read_back(fmt: str, log_dir: Path, out: str) -> pd.DataFrame:
    """Read what ``fmt`` wrote as a DataFrame of the numeric keys a, b, c by time-step."""
    if fmt == "csv":
        return pd.read_csv(log_dir / "progress.csv")
    if fmt == "json":
        return pd.DataFrame([json.loads(line) for line in (log_dir / "progress.json").read_text().splitlines()])
    if fmt == "tensorboard":
        from RLA.easy_log.logger import read_tb
        frame = read_tb(str(log_dir / "tb"))
        return frame.reset_index().rename(columns={"step": "time-step"})
    text = out if fmt == "stdout" else (log_dir / "log.txt").read_text()
    rows, cells = [], {}
    for line in text.splitlines():
        if line.startswith("| "):
            key, value = (c.strip() for c in line.strip("|").split("|"))
            cells[key] = value
        elif line.startswith("-") and cells:  # closing dash line of a table
            rows.append({k: float(v) for k, v in cells.items()
                         if k in ("a", "b", "c", "time-step") and v})
            cells = {}
    return pd.DataFrame(rows)


@pytest.mark.parametrize("fmt", BUILTIN_FORMATS)
def test_every_format_round_trips_rows(fmt: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    writer = make_output_format(fmt, str(tmp_path))
    assert writer.name == fmt
    if fmt == "stdout":
        writer.interval = 0  # every dump as a table (by default at most one per STDOUT_INTERVAL)
    warnings: List[str] = []
    writer.warn_fn = warnings.append
    with writer:
        for row in ROWS:
            writer.write(dict(row), row["time-step"])
        writer.flush()
    writer.close()  # idempotent
    frame = read_back(fmt, tmp_path, capsys.readouterr().out)
    assert list(frame["time-step"]) == [0, 10, 20]
    assert list(frame["a"]) == [1, 2, 3]
    assert frame["b"][0] == pytest.approx(0.5) and pd.isna(frame["b"][1])
    assert frame["b"][2] == pytest.approx(1e-9)
    assert pd.isna(frame["c"][0]) and frame["c"][2] == 7
    assert warnings == ([] if fmt != "tensorboard" else [
        "tensorboard: key 's' has a non-numeric value (str); it is skipped for TensorBoard "
        "(text formats keep it)"])


@pytest.mark.parametrize("fmt", BUILTIN_FORMATS)
def test_every_format_refuses_writes_after_close(fmt: str, tmp_path: Path) -> None:
    writer = make_output_format(fmt, str(tmp_path))
    writer.close()
    with pytest.raises(LoggerError, match=f"The {fmt} output format is closed"):
        writer.write({"a": 1}, 0)


@pytest.mark.parametrize("fmt", [f for f in BUILTIN_FORMATS if f != "stdout"])
def test_file_formats_need_a_directory(fmt: str) -> None:
    with pytest.raises(LoggerError) as info:
        make_output_format(fmt, None)
    assert "no log directory was given" in str(info.value) and f"drop {fmt!r}" in str(info.value)


def test_csv_keeps_text_cells_intact(tmp_path: Path) -> None:
    with make_output_format("csv", str(tmp_path)) as writer:
        for row in ROWS:
            writer.write(dict(row), row["time-step"])
    frame = pd.read_csv(tmp_path / "progress.csv", keep_default_na=False)
    assert list(frame["s"]) == ['x,y "quoted"', "line\\nbreak", ""]


def test_csv_late_key_is_an_extra_column_empty_before(tmp_path: Path) -> None:
    with make_output_format("csv", str(tmp_path)) as writer:
        writer.write({"b": 1, "a": 2}, 0)
        writer.write({"b": 3, "a": 4, "late": 5, "another": 6}, 1)
        writer.write({"b": 7}, 2)
    lines = (tmp_path / "progress.csv").read_text().splitlines()
    assert lines == ["a,b,another,late", "2,1,,", "4,3,6,5", ",7,,"]


def test_human_table_layout() -> None:
    table = render_table({"b": 0.123456, "A": "text", "long": "x" * 200})
    lines = table.splitlines()
    assert lines[0] == lines[-1] == "-" * len(lines[1])
    assert [line.split("|")[1].strip() for line in lines[1:-1]] == ["A", "b", "long"]
    assert lines[2].startswith("| b    | 0.123    ") and lines[3].rstrip(" |").endswith("...")
    assert render_table({}) == ""


class Forwarder(KVWriter):
    """A user format that forwards rows elsewhere (here: into a list)."""

    sink: List[Dict[str, Any]] = []

    def __init__(self, log_dir: Any) -> None:
        super().__init__()
        self.log_dir = log_dir

    def write(self, kvs: Mapping[str, Any], step: int) -> None:
        Forwarder.sink.append({"step": step, **kvs})


@pytest.fixture
def forwarder_registered() -> Any:
    Forwarder.sink = []
    register_output_format("forwarder", Forwarder)
    yield
    output_formats.unregister("forwarder")


def test_custom_format_is_used_by_name(tmp_path: Path, forwarder_registered: None) -> None:
    lg = Logger(tmp_path, ["csv", "forwarder"], time_step=TimeStepHolder(3))
    lg.logkv("reward", 1.0)
    lg.logkv("secret_to_csv_only", 2.0, exclude="forwarder")
    lg.dumpkvs()
    lg.close()
    assert Forwarder.sink[0]["step"] == 3 and Forwarder.sink[0]["reward"] == 1.0
    assert "secret_to_csv_only" not in Forwarder.sink[0]
    assert "secret_to_csv_only" in pd.read_csv(tmp_path / "progress.csv").columns


def test_registering_a_taken_name_is_refused(forwarder_registered: None) -> None:
    with pytest.raises(LoggerError, match="named 'forwarder' is already registered"):
        register_output_format("forwarder", lambda log_dir: None)


def test_factory_must_return_a_kvwriter(tmp_path: Path) -> None:
    register_output_format("bogus", lambda log_dir: object())
    try:
        with pytest.raises(LoggerError, match="did not build a KVWriter"):
            make_output_format("bogus", str(tmp_path))
    finally:
        output_formats.unregister("bogus")


def test_unknown_format_name_gives_a_hint(tmp_path: Path) -> None:
    with pytest.raises(LoggerError) as info:
        Logger(tmp_path, ["csv", "tensorbord"], time_step=TimeStepHolder())
    message = str(info.value)
    assert "Unknown output format 'tensorbord'" in message
    assert "did you mean 'tensorboard'?" in message
    assert "stdout" in message and "json" in message


def test_missing_backend_is_reported(tmp_path: Path) -> None:
    register_output_format("needs_missing_pkg", "rla_no_such_package.mod:Writer")
    try:
        with pytest.raises(BackendNotInstalledError, match="needs a package that is not installed"):
            make_output_format("needs_missing_pkg", str(tmp_path))
    finally:
        output_formats.unregister("needs_missing_pkg")


def test_entry_point_group_registers_a_format(tmp_path: Path) -> None:
    """A package declaring ``rla.output_formats`` is usable by name in LOG_USED."""
    site = tmp_path / "site"
    (site / "rla_demo_plugin").mkdir(parents=True)
    (site / "rla_demo_plugin" / "__init__.py").write_text(textwrap.dedent("""
        from RLA.logger import KVWriter

        class Echo(KVWriter):
            def __init__(self, log_dir):
                super().__init__()
                self.path = log_dir + "/echo.txt"

            def write(self, kvs, step):
                with open(self.path, "a") as f:
                    f.write(f"{step}:{kvs['x']}\\n")
    """))
    dist = site / "rla_demo_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rla-demo-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[rla.output_formats]\necho = rla_demo_plugin:Echo\n")
    run_dir = tmp_path / "run"
    script = textwrap.dedent(f"""
        from RLA.easy_log import logger
        logger.configure({str(run_dir)!r}, ["csv", "echo"])
        logger.time_step_holder.set_time(9)
        logger.record_tabular("x", 4)
        logger.dump_tabular()
        logger.reset()
    """)
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(repo)]))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (run_dir / "echo.txt").read_text() == "9:4\n"
