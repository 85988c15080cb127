"""Every database command of ``rla`` in-process, with --dry-run/--yes, errors and exit codes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from RLA.layout import DATA_TYPES, find_runs, iter_run_dirs
from rla_scripts.cli import main

REPO = Path(__file__).resolve().parents[2]


def tree(root: Path) -> set:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if ".rla_index" not in p.name}


@pytest.mark.timeout(60)
def test_list_prints_a_table_with_varying_params(db, capsys):
    assert main(["list", "--data-root", str(db), "--metrics", "return"]) == 0
    out = capsys.readouterr().out
    assert "demo/2026/11/01/10-00-00-000000" in out and "demo/2022/03/01/21-13-03-230208" in out
    assert "last(return)" in out and "5 runs" in out


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_list_formats(db, capsys, fmt):
    assert main(["list", "--data-root", str(db), "--format", fmt, "--where", "algo == 'sac'"]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        rows = json.loads(out)
        assert len(rows) == 2 and {r["seed"] for r in rows} == {0, 1}
    else:
        lines = out.strip().splitlines()
        assert len(lines) == 3 and "last(return)" in lines[0]


@pytest.mark.timeout(60)
def test_data_root_comes_from_env_then_nearest_config(db, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RLA_DATA_ROOT", str(db))
    assert main(["list"]) == 0
    monkeypatch.delenv("RLA_DATA_ROOT")
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "rla_config.yaml").write_text(f"DATA_ROOT: {os.path.relpath(db, project)}\n")
    monkeypatch.chdir(project / "sub")
    assert main(["list", "--format", "csv"]) == 0
    assert "demo/2026/11/01" in capsys.readouterr().out


@pytest.mark.timeout(60)
def test_no_data_root_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("RLA_DATA_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rla list: error: No data root given") and "Traceback" not in err


@pytest.mark.timeout(60)
def test_query_syntax_error_exits_2_with_a_caret(db, capsys):
    assert main(["list", "--data-root", str(db), "--where", "algo == 'sac' and (seed"]) == 2
    err = capsys.readouterr().err
    assert "Syntax error in query" in err and "^" in err and "Traceback" not in err


@pytest.mark.timeout(60)
def test_empty_selection_and_unknown_task_exit_non_zero(db, capsys):
    assert main(["list", "--data-root", str(db), "--where", "seed > 100"]) == 1
    assert "No run matches --where 'seed > 100'" in capsys.readouterr().err
    assert main(["list", "--data-root", str(db), "--task", "dem"]) == 1
    assert "did you mean 'demo'" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_view_shows_params_status_git_metrics_and_files(db, capsys):
    assert main(["view", "--data-root", str(db), "demo/2026/11/01/10-00-01"]) == 0
    out = capsys.readouterr().out
    for fragment in ("status   finished", "* algo = 'sac'", "git      0000", "return = 2", "checkpoint", "replay",
                     "archive_tester"):
        assert fragment in out
    assert main(["view", "--data-root", str(db), "2022/03/01/21-13", "--task", "demo", "--format", "json"]) == 0
    view = json.loads(capsys.readouterr().out)
    assert view["param_source"] == "parameter.json" and view["hyper_params"]["lr"] == 0.01


@pytest.mark.timeout(60)
def test_view_of_an_ambiguous_prefix_is_an_error(db, capsys):
    assert main(["view", "--data-root", str(db), "demo/2026/11/01"]) == 1
    assert "4 runs match" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_archive_dry_run_changes_nothing(db, capsys):
    before = tree(db)
    assert main(["archive", "--data-root", str(db), "--where", "algo == 'sac'", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "2 runs to archive" in out and "6 data types" in out and "dry run" in out
    assert tree(db) == before


@pytest.mark.timeout(60)
def test_archive_without_yes_and_without_a_terminal_refuses(db, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", open(os.devnull))
    before = tree(db)
    assert main(["archive", "--data-root", str(db), "--where", "algo == 'sac'"]) == 1
    assert "Confirmation needed" in capsys.readouterr().err
    assert tree(db) == before


@pytest.mark.timeout(60)
def test_archive_moves_every_data_type_and_restore_brings_it_back(db, capsys):
    before = tree(db)
    assert main(["archive", "--data-root", str(db), "--where", "algo == 'sac'", "--yes"]) == 0
    assert "archive: 2 runs done" in capsys.readouterr().out
    archived = list(iter_run_dirs(db, "log", archived=True))
    assert len(archived) == 2
    for run in archived:
        assert set(run.existing_paths()) == set(DATA_TYPES)
        assert not run.moved(archived=False).existing_paths()
    assert main(["list", "--data-root", str(db), "--format", "csv"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1 + 3
    assert main(["archive", "--data-root", str(db), "--restore", "--task", "demo", "--yes"]) == 0
    assert tree(db) >= before
    assert not list(iter_run_dirs(db, "log", archived=True))


@pytest.mark.timeout(60)
def test_archive_copy_keeps_the_originals(db):
    assert main(["archive", "--data-root", str(db), "--regex", "*algo=td3*", "--copy", "--yes"]) == 0
    assert len(list(iter_run_dirs(db, "log", archived=True))) == 2
    assert len(list(iter_run_dirs(db, "log"))) == 5


@pytest.mark.timeout(60)
def test_delete_dry_run_then_yes_moves_to_trash(db, capsys):
    before = tree(db)
    assert main(["delete", "--data-root", str(db), "demo/2026/11/01/10-00-02", "--dry-run"]) == 0
    assert "1 run to delete" in capsys.readouterr().out
    assert tree(db) == before
    assert main(["delete", "--data-root", str(db), "demo/2026/11/01/10-00-02", "--yes"]) == 0
    assert "delete: 1 run done" in capsys.readouterr().out
    assert not find_runs(db, "demo/2026/11/01/10-00-02")
    trashed = [p for p in (db / ".trash").rglob("*") if p.name.startswith("10-00-02-000000")]
    assert {p.relative_to(db / ".trash").parts[1] for p in trashed} == set(DATA_TYPES)


@pytest.mark.timeout(60)
def test_delete_purge_removes_for_good(db):
    assert main(["delete", "--data-root", str(db), "--where", "algo == 'ppo'", "--purge", "--yes"]) == 0
    assert not (db / ".trash").exists()
    assert len(list(iter_run_dirs(db, "log"))) == 4


@pytest.mark.timeout(60)
def test_delete_small_time_step_runs(db, capsys):
    assert main(["delete", "--data-root", str(db), "--max-time-step", "0", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "1 run to delete" in out and "2022/03/01/21-13-03" in out


@pytest.mark.timeout(60)
def test_delete_without_a_selector_is_refused(db, capsys):
    assert main(["delete", "--data-root", str(db), "--yes"]) == 1
    assert "No runs named" in capsys.readouterr().err
    assert len(list(iter_run_dirs(db, "log"))) == 5


@pytest.mark.timeout(60)
def test_migrate_copies_to_another_task_and_rewrites_run_json(db, tmp_path, capsys):
    assert main(["migrate", "--data-root", str(db), "--where", "algo == 'sac'", "--to-task", "moved",
                 "--dry-run"]) == 0
    assert not list(iter_run_dirs(db, "log", task="moved"))
    assert main(["migrate", "--data-root", str(db), "--where", "algo == 'sac'", "--to-task", "moved", "--yes"]) == 0
    copies = list(iter_run_dirs(db, "log", task="moved"))
    assert len(copies) == 2 and len(list(iter_run_dirs(db, "log", task="demo"))) == 5
    info = json.loads((copies[0].log_dir / "run.json").read_text())
    assert info["task"] == "moved" and info["index"].startswith("moved/")
    other = tmp_path / "other_root"
    other.mkdir()
    assert main(["migrate", "--data-root", str(db), "--task", "moved", "--to-data-root", str(other), "--move",
                 "--yes"]) == 0
    assert len(list(iter_run_dirs(other, "log", task="moved"))) == 2
    assert not list(iter_run_dirs(db, "log", task="moved"))


@pytest.mark.timeout(60)
def test_migrate_conflict_is_skipped_per_run(db, capsys):
    args = ["migrate", "--data-root", str(db), "--task", "demo", "--where", "algo == 'td3'", "--to-task", "t2",
            "--yes"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "already exists" in captured.out and "0 runs to copy, 2 skipped" in captured.out


@pytest.mark.timeout(60)
def test_index_rebuild(db, capsys):
    (db / ".rla_index.sqlite").write_bytes(b"garbage")
    assert main(["index", "rebuild", "--data-root", str(db), "--dry-run"]) == 0
    assert "would rebuild" in capsys.readouterr().out
    assert main(["index", "rebuild", "--data-root", str(db)]) == 0
    assert "indexed 5 runs" in capsys.readouterr().out


@pytest.mark.timeout(60)
def test_init_writes_config_and_gitignore_once(tmp_path, capsys):
    (tmp_path / ".gitignore").write_text("*.pyc\n**/log/**")
    assert main(["init", str(tmp_path), "--dry-run"]) == 0
    assert not (tmp_path / "rla_config.yaml").exists()
    assert main(["init", str(tmp_path)]) == 0
    assert main(["init", str(tmp_path)]) == 0
    from RLA.config import default_config_text, installed_framework, load_config
    assert (tmp_path / "rla_config.yaml").read_text() == default_config_text(installed_framework())
    load_config(tmp_path / "rla_config.yaml")
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines == ["*.pyc", "**/log/**", "# RLA database (rla init)", "/data/"]


@pytest.mark.timeout(60)
def test_plot_command_writes_figure_and_csv(db, capsys, tmp_path, monkeypatch):
    out_dir = tmp_path / "cwd"
    out_dir.mkdir()
    monkeypatch.chdir(out_dir)  # --out is relative to the current folder, not the data root
    assert main(["plot", "--data-root", str(db), "--task", "demo", "--metrics", "return", "--split-keys", "algo",
                 "--resample", "0", "--smooth", "0", "--out", "p.png", "--vary-len"]) == 0
    assert not (db / "results" / "easy_plot").exists()
    assert (out_dir / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out_dir / "p.csv").exists() and (out_dir / "p-final.csv").exists()
    assert main(["plot", "--data-root", str(db), "--metrics", "nope", "--out", "q.png"]) == 2
    assert "No selected run logged 'nope'" in capsys.readouterr().err


@pytest.mark.timeout(120)
def test_real_subprocess_cli(db):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "rla_scripts.cli", "list", "--data-root", str(db), "--format",
                           "csv"], capture_output=True, text=True, env=env, timeout=100)
    assert done.returncode == 0 and len(done.stdout.strip().splitlines()) == 1 + 5
    bad = subprocess.run([sys.executable, "-m", "rla_scripts.cli", "list", "--data-root", str(db), "--where",
                          "lr >"], capture_output=True, text=True, env=env, timeout=100)
    assert bad.returncode == 2 and "Syntax error" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.timeout(60)
def test_original_scripts_are_thin_wrappers(db, capsys):
    from rla_scripts import archive_expt, delete_expt, view_expt
    assert view_expt.main(["--data_root", str(db), "--task_table_name", "demo", "--regex", "*algo=sac*seed=1*"]) == 0
    assert "hyper-parameters" in capsys.readouterr().out
    assert archive_expt.main(["--data_root", str(db), "--task_table_name", "demo", "--regex", "2026/*", "--yes"]) == 0
    assert len(list(iter_run_dirs(db, "log", archived=True))) == 4 and len(list(iter_run_dirs(db, "log"))) == 5
    assert delete_expt.main(["--data_root", str(db), "--task_table_name", "demo", "--delete_type", "small_ts",
                             "--timestep_bound", "0", "--yes"]) == 0
    assert len(list(iter_run_dirs(db, "log"))) == 4


@pytest.mark.timeout(60)
def test_list_reports_a_corrupt_run_and_lists_the_rest(db, capsys):
    run = find_runs(db, "demo/2026/11/01/10-00-01")[0]
    (run.log_dir / "run.json").write_text("{broken")
    assert main(["list", "--data-root", str(db)]) == 0
    captured = capsys.readouterr()
    assert "warning: skipped demo/2026/11/01/10-00-01-000000: corrupt run.json" in captured.err
    assert "4 runs (1 unreadable, skipped)" in captured.out


@pytest.mark.timeout(60)
def test_delete_works_through_a_symlinked_data_type_folder(db, tmp_path):
    elsewhere = tmp_path / "big_disk_checkpoints"
    (db / "checkpoint").rename(elsewhere)
    (db / "checkpoint").symlink_to(elsewhere)
    assert main(["delete", "--data-root", str(db), "demo/2026/11/01/10-00-00", "--yes"]) == 0
    assert not any(elsewhere.rglob("10-00-00-000000*"))
    trashed = {p.relative_to(db / ".trash").parts[-6] for p in (db / ".trash").rglob("10-00-00-000000*")}
    assert trashed == set(DATA_TYPES)
    assert len(list(elsewhere.rglob("10-00-0*"))) == 3  # the other runs' checkpoints are untouched


@pytest.mark.timeout(60)
def test_plan_refuses_paths_outside_the_data_root(db, tmp_path):
    from RLA.errors import RLAError
    from RLA.layout import RunLayout
    from RLA.ops import plan_delete
    outside = tmp_path / "elsewhere"
    (outside / "log" / "t" / "2026" / "01" / "01" / "00-00-00-000000_x_&").mkdir(parents=True)
    run = RunLayout(db / ".." / "elsewhere", "t", "2026/01/01", "00-00-00-000000_x_&")
    plan = plan_delete(db, [run])
    with pytest.raises(RLAError, match="Refusing to delete"):
        plan.apply()
    assert (outside / "log" / "t").exists()
