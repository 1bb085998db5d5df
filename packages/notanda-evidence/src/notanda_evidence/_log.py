"""The append-only evidence log under ``<root>/.notanda/``.

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
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from . import _merkle
from ._store import EvidenceStorageError, Stage, StageCallback, StorageReason
from .verify_file import RESERVED_DIR, is_evidence_id

if sys.platform == "win32":  # pragma: no cover - exercised on Windows CI
    import msvcrt
else:
    import fcntl

__all__ = [
    "LOG_FILE",
    "AppendResult",
    "EntryType",
    "EvidenceLog",
    "EvidenceLogError",
    "Head",
    "LogEntry",
    "format_timestamp",
    "parse_line",
]

LOG_FILE = "log.jsonl"
LOCK_FILE = "lock"
LOG_VERSION = 1
ZERO_HASH = "0" * 64
_HEX64 = re.compile(r"[0-9a-f]{64}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def format_timestamp(moment: dt.datetime) -> str:
    """Format a moment as the spec's UTC ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    utc = moment.astimezone(dt.UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _now() -> str:
    return format_timestamp(dt.datetime.now(dt.UTC))


class EntryType(StrEnum):
    """What a log entry records."""

    SEALED = "sealed"
    ADOPTED = "adopted"
    TOMBSTONE = "tombstone"


class EvidenceLogError(Exception):
    """The log could not be appended to or is not in a state that allows it.

    ``reason`` is a storage reason or one of ``log_shrunk`` (the file is
    shorter than this process last saw: truncated behind its back) and
    ``log_unparsable`` (a line is not a log entry).
    """

    def __init__(self, reason: str) -> None:
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
    return _ENCODER.encode(entry).encode("utf-8")


_FIELDS = {"evidence_id", "index", "prev", "receipt", "time", "type", "v"}


