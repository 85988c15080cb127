"""``RunSyncer``: push and pull whole runs over one connection, with retries and backoff."""

from __future__ import annotations

import concurrent.futures
import datetime as _dt
import queue
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple, TypeVar

from RLA.config.remote import DEFAULT_SYNC_TYPES, RemoteSettings
from RLA.errors import AuthError, ConfigError, SyncError, TransportError
from RLA.layout import RunLayout
from RLA.sync.base import Transport
from RLA.sync.manifest import RunManifest, manifest_path, target_id
from RLA.sync.planner import LocalFile, Step, drop_oversize, plan_pull, plan_push
from RLA.sync.pull import find_remote_runs, pull_run
from RLA.sync.push import push_run
from RLA.sync.report import SyncReport
from RLA.sync.runfiles import key_path, local_files, part_name, remote_files

__all__ = ["DEFAULT_CHANNELS", "RunSyncer", "SyncReport"]  # SyncReport stays importable from here

T = TypeVar("T")
#: SFTP sessions opened on the one SSH connection of a push (round trips overlap).
DEFAULT_CHANNELS = 4
Progress = Callable[[Iterable[T], int], Iterable[T]]


class RunSyncer:
    """Push runs of a local database to the main node, or pull runs from it.

    Args:
        settings: the ``REMOTE_SETTING`` section.
        data_root: the local database root.
        project_root: folder that relative key / known_hosts paths refer to.
        data_types: data types to sync (default: ``settings.sync_types``).
        warn: receives non-fatal warnings.
        connect: opens a transport (default: :func:`RLA.sync.open_transport`); tests inject.
        sleep: waits between retries (tests inject).
        channels: parallel channels over the one connection (transports that support it).
        max_file_size: files larger than this many bytes are skipped with a warning
            (default: ``settings.max_file_size``; ``None``: no cap).

    Raises:
        ConfigError: ``remote_data_root`` is not set.
    """

    def __init__(
        self,
        settings: RemoteSettings,
        data_root: Any,
        *,
        project_root: Optional[Path] = None,
        data_types: Optional[Sequence[str]] = None,
        warn: Optional[Callable[[str], None]] = None,
        connect: Optional[Callable[[], Transport]] = None,
        sleep: Callable[[float], None] = time.sleep,
        channels: int = DEFAULT_CHANNELS,
        max_file_size: Optional[int] = None,
    ) -> None:
        if not settings.data_root_on_remote():
            raise ConfigError(
                "REMOTE_SETTING.remote_data_root is not set",
                expected="the data_root of the database on the main node",
                found="an empty value",
                fix="set REMOTE_SETTING.remote_data_root in rla_config.yaml",
            )
        self.settings = settings
        self.data_root = Path(data_root)
        self.remote_root = (settings.data_root_on_remote() or "").rstrip("/") or "/"
        self.data_types = list(data_types or settings.sync_types or DEFAULT_SYNC_TYPES)
        self.warn = warn
        self.max_file_size = max_file_size if max_file_size is not None else settings.max_file_size
        self._warned: Set[str] = set()
        self._warn_lock = threading.Lock()
        self.channels = max(1, channels)
        self._sleep = sleep
        if connect is None:
            from RLA.sync import open_transport

            def connect() -> Transport:
                return open_transport(settings, project_root=project_root, warn=self.warn)

        self._connect = connect
        self.target = target_id(
            settings.file_transfer_protocol,
            settings.address(),
            settings.port,
            settings.username,
            self.remote_root,
        )
        user = f"{settings.username}@" if settings.username else ""
        host = f"{user}{settings.ftp_server}" + (f":{settings.port}" if settings.port else "")
        if settings.file_transfer_protocol == "s3":
            host = f"{settings.bucket}/{(settings.prefix or '').strip('/')}".rstrip("/")
        self.where = (
            f"{settings.file_transfer_protocol}://{host}{self.remote_root}"
            if settings.file_transfer_protocol != "local"
            else self.remote_root
        )

    # ---------------------------------------------------------------------- push
    def push(
        self, runs: Iterable[RunLayout], dry_run: bool = False, progress: Optional[Progress] = None
    ) -> SyncReport:
        """Make the main node hold every selected run byte for byte.

        Unchanged runs cost a local ``stat`` per file and no connection at all.

        Raises:
            AuthError: credentials or host key rejected (not retried).
            SyncError: the transfer still failed after ``retries`` reconnections.
        """
        started = time.perf_counter()
        runs = list(runs)
        report = SyncReport("push", self.where, runs=len(runs), dry_run=dry_run)
        from RLA.sync.catalog_publish import for_push

        catalog = for_push(self, runs, dry_run)  # an object store's catalog: entries read before the upload
        todo = []
        for run in runs:
            manifest = RunManifest.load(manifest_path(self.data_root, self.target, run))
            _files, steps, skipped = self._plan_push(run, manifest)
            report.files_skipped += skipped
            if steps or manifest.pending is not None:
                todo.append(run)
                report.planned.extend((run.index, s.action.value, s.key) for s in steps)
        report.runs_changed = len(todo)
        if (todo or catalog is not None) and not dry_run:
            done: Set[str] = set()

            def work(transport: Transport) -> None:
                pending = [run for run in todo if run.relative not in done]
                if pending:
                    self._parallel(transport, pending, report, done, progress)
                if catalog is not None:  # after every run's files: no reader sees an entry before them
                    catalog.publish(transport)

            self._with_retries(work, report, "bytes_sent")
        report.seconds = time.perf_counter() - started
        return report

    def _parallel(
        self,
        transport: Transport,
        runs: List[RunLayout],
        report: SyncReport,
        done: Set[str],
        progress: Optional[Progress],
    ) -> None:
        """Push ``runs`` over up to :attr:`channels` channels of the one connection.

        Transfers are bound by round trips, not bandwidth, so several SFTP sessions on the
        same SSH connection overlap their waits (each run stays on one channel).
        """
        lanes: List[Transport] = [transport]
        try:
            lanes = transport.lanes(min(self.channels, len(runs)))
            free: "queue.Queue[Transport]" = queue.Queue()
            for lane in lanes:
                free.put(lane)
            lock = threading.Lock()

            def one(run: RunLayout) -> None:
                lane = free.get()
                try:
                    self._push_one(lane, run, report, lock)
                    with lock:
                        done.add(run.relative)
                finally:
                    free.put(lane)

            if len(lanes) == 1:
                for run in progress(runs, len(runs)) if progress else runs:
                    one(run)
                return
            with concurrent.futures.ThreadPoolExecutor(len(lanes), thread_name_prefix="rla-sync") as pool:
                futures = [pool.submit(one, run) for run in runs]
                finished = concurrent.futures.as_completed(futures)
                for future in progress(finished, len(futures)) if progress else finished:
                    if future.exception() is not None:
                        for other in futures:
                            other.cancel()
                        raise future.exception()  # type: ignore[misc]
        finally:
            for twin in lanes[1:]:
                transport.bytes_sent += twin.bytes_sent
                twin.close()

    def _push_one(
        self, transport: Transport, run: RunLayout, report: SyncReport, lock: threading.Lock
    ) -> None:
        manifest = RunManifest.load(manifest_path(self.data_root, self.target, run))
        files, steps, _skipped = self._plan_push(run, manifest)
        remote = run.moved(data_root=Path(self.remote_root))
        if manifest.pending is not None and manifest.pending.key not in {s.key for s in steps}:
            transport.remove(part_name(key_path(remote, manifest.pending.key)))  # orphaned temp file
            manifest.pending = None
            manifest.save()
            files, steps, _skipped = self._plan_push(run, manifest)
        result = push_run(transport, run, remote, files, steps, manifest)
        with lock:
            report.files_sent += len(result.sent)
            report.files_appended += len(result.appended)
            report.files_deleted += len(result.deleted)

    def _plan_push(
        self, run: RunLayout, manifest: RunManifest
    ) -> Tuple[Dict[str, LocalFile], List[Step], int]:
        """The run's files (links never followed), the steps without files over the cap, and
        how many files were left out (each warned about once)."""
        warn = self._refuser("push", run)
        refused: List[str] = []

        def refuse(key: str, why: str) -> None:
            refused.append(key)
            warn(key, why)

        files = local_files(run, self.data_types, refuse=refuse)
        steps, dropped = drop_oversize(
            plan_push(files, manifest.files, manifest.pending),
            {key: f.size for key, f in files.items()},
            self.max_file_size,
        )
        for key in dropped:
            refuse(
                key,
                f"it is {files[key].size} bytes, over the cap of {self.max_file_size} bytes (max_file_size)",
            )
        return files, steps, len(refused)

    def _refuser(self, direction: str, run: Optional[RunLayout] = None) -> Callable[[str, str], None]:
        """A ``refuse(key, why)`` that warns once per syncer about each file left out."""

        def refuse(key: str, why: str) -> None:
            where = f"{run.relative} {key}" if run is not None else key
            message = f"{direction}: skipped {where!r}: {why}"
            with self._warn_lock:
                if message in self._warned:
                    return
                self._warned.add(message)
            if self.warn is not None:
                self.warn(message)

        return refuse

    # ---------------------------------------------------------------------- pull
    def pull(
        self,
        task: Optional[str] = None,
        selectors: Sequence[str] = (),
        since: Any = None,
        until: Any = None,
        dry_run: bool = False,
        progress: Optional[Progress] = None,
    ) -> SyncReport:
        """Download the main node's runs matching the selectors into the local database.

        Args:
            task: only this task.
            selectors: globs/prefixes of ``YYYY/MM/DD/<name>`` or indexes (OR-ed).
            since, until: start-time bounds taken from the run names.

        Raises:
            AuthError, SyncError: as :meth:`push`.
        """
        from RLA.query.records import start_time_of
        from RLA.query.selection import match_selector, parse_when

        started = time.perf_counter()
        since_t, until_t = parse_when(since), parse_when(until, end=True)
        report = SyncReport("pull", self.where, dry_run=dry_run)

        def keep(run: RunLayout) -> bool:
            if selectors and not any(match_selector(run, s) for s in selectors):
                return False
            when: Optional[_dt.datetime] = start_time_of(run, {})
            if since_t and (when is None or when < since_t):
                return False
            return not (until_t and (when is None or when > until_t))

        done: Set[str] = set()

        def work(transport: Transport) -> None:
            runs = find_remote_runs(
                transport, self.remote_root, self.data_types, task, keep, refuse=self._refuser("pull")
            )
            report.runs = len(runs)
            pending = [run for run in runs if run.relative not in done]
            for run in progress(pending, len(pending)) if progress else pending:
                self._pull_one(transport, run, report, dry_run)
                done.add(run.relative)

        self._with_retries(work, report, "bytes_received")
        report.seconds = time.perf_counter() - started
        return report

    def _pull_one(self, transport: Transport, run: RunLayout, report: SyncReport, dry_run: bool) -> None:
        """Plan and (unless ``dry_run``) download one remote run; unsafe files are skipped."""
        local = run.moved(data_root=self.data_root)
        warn = self._refuser("pull", run)
        skipped: List[str] = []

        def refuse(key: str, why: str) -> None:
            skipped.append(key)
            warn(key, why)

        there = remote_files(transport, run, self.data_types, refuse=refuse)
        steps = plan_pull(there, local_files(local, self.data_types))
        if steps:
            report.runs_changed += 1
            report.planned.extend((run.index, s.action.value, s.key) for s in steps)
        if not dry_run:
            result = pull_run(transport, run, local, there, steps, self.max_file_size, refuse=refuse)
            report.files_received += len(result.received)
            report.files_fetched += len(result.fetched)
            if result.received or result.fetched:
                from RLA.query.catalog import mark_changed

                mark_changed(self.data_root, [local])  # a settled local run changed in place
        report.files_skipped += len(skipped)  # listed and refused, or given up while downloading

    # ------------------------------------------------------------------- retries
    def _with_retries(self, work: Callable[[Transport], None], report: SyncReport, counter: str) -> None:
        """Run ``work`` on one connection; reconnect with exponential backoff on failures."""
        attempt = 0
        while True:
            transport: Optional[Transport] = None
            try:
                transport = self._connect()
                work(transport)
                return
            except AuthError:
                raise
            except TransportError as exc:
                if attempt >= self.settings.retries:
                    raise SyncError(
                        f"Sync with {self.where} failed after {attempt + 1} attempt(s)",
                        expected="a reachable main node",
                        found=str(exc),
                        fix="check the network and REMOTE_SETTING, then sync again: "
                        "finished files are kept and the rest resumes",
                    ) from exc
                delay = self.settings.backoff * (2**attempt)
                attempt += 1
                report.retries += 1
                if self.warn is not None:
                    self.warn(
                        f"sync with {self.where} failed ({exc.problem}); retry {attempt}/"
                        f"{self.settings.retries} in {delay:.1f}s"
                    )
                self._sleep(delay)
            finally:
                if transport is not None:
                    setattr(
                        report,
                        counter,
                        getattr(report, counter)
                        + (transport.bytes_sent if counter == "bytes_sent" else transport.bytes_received),
                    )
                    transport.close()
