"""Copy a run's source code into its ``code`` directory, honouring gitignore rules, secrets redacted."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator, List, Optional, Pattern, Sequence, Tuple

from RLA.errors import ConfigError
from RLA.fs import atomic_file
from RLA.redaction import MARKER, RedactionPolicy, spans

#: Never copied whatever the rules say: VCS internals and Python caches.
ALWAYS_SKIPPED_DIRS = {".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache", ".trash"}
#: The unanchored ``.gitignore`` lines older versions of ``rla init`` wrote.
LEGACY_RLA_RULES = (
    "**/archive_tester/**",
    "**/checkpoint/**",
    "**/code/**",
    "**/results/**",
    "**/log/**",
    "**/arc/**",
    "**/replay/**",
)


class IgnoreRules:
    """gitignore semantics for one or more ignore files.

    Each file's patterns are matched against paths relative to the file's own folder, so
    directory patterns (``build/``) and anchored patterns (``/data``) behave as in git.
    """

    def __init__(self, ignore_files: Sequence[Path]) -> None:
        import pathspec

        self._specs = []
        #: ``(path, rule)`` of each project path left out only by an unanchored rule an older
        #: ``rla init`` wrote (``**/log/**``...): a source folder named like a data type.
        self.rla_rule_hits: List[Tuple[Path, str]] = []
        for ignore_file in ignore_files:
            lines = Path(ignore_file).read_text(encoding="utf-8", errors="replace").splitlines()
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
            legacy = [line.strip() for line in lines if line.strip() in LEGACY_RLA_RULES]
            others = pathspec.GitIgnoreSpec.from_lines([line for line in lines if line.strip() not in legacy])
            self._specs.append((Path(ignore_file).resolve().parent, spec, legacy, others))

    def ignored(self, path: Path, is_dir: bool, root: Optional[Path] = None) -> bool:
        """Whether ``path`` (absolute) is excluded by any of the rule files.

        ``root``: a folder the user listed explicitly although the rules ignore it (e.g. a
        ``build/lib`` in lib mode); paths below it are matched relative to it.
        """
        for base, spec, legacy, others in self._specs:
            try:
                rel = path.resolve().relative_to(root or base).as_posix()
            except ValueError:
                continue  # rules of a folder apply only below it
            if is_dir:
                rel += "/"
            if spec.match_file(rel):
                if legacy and not others.match_file(rel):
                    import pathspec

                    rule = next(r for r in legacy if pathspec.GitIgnoreSpec.from_lines([r]).match_file(rel))
                    self.rla_rule_hits.append((path, rule))
                return True
        return False


def _copy_tree(
    src: Path,
    dst: Path,
    rules: IgnoreRules,
    skip: Iterable[Path],
    policy: RedactionPolicy,
    explicit_root: bool = False,
) -> List[Path]:
    copied: List[Path] = []
    # lib mode: the built library (usually git-ignored as a whole, e.g. build/) is copied
    # anyway; the rules still apply to the paths below it.
    root = src if explicit_root and rules.ignored(src, True) else None
    skip = [p.resolve() for p in skip]
    for dirpath, dirnames, filenames in os.walk(src):
        here = Path(dirpath)
        kept = []
        for name in sorted(dirnames):
            full = here / name
            if (
                name in ALWAYS_SKIPPED_DIRS
                or any(full.resolve() == s or s in full.resolve().parents for s in skip)
                or rules.ignored(full, True, root)
            ):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            full = here / name
            if rules.ignored(full, False, root) or full.is_symlink() and not full.exists():
                continue
            copied.append(copy_redacted(full, dst / full.relative_to(src), policy))
    return copied


def redact_file(path: Path, policy: RedactionPolicy, chunk_size: int = 1 << 20) -> bool:
    """Rewrite ``path`` with every known value redacted; ``True`` if it changed.

    Any size is streamed in chunks that overlap by the longest form, so no value is missed at
    a chunk border. The file is replaced atomically and keeps its permission bits; an
    unchanged file is not touched.
    """
    pattern = policy.bytes_pattern
    if pattern is None:
        return False
    with open(path, "rb") as src:
        if not any(True for _ in _redacted_chunks(src, pattern, policy.longest_form, chunk_size)):
            return False
        mode = os.fstat(src.fileno()).st_mode & 0o7777
        src.seek(0)
        with atomic_file(path, durable=False) as dst:
            os.fchmod(dst.fileno(), mode)
            for piece in _redacted_chunks(src, pattern, policy.longest_form, chunk_size, everything=True):
                dst.write(piece)
    return True


def _redacted_chunks(
    src: IO[bytes], pattern: Pattern[bytes], longest: int, chunk_size: int, everything: bool = False
) -> Iterator[bytes]:
    """The redacted content of ``src`` piece by piece (only the pieces that changed unless ``everything``)."""
    keep, buf, marker = max(longest - 1, 0), b"", MARKER.encode()
    while True:
        data = src.read(chunk_size)
        buf += data
        safe = len(buf) if not data else max(len(buf) - keep, 0)  # a match starting here is complete
        out, pos, hit = [], 0, False
        for start, stop in spans(pattern, buf, limit=safe):
            if stop > safe and data:  # an overlapping secret may go on in the next chunk
                safe = start
                break
            out += [buf[pos:start], marker]
            pos, hit = stop, True
        end = max(pos, safe)
        out.append(buf[pos:end])
        buf = buf[end:]
        if hit or everything:
            yield b"".join(out)
        if not data:
            return


def copy_redacted(src: Path, target: Path, policy: RedactionPolicy, chunk_size: int = 1 << 20) -> Path:
    """Copy ``src`` to ``target`` with every known value redacted on the way; returns ``target``.

    The secret never reaches the disk (no copy-then-redact window a kill could leave), and the
    copy is atomic: a full disk is a :class:`RLA.errors.DiskFullError` naming ``target`` and
    leaves no partial file. Permission bits and times are kept.
    """
    pattern = policy.bytes_pattern
    with open(src, "rb") as source, atomic_file(target, durable=False) as dst:
        if pattern is None:
            shutil.copyfileobj(source, dst, chunk_size)
        else:
            for piece in _redacted_chunks(source, pattern, policy.longest_form, chunk_size, everything=True):
                dst.write(piece)
    shutil.copystat(src, target)
    return target


def backup_code(
    code_dir: Path,
    project_root: Path,
    mode: str,
    backup_dirs: Sequence[str],
    lib_dir: str,
    ignore_files: Sequence[Path],
    run_files: Sequence[Path],
    skip: Sequence[Path] = (),
    secrets: Sequence[str] = (),
    redaction: Optional[RedactionPolicy] = None,
    warn: Optional[Callable[[str], None]] = None,
) -> List[Path]:
    """Copy the code of a run.

    Args:
        code_dir: destination (the run's ``code`` directory, already created).
        project_root: folder that relative entries refer to (the config's folder).
        mode: ``source`` (copy ``backup_dirs``) or ``lib`` (copy ``lib_dir``).
        backup_dirs: folders or single files to copy in ``source`` mode.
        lib_dir: built library folder for ``lib`` mode.
        ignore_files: gitignore-style files whose rules exclude paths.
        run_files: entry scripts copied flat into ``code_dir``.
        skip: folders never copied (e.g. the data root when it lies inside the project).
        secrets: more values replaced by ``<redacted>`` (every form) in every copied file.
        redaction: the run's redaction policy (default: one knowing only ``secrets``).
        warn: told about each project path left out only by an unanchored rule of an older
            ``rla init`` (e.g. ``src/log/`` by ``**/log/**``): such code is missing from git too.

    Returns:
        The copied files.

    Raises:
        ConfigError: a listed folder/file or the lib dir does not exist.
        DiskFullError: the disk filled up; the file being copied is not left half written.
    """
    rules = IgnoreRules([p for p in ignore_files if Path(p).is_file()])
    policy = redaction if redaction is not None else RedactionPolicy()
    policy.add_values(secrets)
    copied: List[Path] = []
    for src, name in _sources(project_root, mode, backup_dirs, lib_dir):
        target = code_dir / (name if name is not None else "")
        if src.is_dir():
            dst = target.resolve() if name is not None else code_dir
            copied += _copy_tree(src, dst, rules, skip, policy, explicit_root=mode == "lib")
        elif not rules.ignored(src, False):
            copied.append(copy_redacted(src, target, policy))
    copied += _copy_run_files(run_files, code_dir, policy)
    if warn is not None:
        for path, rule in rules.rla_rule_hits:
            warn(
                f"{path} is left out of git and of the code snapshot by the .gitignore rule {rule!r} "
                "an older `rla init` wrote; run `rla init` to replace it by one anchored entry for "
                "the data root"
            )
    return copied


def _sources(
    project_root: Path, mode: str, backup_dirs: Sequence[str], lib_dir: str
) -> List[Tuple[Path, Optional[str]]]:
    """``(absolute source, name under the code folder or None for its root)`` of each entry.

    Raises:
        ConfigError: an unknown mode, or an entry that does not exist.
    """
    if mode == "source":
        entries: List[Tuple[Path, Optional[str]]] = [(project_root / entry, entry) for entry in backup_dirs]
    elif mode == "lib":
        entries = [(project_root / lib_dir, None)]
    else:  # validated by the config already; kept for direct callers
        raise ConfigError(
            "Unknown code backup mode",
            expected="'source' or 'lib'",
            found=repr(mode),
            fix="set PROJECT_TYPE.backup_code_by",
        )
    resolved = [(src.resolve(), name) for src, name in entries]
    for src, _ in resolved:
        if not src.exists():
            key = "BACKUP_CONFIG.backup_code_dir" if mode == "source" else "BACKUP_CONFIG.lib_dir"
            raise ConfigError(
                f"The code backup source {src} does not exist",
                expected=f"an existing path ({key})",
                found="no such file or directory",
                fix=f"fix {key} (relative to {project_root}) or create it",
            )
    return resolved


def _copy_run_files(run_files: Sequence[Path], code_dir: Path, policy: RedactionPolicy) -> List[Path]:
    """Copy the entry scripts flat into ``code_dir``.

    Raises:
        ConfigError: a script does not exist.
    """
    copied = []
    for run_file in run_files:
        run_file = Path(run_file)
        if not run_file.is_file():
            raise ConfigError(
                f"run_file {run_file} does not exist",
                expected="the path of an existing script",
                found="no such file",
                fix="pass run_file=__file__ or a correct path",
            )
        copied.append(copy_redacted(run_file, code_dir / run_file.name, policy))
    return copied


def default_ignore_files(
    project_root: Path, configured: Optional[Sequence[str]], explicit: Optional[str]
) -> List[Path]:
    """The ignore files in force: ``ignore_file_path``, else the config's list, else ``.gitignore``."""
    if explicit:
        return [Path(explicit).expanduser().resolve()]
    if configured is not None:
        return [(project_root / p).resolve() for p in configured]
    default = project_root / ".gitignore"
    return [default] if default.is_file() else []
