"""The durable writer: create a record, publish its payloads atomically, seal it.

Write order and why (``docs/evidence-format.md``, "Writing a record"):

1. ``mkdir`` a fresh 32-hex directory (mode 0700), then fsync the root so the
   directory entry survives a power cut.
2. For each payload in turn, ``request.json``, ``provider.json`` and
   ``response.json``: exclusive-create ``<name>.pending`` (mode 0600), write,
   fsync, rename to ``<name>``, fsync the record directory (one folder fsync
   after ``response.json`` covers the renames of both later payloads).
3. Seal: publish ``manifest.json`` the same way. Only after its directory entry
   is durable is the receipt returned.

A crash at any point leaves either a complete record or one without a manifest
(``incomplete``), never a record that verifies with wrong content. Bytes are
hashed from memory, never re-read from disk.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from . import verify_file as _v1
from .verify_file import ParsedJSON

__all__ = [
    "EvidenceStorageError",
    "EvidenceStore",
    "EvidenceValueError",
    "RecordWriter",
    "Seal",
    "Stage",
    "StageCallback",
    "StorageReason",
    "encode_canonical",
    "replace_lone_surrogates",
]


class Stage(StrEnum):
    """Points at which a stage callback is called, in the order they happen.

    The writer calls the first six; the server calls ``provider_wait`` and
    ``before_reply`` and the log append calls ``after_log_append``. Tests use
    them to stop a process at an exact point.
    """

    BEFORE_REQUEST = "before_request"
    AFTER_REQUEST = "after_request"
    PROVIDER_WAIT = "provider_wait"
    AFTER_PROVIDER = "after_provider"
    AFTER_RESPONSE = "after_response"
    BEFORE_MANIFEST = "before_manifest"
    AFTER_MANIFEST = "after_manifest"
    AFTER_LOG_APPEND = "after_log_append"
    BEFORE_REPLY = "before_reply"


#: ``on_stage(stage, evidence_id)``; library use only, never a flag or variable.
StageCallback = Callable[[Stage, str], None]


class StorageReason(StrEnum):
    """Why storage failed: the operating system's error number, or a format limit.

    ``too_large`` and ``too_deep`` are the format's own limits
    (``verify_file.MAX_PAYLOAD_BYTES`` and ``MAX_JSON_DEPTH``), refused before
    the payload is written, so that a sealed record never fails verification
    on them.
    """

    READ_ONLY = "read_only"
    NO_SPACE = "no_space"
    FILE_TOO_LARGE = "file_too_large"
    PERMISSION_DENIED = "permission_denied"
    NOT_A_DIRECTORY = "not_a_directory"
    NOT_FOUND = "not_found"
    SYMLINK = "symlink"
    EXISTS = "exists"
    IO_ERROR = "io_error"
    TOO_LARGE = "too_large"
    TOO_DEEP = "too_deep"


_ERRNO_REASONS = {
    errno.EROFS: StorageReason.READ_ONLY,
    errno.ENOSPC: StorageReason.NO_SPACE,
    errno.EDQUOT: StorageReason.NO_SPACE,
    errno.EFBIG: StorageReason.FILE_TOO_LARGE,
    errno.EACCES: StorageReason.PERMISSION_DENIED,
    errno.EPERM: StorageReason.PERMISSION_DENIED,
    errno.ENOTDIR: StorageReason.NOT_A_DIRECTORY,
    errno.ENOENT: StorageReason.NOT_FOUND,
    errno.ELOOP: StorageReason.SYMLINK,
    errno.EEXIST: StorageReason.EXISTS,
}


class EvidenceStorageError(_v1.EvidenceError):
    """The evidence root or a record could not be written.

    The message never contains a path or the operating system's text; the
    ``reason`` says what happened and ``evidence_id`` which record (if one was
    created) is left incomplete.
    """

    def __init__(
        self, reason: StorageReason, *, evidence_id: str | None = None, file: str | None = None
    ) -> None:
        where = f" ({file})" if file else ""
        super().__init__(f"evidence storage unavailable: {reason.value}{where}")
        self.reason = reason
        self.evidence_id = evidence_id
        self.file = file

    @classmethod
    def from_os_error(
        cls, exc: OSError, *, evidence_id: str | None = None, file: str | None = None
    ) -> EvidenceStorageError:
        """Classify *exc* by its error number."""
        reason = _ERRNO_REASONS.get(exc.errno or 0, StorageReason.IO_ERROR)
        return cls(reason, evidence_id=evidence_id, file=file)


class EvidenceValueError(_v1.EvidenceError, ValueError):
    """A value cannot be stored as canonical JSON (NaN, a non-JSON type, a non-string key)."""


@dataclass(frozen=True, slots=True)
class Seal:
    """The result of sealing a record."""

    evidence_id: str
    #: SHA-256 of ``manifest.json``'s bytes, lowercase hex.
    receipt: str
    #: ``ok`` or ``error``: the stored response's ``status``.
    outcome: str


_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(value: Any) -> Any:
    r"""Return *value* with every lone surrogate replaced by U+FFFD.

    Strings that came from JSON can hold a lone surrogate (``"\\ud83d"``),
    which UTF-8 cannot encode. Keys and values are both cleaned; containers
    are rebuilt only on this slow path.
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {
            replace_lone_surrogates(key): replace_lone_surrogates(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [replace_lone_surrogates(item) for item in value]
    if isinstance(value, ParsedJSON):
        return ParsedJSON(replace_lone_surrogates(value.value), value.max_depth)
    return value


class _TooDeep(EvidenceValueError):
    """The value nests deeper than ``verify_file.MAX_JSON_DEPTH`` (or is cyclic)."""


def encode_canonical(value: Any) -> tuple[bytes, Any]:
    """Encode *value* canonically; return the bytes and the value as stored.

    The bytes are ``verify_file.canonical_bytes`` of the value. The returned
    value is *value* itself unless lone surrogates had to be replaced, in
    which case it is the cleaned copy, so that what a caller returns is
    exactly what was stored.

    Raises:
        EvidenceValueError: *value* holds NaN, Infinity, a non-JSON type or a
            non-string key, or nests deeper than ``MAX_JSON_DEPTH`` (64)
            levels. Nothing has been written.
    """
    parts, stored = _encode_parts(value)
    return b"".join(parts), stored


def _encode_parts(value: Any) -> tuple[list[bytes], Any]:
    """Like :func:`encode_canonical`, but the bytes come as the encoder's pieces."""
    try:
        return list(_pieces(value)), value
    except UnicodeEncodeError:
        cleaned = replace_lone_surrogates(value)
        return list(_pieces(cleaned)), cleaned


def _pieces(value: Any) -> Iterator[bytes]:
    """``verify_file.canonical_pieces`` of *value*, its errors as the writer's own."""
    try:
        yield from _v1.canonical_pieces(value)
    except _v1.JSONTooDeep as exc:
        raise _TooDeep(str(exc)) from exc
    except UnicodeEncodeError:
        raise
    except ValueError as exc:
        raise EvidenceValueError("NaN and Infinity are not JSON") from exc
    except TypeError as exc:
        raise EvidenceValueError(str(exc)) from exc
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise EvidenceValueError("value is not JSON") from exc


class _TooLarge(Exception):
    """The payload grew past ``verify_file.MAX_PAYLOAD_BYTES`` while it was written."""


#: Pieces are written in runs of about this many bytes: one ``write`` per
#: piece would cost a system call per work of a page.
_WRITE_STEP = 64 * 1024


# ------------------------------------------------------------ file system

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class _RecordDir:
    """One record directory, written relative to its descriptor on POSIX.

    Without descriptor-relative calls (Windows) names are joined to the path,
    ``os.replace`` renames, and directories are not fsynced because Windows
    cannot open them; NTFS journals the rename itself.
    """

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    def publish(
        self, name: str, parts: Iterable[bytes], *, sync_dir: bool = True, exclusive: bool = False
    ) -> None:
        """Publish *parts* (the file's bytes, read once) atomically as *name*.

        An exception while *parts* are read removes the pending file.

        With ``sync_dir=False`` the rename is left for the next folder fsync
        to make durable: the writer does so for ``provider.json``, whose
        rename the fsync after ``response.json`` covers, since a record
        without a manifest is incomplete whatever payloads survive.

        With ``exclusive=True`` an existing *name* is never replaced: the
        complete file is linked into place (``link`` fails on an existing
        name, where ``rename`` would overwrite it), from a pending name of
        its own so that writers racing for one name never share a file.

        Raises:
            FileExistsError: *exclusive* and *name* already exists; nothing
                was changed.
        """
        pending = name + _v1.PENDING_SUFFIX
        if exclusive:
            pending = f"{name}.{secrets.token_hex(8)}{_v1.PENDING_SUFFIX}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
        if self.fd is not None:
            fd = os.open(pending, flags, 0o600, dir_fd=self.fd)
        else:
            fd = os.open(os.path.join(self.path, pending), flags, 0o600)
        try:
            try:
                for part in parts:
                    view = memoryview(part)
                    while view:
                        written = os.write(fd, view)
                        view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            if exclusive:
                self._link(pending, name)
            elif self.fd is not None:
                os.rename(pending, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
            else:
                os.replace(os.path.join(self.path, pending), os.path.join(self.path, name))
        except BaseException:
            self._discard(pending)
            raise
        if exclusive:
            self._discard(pending)
        if sync_dir:
            self.sync()

    def _link(self, source: str, target: str) -> None:
        if self.fd is not None:
            os.link(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        else:
            os.link(os.path.join(self.path, source), os.path.join(self.path, target))

    def _discard(self, pending: str) -> None:
        try:
            if self.fd is not None:
                os.unlink(pending, dir_fd=self.fd)
            else:
                os.unlink(os.path.join(self.path, pending))
        except OSError:
            pass

    def sync(self) -> None:
        if self.fd is not None:
            os.fsync(self.fd)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def open_private_folder(path: str) -> _RecordDir:
    """Open the folder *path* for publishing, creating it (mode 0700) durably if missing.

    Its parent must exist. A new folder's entry is made durable (the parent
    is fsynced) before anything is published in it; a link in the folder's
    place is refused (``ELOOP``), never followed.

    Raises:
        OSError: The folder cannot be created or opened.
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    else:
        parent = _RecordDir(os.path.dirname(path), None)
        if _v1.USE_DIR_FD:
            parent.fd = os.open(parent.path, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        parent.sync()
        parent.close()
    if not _v1.USE_DIR_FD:
        if os.path.islink(path) or not os.path.isdir(path):
            raise OSError(errno.ELOOP, "not a folder")
        return _RecordDir(path, None)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):  # Linux says ENOTDIR for a link with O_DIRECTORY.
            raise OSError(errno.ELOOP, "a link") from exc
        raise
    return _RecordDir(path, fd)


def _new_evidence_id() -> str:
    """A fresh random evidence ID (32 hex digits); the one place IDs are drawn.

    The golden record tests replace it to write records with fixed IDs.
    """
    return secrets.token_hex(16)


def _make_record_dir(root: str) -> tuple[str, _RecordDir]:
    """Create a fresh record directory with a new random ID; never reuse one."""
    if _v1.USE_DIR_FD:  # read at call time: tests switch it off
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        try:
            for _ in range(16):
                evidence_id = _new_evidence_id()
                try:
                    os.mkdir(evidence_id, 0o700, dir_fd=root_fd)
                except FileExistsError:
                    continue
                fd = os.open(
                    evidence_id, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=root_fd
                )
                os.fsync(root_fd)
                return evidence_id, _RecordDir(os.path.join(root, evidence_id), fd)
        finally:
            os.close(root_fd)
    else:
        for _ in range(16):
            evidence_id = _new_evidence_id()
            path = os.path.join(root, evidence_id)
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            return evidence_id, _RecordDir(path, None)
    raise OSError(errno.EEXIST, "no free evidence ID")


class RecordWriter:
    """Writes one record. Use :meth:`EvidenceStore.create` to get one.

    Payloads are published in the order request, provider, response; then
    :meth:`seal` writes the manifest. Each ``write_*`` method returns the value
    exactly as stored (lone surrogates replaced), which is what a caller
    should return to its own caller.
    """

    def __init__(
        self, evidence_id: str, directory: _RecordDir, on_stage: StageCallback | None
    ) -> None:
        self.evidence_id = evidence_id
        self._dir = directory
        self._on_stage = on_stage
        self._files: dict[str, dict[str, Any]] = {}
        self._outcome: str | None = None
        self._seal: Seal | None = None

    @property
    def path(self) -> Path:
        """The record directory."""
        return Path(self._dir.path)

    @property
    def sealed(self) -> Seal | None:
        """The seal, once :meth:`seal` has succeeded."""
        return self._seal

    def stage(self, stage: Stage) -> None:
        """Report *stage* to the stage callback, if there is one."""
        if self._on_stage is not None:
            self._on_stage(stage, self.evidence_id)

    def _publish(self, name: str, value: Any, *, sync_dir: bool = True) -> Any:
        """Encode *value* once, writing, counting and hashing the same bytes as they come.

        The payload is never held whole: a page's pieces are written as they
        are encoded. A value refused on the way (too deep, too large, not
        JSON) leaves no file behind; a lone surrogate restarts the write with
        the value cleaned.
        """
        if name in self._files or self._seal is not None:
            raise RuntimeError(f"{name} was already written")
        try:
            try:
                self._files[name] = self._write(name, value, sync_dir=sync_dir)
            except UnicodeEncodeError:
                value = replace_lone_surrogates(value)
                self._files[name] = self._write(name, value, sync_dir=sync_dir)
        except _TooDeep as exc:
            raise EvidenceStorageError(
                StorageReason.TOO_DEEP, evidence_id=self.evidence_id, file=name
            ) from exc
        except _TooLarge as exc:
            raise EvidenceStorageError(
                StorageReason.TOO_LARGE, evidence_id=self.evidence_id, file=name
            ) from exc
        except OSError as exc:
            raise EvidenceStorageError.from_os_error(
                exc, evidence_id=self.evidence_id, file=name
            ) from exc
        return value

    def _write(self, name: str, value: Any, *, sync_dir: bool) -> dict[str, Any]:
        digest = hashlib.sha256()
        size = 0

        def runs() -> Iterator[bytes]:
            nonlocal size
            run = bytearray()
            for piece in _pieces(value):
                size += len(piece)
                if size > _v1.MAX_PAYLOAD_BYTES:
                    raise _TooLarge
                digest.update(piece)
                run += piece
                if len(run) >= _WRITE_STEP:
                    yield bytes(run)
                    run.clear()
            yield bytes(run)

        self._dir.publish(name, runs(), sync_dir=sync_dir)
        return {"bytes": size, "sha256": digest.hexdigest()}

    def write_request(self, value: Any) -> Any:
        """Publish ``request.json``; written before any provider call.

        Raises:
            EvidenceValueError: *value* cannot be stored as canonical JSON.
            EvidenceStorageError: Writing failed, or the payload passes a
                format limit (``too_large``, ``too_deep``); nothing of it was
                written and the record stays incomplete.
        """
        self.stage(Stage.BEFORE_REQUEST)
        stored = self._publish("request.json", value)
        self.stage(Stage.AFTER_REQUEST)
        return stored

    def write_provider(self, value: Any) -> Any:
        """Publish ``provider.json``, the provider observation."""
        stored = self._publish("provider.json", value, sync_dir=False)
        self.stage(Stage.AFTER_PROVIDER)
        return stored

    def write_response(self, value: Any) -> Any:
        """Publish ``response.json``; its ``status`` becomes the manifest's ``outcome``."""
        status = value.get("status") if isinstance(value, dict) else None
        if status not in ("ok", "error"):
            raise EvidenceValueError('response status must be "ok" or "error"')
        stored = self._publish("response.json", value)
        self._outcome = status
        self.stage(Stage.AFTER_RESPONSE)
        return stored

    def seal(self) -> Seal:
        """Write ``manifest.json`` and return the receipt once it is durable."""
        if self._seal is not None:
            return self._seal
        missing = [name for name in _v1.PAYLOADS if name not in self._files]
        if missing or self._outcome is None:
            raise RuntimeError(f"cannot seal before writing {', '.join(missing)}")
        manifest = {
            "evidence_id": self.evidence_id,
            "files": {name: self._files[name] for name in _v1.PAYLOADS},
            "outcome": self._outcome,
            "schema_version": _v1.SCHEMA_VERSION,
            "status": "complete",
        }
        self.stage(Stage.BEFORE_MANIFEST)
        data = _v1.canonical_bytes(manifest)
        try:
            self._dir.publish(_v1.MANIFEST, [data])
        except OSError as exc:
            raise EvidenceStorageError.from_os_error(
                exc, evidence_id=self.evidence_id, file=_v1.MANIFEST
            ) from exc
        self._seal = Seal(self.evidence_id, hashlib.sha256(data).hexdigest(), self._outcome)
        self.stage(Stage.AFTER_MANIFEST)
        self.close()
        return self._seal

    def close(self) -> None:
        """Release the directory descriptor; an unsealed record stays incomplete."""
        self._dir.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EvidenceStore:
    """An evidence root: one directory per record, plus the reserved ``.notanda/``.

    Args:
        root: The evidence root. It must exist; the store never creates it,
            so a mistyped path fails loudly instead of scattering records.
        on_stage: Called with ``(stage, evidence_id)`` at each write stage.
    """

    def __init__(self, root: str | os.PathLike[str], *, on_stage: StageCallback | None = None):
        self.root = Path(root)
        self.on_stage = on_stage

    def create(self) -> RecordWriter:
        """Create a new record directory with a fresh, never reused ID.

        Raises:
            EvidenceStorageError: The root is missing, not a directory, read-only
                or full. Nothing was created.
        """
        try:
            evidence_id, directory = _make_record_dir(os.fspath(self.root))
        except OSError as exc:
            raise EvidenceStorageError.from_os_error(exc) from exc
        return RecordWriter(evidence_id, directory, self.on_stage)

    def open(
        self, evidence_id: object, receipt: object = None, *, full: bool = False
    ) -> _v1.RecordResult:
        """Verify and read one record by ID; see :func:`notanda_evidence.open_record`."""
        return _v1.open_record(self.root, evidence_id, receipt, full=full)
