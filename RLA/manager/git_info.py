"""Git facts of the code a run executes (commit, branch, dirty flag, uncommitted diff)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Optional, Tuple


def git_facts(path: os.PathLike) -> Tuple[Optional[Dict[str, Any]], str, str]:
    """Inspect the repository containing ``path``.

    Returns:
        ``(facts, diff, untracked)``: ``facts`` is ``None`` outside a repository (or when
        git is unavailable); ``diff`` is ``git diff HEAD`` (staged + unstaged changes);
        ``untracked`` lists untracked files, one per line.
    """
    try:
        import git
    except ImportError:  # GitPython missing or no git executable
        return None, "", ""
    try:
        repo = git.Repo(Path(path), search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError, OSError):
        return None, "", ""
    try:
        try:
            commit = repo.head.commit.hexsha
        except ValueError:  # repository without any commit
            commit = None
        try:
            branch = repo.active_branch.name
        except TypeError:  # detached HEAD
            branch = None
        dirty = repo.is_dirty(untracked_files=False)
        diff = repo.git.diff("HEAD") if commit and dirty else ""
        untracked = "\n".join(repo.untracked_files)
        facts = {
            "commit": commit,
            "branch": branch,
            "dirty": dirty,
            "repo": repo.working_tree_dir,
            "untracked_files": len(repo.untracked_files),
        }
        return facts, diff, untracked
    except (git.GitCommandError, OSError) as exc:
        return {"error": str(exc)}, "", ""
    finally:
        repo.close()
