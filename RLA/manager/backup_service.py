"""The code backup of a new run, as a run service: the code snapshot and its git facts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from RLA.fs import atomic_write_json, atomic_write_text
from RLA.manager.code_backup import backup_code, default_ignore_files
from RLA.manager.git_info import git_facts
from RLA.manager.run import Run
from RLA.manager.services import RunService

#: ``(facts, diff, untracked)`` of the repository holding a folder (see :func:`git_facts`).
GitFacts = Callable[[Path], Tuple[Optional[Dict[str, Any]], str, str]]


class CodeBackupService(RunService):
    """Copies the run's code into its ``code`` folder when the run starts, secrets redacted.

    Also writes the git facts of the project (``git_info.json``, the uncommitted diff and
    the untracked files) next to the copy and records them as ``run.json``'s ``git``.

    Args:
        project_root: the folder relative entries refer to.
        mode: ``source`` (copy ``backup_dirs``) or ``lib`` (copy ``lib_dir``).
        backup_dirs: folders or files copied in ``source`` mode.
        lib_dir: the built library copied in ``lib`` mode.
        ignore_files: gitignore-style files whose rules leave paths out.
        run_files: entry scripts copied flat into the code folder.
        warn: told about code left out by an older ``rla init``'s rules.
        git: the source of the git facts (default :func:`RLA.manager.git_info.git_facts`).
    """

    name = "code backup"

    def __init__(
        self,
        project_root: Path,
        mode: str,
        backup_dirs: Sequence[str],
        lib_dir: str,
        ignore_files: Sequence[Path],
        run_files: Sequence[Path],
        warn: Callable[[str], None],
        git: GitFacts = git_facts,
    ) -> None:
        self.project_root = project_root
        self.mode = mode
        self.backup_dirs = list(backup_dirs)
        self.lib_dir = lib_dir
        self.ignore_files = list(ignore_files)
        self.run_files = list(run_files)
        self.warn = warn
        self.git = git

    @classmethod
    def from_config(
        cls,
        config: Any,
        ignore_file_path: Optional[str],
        run_files: Sequence[Path],
        warn: Callable[[str], None],
    ) -> "CodeBackupService":
        """The backup an :class:`RLA.config.RLAConfig` asks for (``ignore_file_path`` overrides
        its ``ignore_code_paths``)."""
        root = config.project_root
        return cls(
            root,
            config.backup_code_by,
            config.backup.backup_code_dir,
            config.backup.lib_dir,
            default_ignore_files(root, config.backup.ignore_code_paths, ignore_file_path),
            run_files,
            warn,
        )

    def on_start(self, run: Run) -> None:
        """Copy the code, then record the git facts (the data root itself is never copied)."""
        code_dir = run.layout.code_dir
        backup_code(
            code_dir,
            self.project_root,
            self.mode,
            self.backup_dirs,
            self.lib_dir,
            self.ignore_files,
            self.run_files,
            skip=[run.layout.data_root],
            redaction=run.redaction,
            warn=self.warn,
        )
        facts, diff, untracked = self.git(self.project_root)
        if facts is not None:
            text = run.redaction.redact_text
            if diff:  # atomic: a full disk is a DiskFullError, never half a patch
                atomic_write_text(code_dir / "git_diff.patch", text(diff) + "\n", durable=False)
            if untracked:
                atomic_write_text(code_dir / "git_untracked.txt", text(untracked) + "\n", durable=False)
            atomic_write_json(
                code_dir / "git_info.json", run.redaction.redact_mapping(facts, by_key=False), durable=False
            )
        run.record.update(git=facts)


__all__ = ["CodeBackupService"]
