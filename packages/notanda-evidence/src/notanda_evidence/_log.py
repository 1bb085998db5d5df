"""The append-only evidence log under ``<root>/.notanda/``: writing it and parsing it.

One canonical JSON line per event in ``log.jsonl``: a sealed record, an
adopted one, or a tombstone. Each line names its index and the SHA-256 of the
previous line, and the lines are the leaves of an RFC 6962 Merkle tree whose
head (size and root) a search returns, so that whoever holds a head can later
detect deletion, reordering, insertion and rewritten history
(``docs/evidence-format.md``, "The log").

Appends are serialised across processes with an exclusive lock on
``.notanda/lock`` (``flock`` on POSIX, ``msvcrt.locking`` on Windows). An
append is one ``write`` of a whole line to a file opened with ``O_APPEND``,
then ``fsync``; a crash can leave at most a torn last line, which the next
append moves aside to ``.notanda/torn-*`` and truncates explicitly.

All strict parsing of the log lives here too: one line (:func:`parse_line`),
a log line by line with its findings (:class:`LogScanner`, which ``audit``
streams from :class:`LogReader` without holding the log) and a whole log
(:func:`parse_log`), which ``cite``, ``prove``, ``adopt`` and the BagIt
export share.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import hashlib
import os
import re
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from . import _merkle, verify_file
from ._store import EvidenceStorageError, Stage, StageCallback, StorageReason
from .verify_file import (
    RESERVED_DIR,
    Finding,
    FindingCode,
    NotRegularFileError,
    Severity,
    canonical_bytes,
    format_timestamp,
    is_evidence_id,
    json_depth_exceeds,
    parse_canonical,
    parse_timestamp,
    read_at,
    read_regular_file,
)

if sys.platform == "win32":  # pragma: no cover - exercised on Windows CI
    import msvcrt
else:
    import fcntl

__all__ = [
    "LOG_FILE",
    "MAX_LOG_BYTES",
    "MAX_LOG_LINE_BYTES",
    "AppendResult",
    "EntryType",
    "EvidenceLog",
    "EvidenceLogError",
    "Head",
    "LogCode",
    "LogEntry",
    "LogFinding",
    "LogReason",
    "LogReader",
    "LogScanner",
    "LogTransaction",
    "log_finding",
    "parse_line",
    "parse_log",
]

LOG_FILE = "log.jsonl"
LOCK_FILE = "lock"
LOG_VERSION = 1
#: The longest log line (without its newline) a reader parses. A written line
#: is under 1,100 bytes: its fixed fields plus a tombstone reason of at most
#: 200 characters (``docs/evidence-format.md``, "Limits").
MAX_LOG_LINE_BYTES = 4096
#: The largest log a reader reads and a writer appends to: about a million
#: entries. A reader holds the log in memory, so this bounds its memory.
MAX_LOG_BYTES = 256 << 20
ZERO_HASH = "0" * 64
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# A FIFO planted as the log must never block an open; regular files ignore it.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def _now() -> str:
    return format_timestamp(dt.datetime.now(dt.UTC))


def _is_timestamp(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parse_timestamp(value)
    except ValueError:
        return False
    return True


class EntryType(StrEnum):
    """What a log entry records."""

    SEALED = "sealed"
    ADOPTED = "adopted"
    TOMBSTONE = "tombstone"


class LogReason(StrEnum):
    """Why the log cannot be used, beside the storage reasons."""

    #: The file is shorter than this process last saw: truncated behind its back.
    SHRUNK = "log_shrunk"
    #: A line is not a log entry.
    UNPARSABLE = "log_unparsable"
    #: ``log.jsonl`` (or the lock file) is a FIFO, a device, a folder: not a regular file.
    NOT_A_FILE = "log_not_a_file"
    #: The log is larger than :data:`MAX_LOG_BYTES`.
    TOO_LARGE = "log_too_large"


class EvidenceLogError(verify_file.EvidenceError):
    """The log could not be read or appended to, or is not in a state that allows it.

    ``reason`` is a :class:`StorageReason` (``symlink`` for a linked log or
    folder, ``io_error``, ...) or a :class:`LogReason`; both are string enums
    whose ``str()`` is the documented ``log_reason``.
    """

    def __init__(self, reason: StorageReason | LogReason) -> None:
        super().__init__(f"evidence log unavailable: {reason}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Head:
    """A tree head: the number of entries and the Merkle root over them."""

    size: int
    root: str

    def to_json(self) -> dict[str, Any]:
        """``{"size": n, "root": hex}``, as returned beside a receipt."""
        return {"root": self.root, "size": self.size}

    def __str__(self) -> str:
        return f"{self.size}:{self.root}"

    @classmethod
    def parse(cls, text: str) -> Head:
        """Parse ``SIZE:ROOT`` (decimal size, 64 lowercase hex digits).

        Raises:
            ValueError: *text* is not a head.
        """
        size, sep, root = text.strip().partition(":")
        if not sep or not size.isdigit() or _HEX64.fullmatch(root) is None:
            raise ValueError("a head is SIZE:ROOT with ROOT 64 lowercase hex digits")
        return cls(int(size), root)


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One parsed log line."""

    index: int
    type: EntryType
    evidence_id: str
    receipt: str | None
    time: str
    prev: str
    reason: str | None = None
    #: The line's bytes without the newline: the Merkle leaf data.
    line: bytes = field(default=b"", repr=False)

    @property
    def leaf(self) -> bytes:
        """The RFC 6962 leaf hash of this line."""
        return _merkle.leaf_hash(self.line)


