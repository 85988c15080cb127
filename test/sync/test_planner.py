"""The pure planner: which files are skipped, appended, uploaded, resumed, deleted, pulled."""
from __future__ import annotations

from RLA.sync.manifest import FileRecord, Pending
from RLA.sync.planner import Action, LocalFile, RemoteFile, Step, is_append_only, plan_pull, plan_push


def _local(size: int, mtime_ns: int = 1) -> LocalFile:
    return LocalFile("/x", size, mtime_ns)


def test_unchanged_files_are_skipped() -> None:
    """Same size and mtime as recorded: no step."""
    assert plan_push({"log/a.bin": _local(5)}, {"log/a.bin": FileRecord(5, 1, "h")}) == []


def test_grown_append_only_file_is_appended_from_its_old_size() -> None:
    """progress.csv that grew: APPEND at the recorded size."""
    steps = plan_push({"log/progress.csv": _local(9, 2)}, {"log/progress.csv": FileRecord(5, 1, "h")})
    assert steps == [Step(Action.APPEND, "log/progress.csv", 5)]


def test_other_changed_files_are_uploaded_whole() -> None:
    """A changed non-log file, or a shrunk log, is uploaded whole."""
    sent = {"code/a.py": FileRecord(5, 1, "h"), "log/log.txt": FileRecord(9, 1, "h")}
    steps = plan_push({"code/a.py": _local(9, 2), "log/log.txt": _local(3, 2)}, sent)
    assert {s.action for s in steps} == {Action.UPLOAD}


def test_interrupted_upload_of_the_same_file_is_resumed() -> None:
    """A pending upload whose local file is unchanged resumes; a changed one restarts."""
    pending = Pending("results/big.bin", 100, 7)
    assert plan_push({"results/big.bin": _local(100, 7)}, {}, pending)[0].action is Action.RESUME
    assert plan_push({"results/big.bin": _local(120, 8)}, {}, pending)[0].action is Action.UPLOAD


def test_files_gone_locally_are_deleted_and_run_json_goes_last() -> None:
    """Deleted files get DELETE steps; run.json is sent after the data."""
    steps = plan_push({"log/run.json": _local(1), "log/z.txt": _local(1)}, {"results/old.png": FileRecord(1, 1, "h")})
    assert [s.key for s in steps] == ["log/z.txt", "log/run.json", "results/old.png"]
    assert steps[-1].action is Action.DELETE


def test_append_only_names() -> None:
    """Logger outputs and TensorBoard events are append-only; code and images are not."""
    assert all(is_append_only(k) for k in ("log/progress.csv", "log/log.txt", "log/warn.txt",
                                          "log/tb/events.out.tfevents.17.host", "log/x.jsonl"))
    assert not any(is_append_only(k) for k in ("log/run.json", "code/a.py", "results/a.png"))


def test_pull_plan_fetches_tails_and_skips_equal_files() -> None:
    """Pull: equal size+second → skip; shorter log → FETCH; anything else → DOWNLOAD."""
    remote = {"log/log.txt": RemoteFile(10, 5.0), "log/run.json": RemoteFile(3, 5.0), "code/a.py": RemoteFile(4, 5.0)}
    local = {"log/log.txt": _local(6), "code/a.py": LocalFile("/x", 4, 5_000_000_000)}
    assert plan_pull(remote, local) == [Step(Action.FETCH, "log/log.txt", 6), Step(Action.DOWNLOAD, "log/run.json")]