def parse_line(line: bytes) -> LogEntry | None:
    """Parse one line strictly; return None unless it is a canonical, well-typed entry."""
    try:
        value = json.loads(line.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(value, dict) or _ENCODER.encode(value).encode("utf-8") != line:
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
    if kind not in {t.value for t in EntryType} or not is_evidence_id(value["evidence_id"]):
        return None
    if not (isinstance(value["prev"], str) and _HEX64.fullmatch(value["prev"])):
        return None
    if not (isinstance(value["time"], str) and _TIME.fullmatch(value["time"])):
        return None
    reason = value.get("reason")
    if reason is not None and not isinstance(reason, str):
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
    by_id: dict[str, list[tuple[int, EntryType, str | None]]] = field(default_factory=dict)
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
        clock: Returns the entry time; tests pass a fixed one.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        on_stage: StageCallback | None = None,
        clock: Callable[[], str] = _now,
    ) -> None:
        self.root = Path(root)
        self.folder = self.root / RESERVED_DIR
        self.path = self.folder / LOG_FILE
        self._on_stage = on_stage
        self._clock = clock
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
            consumed = end + 1
            state.frontier.append(_merkle.leaf_hash(line))
            state.last_line_hash = hashlib.sha256(line).hexdigest()
            entry = parse_line(line)
            if entry is None:
                state.unparsable += 1
                continue
            state.by_id.setdefault(entry.evidence_id, []).append(
                (entry.index, entry.type, entry.receipt)
            )

    def _catch_up(self, read: Callable[[int], bytes], size: int) -> bytes:
        """Bring the in-memory state up to *size* bytes; return a torn tail, if any."""
        state = self._state
        if size < state.offset:
            raise EvidenceLogError("log_shrunk")
        if size == state.offset:
            return b""
        data = read(state.offset)
        consumed = self._absorb(data, state)
        state.offset += consumed
        return data[consumed:]

    def refresh(self) -> None:
        """Read entries other processes appended since the last look (no lock taken).

        A torn last line is left for the next append to repair. Neither
        ``.notanda/`` nor the log is followed if it is a link.

        Raises:
            EvidenceLogError: The log shrank since this process last read it,
                or it (or its folder) is a link, not a file, or unreadable.
        """
        with self._guard:
            try:
                fd = self._open_for_reading()
            except FileNotFoundError:
                if self._state.offset:
                    raise EvidenceLogError("log_shrunk") from None
                return
            except OSError as exc:
                reason = EvidenceStorageError.from_os_error(exc).reason.value
                raise EvidenceLogError(reason) from exc
            try:
                size = os.fstat(fd).st_size
                self._catch_up(lambda offset: _read_from(fd, offset, size), size)
            finally:
                os.close(fd)

    def _open_for_reading(self) -> int:
        flags = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _BINARY
        if not USE_DIR_FD:
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
        """The ``(index, type, receipt)`` entries for one record, oldest first."""
        self.refresh()
        return list(self._state.by_id.get(evidence_id, ()))

    def head(self) -> Head:
        """The head over everything this process has read."""
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
        if not USE_DIR_FD:
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

    def append(
        self,
        evidence_id: str,
        receipt: str | None,
        kind: EntryType = EntryType.SEALED,
        *,
        reason: str | None = None,
    ) -> AppendResult:
        """Append one entry durably and return it with the new head.

        Raises:
            EvidenceLogError: The log cannot be written (the record, if any,
                stays sealed; it is reported as unlogged until adopted).
        """
        if not is_evidence_id(evidence_id):
            raise ValueError("not an evidence ID")
        if receipt is None and kind is not EntryType.TOMBSTONE:
            raise ValueError("only a tombstone may lack a receipt")
        with self._guard:
            try:
                result = self._append_locked(evidence_id, receipt, kind, reason)
            except OSError as exc:
                storage = EvidenceStorageError.from_os_error(exc, evidence_id=evidence_id)
                raise EvidenceLogError(storage.reason.value) from exc
        if self._on_stage is not None:
            self._on_stage(Stage.AFTER_LOG_APPEND, evidence_id)
        return result

    def _append_locked(
        self, evidence_id: str, receipt: str | None, kind: EntryType, reason: str | None
    ) -> AppendResult:
        folder = self._open_folder()
        try:
            lock = _open_in(folder, self.folder, LOCK_FILE, os.O_RDWR | os.O_CREAT)
            try:
                _lock(lock)
                try:
                    return self._write_entry(folder, evidence_id, receipt, kind, reason)
                finally:
                    _unlock(lock)
            finally:
                os.close(lock)
        finally:
            if folder >= 0:
                os.close(folder)

    def _write_entry(
        self,
        folder: int,
        evidence_id: str,
        receipt: str | None,
        kind: EntryType,
        reason: str | None,
    ) -> AppendResult:
        created = not os.path.lexists(self.path)
        fd = _open_in(folder, self.folder, LOG_FILE, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
            torn = self._catch_up(lambda offset: _read_from(fd, offset, size), size)
            if torn:
                self._set_aside(folder, torn)
                os.ftruncate(fd, self._state.offset)
                os.fsync(fd)
            state = self._state
            line = encode_entry(
                index=state.frontier.size,
                kind=kind,
                evidence_id=evidence_id,
                receipt=receipt,
                time=self._clock(),
                prev=state.last_line_hash,
                reason=reason,
            )
            data = line + b"\n"
            try:
                written = os.write(fd, data)
                if written != len(data):
                    raise OSError(errno.ENOSPC, "short write")
                os.fsync(fd)
            except OSError:
                # Never leave a partial line behind a failed append.
                os.ftruncate(fd, state.offset)
                raise
            if created and folder >= 0:
                os.fsync(folder)
            entry = parse_line(line)
            if entry is None:  # pragma: no cover - encode_entry always makes a valid line
                raise EvidenceLogError("log_unparsable")
            self._absorb(data, state)
            state.offset += len(data)
            return AppendResult(entry, Head(state.frontier.size, state.frontier.root().hex()))
        finally:
            os.close(fd)

    def _set_aside(self, folder: int, torn: bytes) -> None:
        name = f"torn-{self._clock().replace(':', '')}-{os.getpid()}"
        fd = _open_in(folder, self.folder, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            os.write(fd, torn)
            os.fsync(fd)
        finally:
            os.close(fd)


#: Tests set this to False to run the Windows code path on POSIX.
USE_DIR_FD = os.name == "posix" and os.open in os.supports_dir_fd


def _read_from(fd: int, offset: int, size: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    chunks = []
    remaining = size - offset
    while remaining > 0:
        chunk = os.read(fd, remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _fsync_dir(path: Path) -> None:
    if not USE_DIR_FD:
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _open_in(folder_fd: int, folder: Path, name: str, flags: int) -> int:
    flags |= _NOFOLLOW | _CLOEXEC | _BINARY
    if folder_fd >= 0:
        return os.open(name, flags, 0o600, dir_fd=folder_fd)
    path = folder / name
    if path.is_symlink():
        raise OSError(errno.ELOOP, "a link")
    return os.open(path, flags, 0o600)


def read_log(root: str | os.PathLike[str], *, log_path: Path | None = None) -> tuple[bytes, bool]:
    """Read ``.notanda/log.jsonl`` without following links; return bytes and existence.

    Raises:
        EvidenceStorageError: The log or its folder is a link or unreadable.
    """
    path = log_path or Path(root) / RESERVED_DIR / LOG_FILE
    try:
        if path.parent.is_symlink():
            raise EvidenceStorageError(StorageReason.SYMLINK, file=RESERVED_DIR)
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _BINARY)
    except FileNotFoundError:
        return b"", False
    except OSError as exc:
        raise EvidenceStorageError.from_os_error(exc, file=LOG_FILE) from exc
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), True
    finally:
        os.close(fd)


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