def encode_entry(
    *,
    index: int,
    kind: EntryType,
    evidence_id: str,
    receipt: str | None,
    time: str,
    prev: str,
    reason: str | None = None,
) -> bytes:
    """Encode one entry as its canonical line, without the newline."""
    entry: dict[str, Any] = {
        "evidence_id": evidence_id,
        "index": index,
        "prev": prev,
        "receipt": receipt,
        "time": time,
        "type": kind.value,
        "v": LOG_VERSION,
    }
    if reason is not None:
        entry["reason"] = reason
    return canonical_bytes(entry)[:-1]


_FIELDS = {"evidence_id", "index", "prev", "receipt", "time", "type", "v"}
_TYPES = frozenset(t.value for t in EntryType)


def line_limit_broken(line: bytes) -> LogCode | None:
    """``log.too_large`` or ``log.too_deep`` when *line* breaks a reader's limit, else None.

    Checked before any parse, so that no line can make the parser recurse or
    hold more than :data:`MAX_LOG_LINE_BYTES`.
    """
    if len(line) > MAX_LOG_LINE_BYTES:
        return LogCode.TOO_LARGE
    if json_depth_exceeds(line):
        return LogCode.TOO_DEEP
    return None


def parse_line(line: bytes) -> LogEntry | None:
    """Parse one line strictly; return None unless it is a canonical, well-typed entry."""
    if line_limit_broken(line) is not None:
        return None
    # The record files' canonical form: a line is its encoding, NaN and Infinity refused.
    value, _ = parse_canonical(line + b"\n")
    if not isinstance(value, dict):
        return None
    keys = set(value)
    if not keys >= _FIELDS or keys - _FIELDS - {"reason"}:
        return None
    index, kind, receipt = value["index"], value["type"], value["receipt"]
    if (
        value["v"] != LOG_VERSION
        or type(value["v"]) is not int
        or type(index) is not int
        or index < 0
    ):
        return None
    if not isinstance(kind, str) or kind not in _TYPES or not is_evidence_id(value["evidence_id"]):
        return None
    if not (isinstance(value["prev"], str) and _HEX64.fullmatch(value["prev"])):
        return None
    if not _is_timestamp(value["time"]):
        return None
    reason = value.get("reason")
    if "reason" in value and not isinstance(reason, str):  # the writer never stores null
        return None
    if receipt is None:
        if kind != EntryType.TOMBSTONE:
            return None
    elif not (isinstance(receipt, str) and _HEX64.fullmatch(receipt)):
        return None
    return LogEntry(
        index,
        EntryType(kind),
        value["evidence_id"],
        receipt,
        value["time"],
        value["prev"],
        reason,
        line,
    )


@dataclass(frozen=True, slots=True)
class AppendResult:
    """The appended entry and the head that now includes it."""

    entry: LogEntry
    head: Head


@dataclass
class _State:
    """What this process knows of the log file, up to ``offset`` bytes."""

    offset: int = 0
    frontier: _merkle.Frontier = field(default_factory=_merkle.Frontier)
    last_line_hash: str = ZERO_HASH
    #: Per record, ``(index, type, receipt, position)`` of each entry, oldest
    #: first; the position is the line's own place in the file, whatever
    #: index the line states.
    by_id: dict[str, list[tuple[int, EntryType, str | None, int]]] = field(default_factory=dict)
    #: The byte offset at which each line starts, by position.
    starts: list[int] = field(default_factory=list)
    unparsable: int = 0


def _lock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows CI
        os.lseek(fd, 0, os.SEEK_SET)
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError as exc:  # LK_LOCK gives up after ten seconds; keep waiting.
                if exc.errno != errno.EDEADLK:
                    raise
    else:
        fcntl.flock(fd, fcntl.LOCK_EX)


def _unlock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows CI
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)


class EvidenceLog:
    """The log of one evidence root, safe to append to from several processes.

    Args:
        root: The evidence root; the log lives in ``root/.notanda/``.
        on_stage: Called with ``(Stage.AFTER_LOG_APPEND, evidence_id)`` once an
            append is durable.
        clock: Returns the entry time; tests pass a fixed one. None reads the
            module's ``_now`` when the log is made, so a test that drives the
            server (which makes its own log) can fix the time there.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        on_stage: StageCallback | None = None,
        clock: Callable[[], str] | None = None,
    ) -> None:
        self.root = Path(root)
        self.folder = self.root / RESERVED_DIR
        self.path = self.folder / LOG_FILE
        self._on_stage = on_stage
        self._clock = _now if clock is None else clock
        self._state = _State()
        self._guard = threading.Lock()

    # ------------------------------------------------------------ reading

    def _absorb(self, data: bytes, state: _State) -> int:
        """Absorb complete lines from *data*; return the bytes consumed."""
        consumed = 0
        while True:
            end = data.find(b"\n", consumed)
            if end < 0:
                return consumed
            line = data[consumed:end]
            state.starts.append(state.offset + consumed)
            consumed = end + 1
            state.frontier.append(_merkle.leaf_hash(line))
            state.last_line_hash = hashlib.sha256(line).hexdigest()
            entry = parse_line(line)
            if entry is None:
                state.unparsable += 1
                continue
            state.by_id.setdefault(entry.evidence_id, []).append(
                (entry.index, entry.type, entry.receipt, len(state.starts) - 1)
            )

    def _catch_up(self, fd: int) -> bytes:
        """Bring the in-memory state up to the end of *fd*; return a torn tail, if any."""
        size = _regular_size(fd)
        state = self._state
        if size < state.offset:
            raise EvidenceLogError(LogReason.SHRUNK)
        if size == state.offset:
            return b""
        data = read_at(fd, state.offset, size - state.offset)
        consumed = self._absorb(data, state)
        state.offset += consumed
        return data[consumed:]

    def refresh(self) -> None:
        """Read entries other processes appended since the last look (no lock taken).

        A torn last line is left for the next append to repair. Neither
        ``.notanda/`` nor the log is followed if it is a link, and nothing
        but a regular file is read.

        Raises:
            EvidenceLogError: The log shrank since this process last read it,
                it (or its folder) is a link or not a regular file, it is
                larger than :data:`MAX_LOG_BYTES`, or it is unreadable.
        """
        with self._guard:
            try:
                fd = self._open_for_reading()
            except FileNotFoundError:
                if self._state.offset:
                    raise EvidenceLogError(LogReason.SHRUNK) from None
                return
            except OSError as exc:
                raise _log_finding(exc) from exc
            try:
                self._catch_up(fd)
            except OSError as exc:
                raise _log_finding(exc) from exc
            finally:
                os.close(fd)

    def _open_for_reading(self) -> int:
        flags = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _BINARY | _NONBLOCK
        if not verify_file.USE_DIR_FD:
            if self.folder.is_symlink() or self.path.is_symlink():
                raise OSError(errno.ELOOP, "a link")
            return os.open(self.path, flags)
        try:
            folder = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC)
        except OSError as exc:
            if self.folder.is_symlink():  # Linux says ENOTDIR for a link with O_DIRECTORY.
                raise OSError(errno.ELOOP, "a link") from exc
            raise
        try:
            return os.open(LOG_FILE, flags, dir_fd=folder)
        finally:
            os.close(folder)

    def lookup(self, evidence_id: str) -> list[tuple[int, EntryType, str | None]]:
        """The ``(index, type, receipt)`` entries for one record, oldest first.

        Raises:
            EvidenceLogError: As :meth:`refresh`.
        """
        self.refresh()
        return _public(self._state.by_id.get(evidence_id, ()))

    def latest_entries(self) -> list[tuple[int, EntryType, str, str | None]]:
        """Each logged record's latest entry, ``(position, type, evidence_id, receipt)``.

        Sorted by the entry's position in the file (its index in an honest
        log), oldest first; a record whose latest entry is a tombstone is
        included with that type, so that a caller decides what it shows.

        Raises:
            EvidenceLogError: As :meth:`refresh`.
        """
        self.refresh()
        with self._guard:
            latest = [
                (held[-1][3], held[-1][1], evidence_id, held[-1][2])
                for evidence_id, held in self._state.by_id.items()
                if held
            ]
        return sorted(latest)

    def head(self) -> Head:
        """The head over everything this process has read.

        Raises:
            EvidenceLogError: As :meth:`refresh`.
        """
        self.refresh()
        return Head(self._state.frontier.size, self._state.frontier.root().hex())

    # ----------------------------------------------------------- appending

    def _open_folder(self) -> int:
        """Open (creating it if needed) ``.notanda/``; -1 where folders cannot be opened."""
        try:
            os.mkdir(self.folder, 0o700)
        except FileExistsError:
            pass
        else:
            _fsync_dir(self.root)
        if not verify_file.USE_DIR_FD:
            if self.folder.is_symlink() or not self.folder.is_dir():
                raise OSError(errno.ELOOP, "not a folder")
            return -1
        flags = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC
        try:
            return os.open(self.folder, flags)
        except OSError as exc:
            if self.folder.is_symlink():  # Linux says ENOTDIR for a link with O_DIRECTORY.
                raise OSError(errno.ELOOP, "a link") from exc
            raise

    @contextlib.contextmanager
    def transaction(self) -> Iterator[LogTransaction]:
        """Hold the log's lock, with the log re-read under it, for decide-then-append.

        Every appender takes the same lock, so what the transaction reads
        stays true until it ends: ``adopt`` and ``prune`` decide and append
        inside one, beside any number of servers. Append through the
        transaction: this object's own :meth:`append` would wait for the
        lock the transaction holds.

        Raises:
            EvidenceLogError: The lock or the log cannot be opened or read
                (also from the transaction's own appends).
        """
        with self._guard:
            try:
                folder = self._open_folder()
                try:
                    lock = _open_in(folder, self.folder, LOCK_FILE, os.O_RDWR | os.O_CREAT)
                    try:
                        _regular_size(lock)
                        _lock(lock)
                        try:
                            created = not os.path.lexists(self.path)
                            flags = os.O_RDWR | os.O_CREAT | os.O_APPEND
                            fd = _open_in(folder, self.folder, LOG_FILE, flags)
                            try:
                                if created and folder >= 0:
                                    os.fsync(folder)
                                torn = self._catch_up(fd)
                                if torn:
                                    self._set_aside(folder, torn)
                                    os.ftruncate(fd, self._state.offset)
                                    os.fsync(fd)
                                yield LogTransaction(self, fd)
                            finally:
                                os.close(fd)
                        finally:
                            _unlock(lock)
                    finally:
                        os.close(lock)
                finally:
                    if folder >= 0:
                        os.close(folder)
            except OSError as exc:
                raise _log_finding(exc) from exc

    def append(
        self,
        evidence_id: str,
        receipt: str | None,
        kind: EntryType = EntryType.SEALED,
        *,
        reason: str | None = None,
    ) -> AppendResult:
        """Append one entry durably and return it with the new head.

        A record the log already holds with the same receipt is not logged
        twice: its existing entry is returned with the current head. That
        happens when an ``adopt`` logged it between its sealing and this
        call; a ``sealed`` append also finds such an entry after a later
        tombstone, as a record is sealed only once.

        Raises:
            EvidenceLogError: The log cannot be read or written (the record,
                if any, stays sealed; it is reported as unlogged until adopted).
            ValueError: Not an evidence ID, a record entry without a receipt,
                or a line over :data:`MAX_LOG_LINE_BYTES` (a reason too long).
        """
        with self.transaction() as log:
            return log.append(evidence_id, receipt, kind, reason=reason)

    def _write_entry(
        self,
        fd: int,
        evidence_id: str,
        receipt: str | None,
        kind: EntryType,
        reason: str | None,
    ) -> AppendResult:
        state = self._state
        held = state.by_id.get(evidence_id, [])
        same = [e for e in held if e[1] is not EntryType.TOMBSTONE and e[2] == receipt]
        # A record is sealed once: its writer's append finds it logged if an
        # adopt got there first, even if a prune has tombstoned it since.
        if (
            same
            and kind is not EntryType.TOMBSTONE
            and (kind is EntryType.SEALED or held[-1][1] is not EntryType.TOMBSTONE)
        ):
            return AppendResult(self._entry_at(fd, same[-1][3]), self._current_head())
        line = encode_entry(
            index=state.frontier.size,
            kind=kind,
            evidence_id=evidence_id,
            receipt=receipt,
            time=self._clock(),
            prev=state.last_line_hash,
            reason=reason,
        )
        if len(line) > MAX_LOG_LINE_BYTES:
            raise ValueError(f"a log line is at most {MAX_LOG_LINE_BYTES} bytes")
        data = line + b"\n"
        if state.offset + len(data) > MAX_LOG_BYTES:
            raise EvidenceLogError(LogReason.TOO_LARGE)
        try:
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(errno.ENOSPC, "short write")
            os.fsync(fd)
        except OSError:
            # Never leave a partial line behind a failed append.
            os.ftruncate(fd, state.offset)
            raise
        entry = parse_line(line)
        if entry is None:  # pragma: no cover - encode_entry always makes a valid line
            raise EvidenceLogError(LogReason.UNPARSABLE)
        self._absorb(data, state)
        state.offset += len(data)
        return AppendResult(entry, self._current_head())

    def _current_head(self) -> Head:
        return Head(self._state.frontier.size, self._state.frontier.root().hex())

    def _entry_at(self, fd: int, position: int) -> LogEntry:
        starts = self._state.starts
        end = starts[position + 1] if position + 1 < len(starts) else self._state.offset
        line = read_at(fd, starts[position], end - starts[position])[:-1]
        entry = parse_line(line)
        if entry is None:  # pragma: no cover - by_id only holds lines that parsed
            raise EvidenceLogError(LogReason.UNPARSABLE)
        return entry

    def _set_aside(self, folder: int, torn: bytes) -> None:
        name = f"torn-{self._clock().replace(':', '')}-{os.getpid()}"
        fd = _open_in(folder, self.folder, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            os.write(fd, torn)
            os.fsync(fd)
        finally:
            os.close(fd)


class LogTransaction:
    """The log under its lock, as :meth:`EvidenceLog.transaction` yields it."""

    def __init__(self, log: EvidenceLog, fd: int) -> None:
        self._log = log
        self._fd = fd

    def latest(self, evidence_id: str) -> EntryType | None:
        """The type of the record's latest entry, or None if it has none."""
        held = self._log._state.by_id.get(evidence_id)
        return held[-1][1] if held else None

    def append(
        self,
        evidence_id: str,
        receipt: str | None,
        kind: EntryType = EntryType.SEALED,
        *,
        reason: str | None = None,
    ) -> AppendResult:
        """Append one entry durably, as :meth:`EvidenceLog.append` does."""
        if not is_evidence_id(evidence_id):
            raise ValueError("not an evidence ID")
        if receipt is None and kind is not EntryType.TOMBSTONE:
            raise ValueError("only a tombstone may lack a receipt")
        log = self._log
        try:
            result = log._write_entry(self._fd, evidence_id, receipt, kind, reason)
        except OSError as exc:
            storage = EvidenceStorageError.from_os_error(exc, evidence_id=evidence_id)
            raise EvidenceLogError(storage.reason) from exc
        if log._on_stage is not None:
            log._on_stage(Stage.AFTER_LOG_APPEND, evidence_id)
        return result


def _public(
    held: Iterable[tuple[int, EntryType, str | None, int]],
) -> list[tuple[int, EntryType, str | None]]:
    return [(index, kind, receipt) for index, kind, receipt, _ in held]


def _log_finding(exc: OSError) -> EvidenceLogError:
    return EvidenceLogError(EvidenceStorageError.from_os_error(exc).reason)


def _regular_size(fd: int) -> int:
    """The size of the regular file *fd*; refuse anything else, and oversized logs."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise EvidenceLogError(LogReason.NOT_A_FILE)
    if st.st_size > MAX_LOG_BYTES:
        raise EvidenceLogError(LogReason.TOO_LARGE)
    return st.st_size


def _fsync_dir(path: Path) -> None:
    if not verify_file.USE_DIR_FD:
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _open_in(folder_fd: int, folder: Path, name: str, flags: int) -> int:
    flags |= _NOFOLLOW | _CLOEXEC | _BINARY | _NONBLOCK
    if folder_fd >= 0:
        return os.open(name, flags, 0o600, dir_fd=folder_fd)
    path = folder / name
    if path.is_symlink():
        raise OSError(errno.ELOOP, "a link")
    return os.open(path, flags, 0o600)


def read_log(root: str | os.PathLike[str], *, log_path: Path | None = None) -> tuple[bytes, bool]:
    """Read ``.notanda/log.jsonl`` without following links; return bytes and existence.

    Only a regular file is read, opened so that a FIFO cannot block, and
    never more than :data:`MAX_LOG_BYTES`.

    Raises:
        EvidenceLogError: The log or its folder is a link (``symlink``), not a
            regular file (``log_not_a_file``), too large (``log_too_large``)
            or unreadable (a storage reason).
    """
    path = log_path or Path(root) / RESERVED_DIR / LOG_FILE
    try:
        if path.parent.is_symlink():
            raise EvidenceLogError(StorageReason.SYMLINK)
        data = read_regular_file(path, MAX_LOG_BYTES)
    except FileNotFoundError:
        return b"", False
    except NotRegularFileError as exc:
        raise EvidenceLogError(LogReason.NOT_A_FILE) from exc
    except OSError as exc:
        raise _log_finding(exc) from exc
    if len(data) > MAX_LOG_BYTES:
        raise EvidenceLogError(LogReason.TOO_LARGE)
    return data, True


class LogReader:
    """The log of a root, open for reading line by line, as often as needed.

    Opened as :func:`read_log` reads it (no link followed, a FIFO never
    blocks, only a regular file of at most :data:`MAX_LOG_BYTES`), and held
    open: every :meth:`lines` pass reads the same file up to the size it had
    when opened, so an append made meanwhile is never half seen, and no pass
    holds more than one read block and one line.

    Use as a context manager; ``exists`` is False (and there are no lines)
    when there is no log.

    Raises:
        EvidenceLogError: As :func:`read_log`.
    """

    #: Bytes read at a time.
    BLOCK = 1 << 20

    def __init__(self, root: str | os.PathLike[str], *, log_path: Path | None = None) -> None:
        path = log_path or Path(root) / RESERVED_DIR / LOG_FILE
        self.fd = -1
        self.size = 0
        self.exists = True
        try:
            if path.parent.is_symlink():
                raise EvidenceLogError(StorageReason.SYMLINK)
            self.fd = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY | _CLOEXEC | _NOFOLLOW)
        except FileNotFoundError:
            self.exists = False
            return
        except OSError as exc:
            raise _log_finding(exc) from exc
        try:
            st = os.fstat(self.fd)
        except OSError as exc:
            self.close()
            raise _log_finding(exc) from exc
        if not stat.S_ISREG(st.st_mode):
            self.close()
            raise EvidenceLogError(LogReason.NOT_A_FILE)
        if st.st_size > MAX_LOG_BYTES:
            self.close()
            raise EvidenceLogError(LogReason.TOO_LARGE)
        self.size = st.st_size

    def close(self) -> None:
        """Close the log."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> LogReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lines(self) -> Iterator[tuple[bytes, bool]]:
        """Yield ``(line, terminated)`` for each line, as :func:`iter_lines` does for bytes.

        Raises:
            EvidenceLogError: The log could not be read (a storage reason).
        """
        offset, tail = 0, b""
        while offset < self.size:
            try:
                block = read_at(self.fd, offset, min(self.BLOCK, self.size - offset))
            except OSError as exc:
                raise _log_finding(exc) from exc
            if not block:
                break
            offset += len(block)
            start = 0
            data = tail + block if tail else block
            while True:
                end = data.find(b"\n", start)
                if end < 0:
                    break
                yield data[start:end], True
                start = end + 1
            tail = data[start:]
        if tail:
            yield tail, False


def iter_lines(data: bytes) -> Iterator[tuple[bytes, bool]]:
    """Yield ``(line, terminated)`` for each line of a log file's bytes."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            yield data[start:], False
            return
        yield data[start:end], True
        start = end + 1


# ------------------------------------------------------- strict parsing


#: Entry times that go backwards by more than this many seconds are reported.
TIME_REGRESSION_TOLERANCE_S = 5.0


class LogCode(FindingCode):
    """Stable codes for findings about the log and its agreement with the records."""

    def report_keys(self) -> tuple[str, ...]:
        """A log finding is located by the record and the line it is about."""
        return ("evidence_id", "index")

    MISSING = "log.missing"
    UNREADABLE = "log.unreadable"
    TOO_LARGE = "log.too_large"
    TOO_DEEP = "log.too_deep"
    UNPARSABLE = "log.unparsable"
    INDEX_MISMATCH = "log.index_mismatch"
    CHAIN_BREAK = "log.chain_break"
    TAIL_TORN = "log.tail_torn"
    RECORD_MISSING = "log.record_missing"
    RECEIPT_MISMATCH = "log.receipt_mismatch"
    DUPLICATE_ENTRY = "log.duplicate_entry"
    RECORD_UNLOGGED = "log.record_unlogged"
    ADOPTED = "log.adopted"
    TOMBSTONED = "log.tombstoned"
    TOMBSTONE_PRESENT = "log.tombstone_present"
    TIME_REGRESSION = "log.time_regression"
    HEAD_TRUNCATED = "head.truncated"
    HEAD_MISMATCH = "head.mismatch"
    HEAD_CONSISTENT = "head.consistent"

    @property
    def remedy(self) -> str | None:
        """What to do about it, in one line (``docs/errors.md``); None when nothing is to do."""
        return LOG_REMEDIES.get(self)

    def has_remedies(self) -> bool:
        """The log's findings state their remedies (null for the three that need none)."""
        return True


_RESTORE_LOG = "restore .notanda/ from a backup"
#: What to do about each log and head finding, one line each, printed under the
#: finding by ``audit`` and given as ``remedy`` in ``--json``; ``docs/errors.md``
#: states the same text (a test compares them). ``log.adopted``,
#: ``log.tombstoned`` and ``head.consistent`` need nothing done.
LOG_REMEDIES: dict[LogCode, str] = {
    **dict.fromkeys(
        (LogCode.UNPARSABLE, LogCode.INDEX_MISMATCH, LogCode.CHAIN_BREAK),
        f"the log was edited or damaged: {_RESTORE_LOG}; do not trust the collection until"
        " it audits clean",
    ),
    LogCode.TOO_LARGE: "start a new evidence root for a log that large; a line that long was"
    f" not written by a writer: {_RESTORE_LOG}",
    LogCode.TOO_DEEP: f"no writer made it: {_RESTORE_LOG}",
    LogCode.UNREADABLE: "move it aside and restore the log from a backup",
    LogCode.RECORD_MISSING: "restore the record from a backup, or ask why it was deleted"
    " without notanda-evidence prune",
    LogCode.RECEIPT_MISMATCH: "the record differs from the one logged: restore it from a backup",
    LogCode.DUPLICATE_ENTRY: f"the log was edited: {_RESTORE_LOG}",
    LogCode.HEAD_TRUNCATED: f"entries were removed from the log: {_RESTORE_LOG}, or check"
    " that the head belongs to this folder",
    LogCode.HEAD_MISMATCH: "the history was rewritten, or the head belongs to another folder:"
    " ask the author",
    LogCode.TAIL_TORN: "none needed: the next search repairs it; audit again after it",
    LogCode.RECORD_UNLOGGED: "run notanda-evidence adopt on the folder to log it",
    LogCode.MISSING: "run notanda-evidence adopt on the folder to start the log",
    LogCode.TIME_REGRESSION: "check the clock of the machine that made the searches",
    LogCode.TOMBSTONE_PRESENT: "delete the pruned record's folder, or leave it: it is no longer"
    " vouched for",
}


#: A finding about the log, optionally about one record: a :class:`Finding`
#: with a :class:`LogCode`, located by ``evidence_id`` and line ``index``.
LogFinding = Finding


def log_finding(
    code: LogCode,
    evidence_id: str | None = None,
    index: int | None = None,
    detail: str | None = None,
    *,
    severity: Severity = Severity.ERROR,
) -> Finding:
    """A finding about the log (an error unless said), at a record and line when given."""
    return Finding(code, severity, evidence_id=evidence_id, index=index, detail=detail)


class LogScanner:
    """Parses a log line by line: each line's entry and leaf hash, and the findings so far.

    The strict rules of :func:`parse_log`, fed one ``(line, terminated)``
    at a time, so that a log can be checked without holding it. A torn last
    line ends the scan: :attr:`done` is then true and later lines are not read.
    """

    __slots__ = ("done", "position", "previous", "previous_time")

    def __init__(self) -> None:
        self.position = 0
        self.previous = "0" * 64
        self.previous_time: str | None = None
        self.done = False

    def feed(
        self, line: bytes, terminated: bool, findings: list[Finding]
    ) -> tuple[LogEntry | None, bytes | None]:
        """Read one line: its entry (None if it does not parse) and its leaf hash.

        The findings about the line are appended to *findings*. An unterminated
        line is a torn tail: no leaf (None), and the scan is done.
        """
        position = self.position
        if not terminated:
            findings.append(
                log_finding(
                    LogCode.TAIL_TORN, index=position, detail=f"{len(line)} bytes without a newline"
                )
            )
            self.done = True
            return None, None
        self.position += 1
        leaf = _merkle.leaf_hash(line)
        entry = parse_line(line)
        line_hash = hashlib.sha256(line).hexdigest()
        if entry is None:
            findings.append(_unparsable(line, position))
            self.previous = line_hash
            return None, leaf
        if entry.index != position:
            findings.append(
                log_finding(
                    LogCode.INDEX_MISMATCH,
                    entry.evidence_id,
                    position,
                    f"entry says index {entry.index}",
                )
            )
        if entry.prev != self.previous:
            findings.append(log_finding(LogCode.CHAIN_BREAK, entry.evidence_id, position))
        # The fixed timestamp format sorts like time itself: only an entry that
        # is older than its predecessor needs its distance measured.
        previous_time = self.previous_time
        if (
            previous_time is not None
            and entry.time < previous_time
            and _seconds_between(entry.time, previous_time) > TIME_REGRESSION_TOLERANCE_S
        ):
            findings.append(
                log_finding(
                    LogCode.TIME_REGRESSION,
                    entry.evidence_id,
                    position,
                    f"{entry.time} is before {previous_time}",
                    severity=Severity.WARNING,
                )
            )
        self.previous_time = max(previous_time or entry.time, entry.time)
        self.previous = line_hash
        return entry, leaf


def parse_log(data: bytes) -> tuple[list[LogEntry], list[bytes], list[Finding]]:
    """Parse a log strictly; return the entries, every leaf hash, and findings.

    Every terminated line is a leaf of the tree, even one that fails to parse,
    so the head computed here is the head a writer returned.
    """
    entries: list[LogEntry] = []
    leaves: list[bytes] = []
    findings: list[Finding] = []
    scanner = LogScanner()
    for line, terminated in iter_lines(data):
        entry, leaf = scanner.feed(line, terminated, findings)
        if scanner.done:
            break
        if leaf is not None:
            leaves.append(leaf)
        if entry is not None:
            entries.append(entry)
    return entries, leaves, findings


def _unparsable(line: bytes, position: int) -> Finding:
    broken = line_limit_broken(line)
    if broken is LogCode.TOO_LARGE:
        return log_finding(broken, index=position, detail=f"a line of {len(line)} bytes")
    if broken is LogCode.TOO_DEEP:
        return log_finding(broken, index=position, detail="nested deeper than a log entry")
    return log_finding(LogCode.UNPARSABLE, index=position)


def _seconds_between(later: str, earlier: str) -> float:
    """How many seconds *later* lies before *earlier* (positive means backwards).

    Both are times of entries :func:`parse_line` accepted, so both parse.
    """
    return (parse_timestamp(earlier) - parse_timestamp(later)).total_seconds()
