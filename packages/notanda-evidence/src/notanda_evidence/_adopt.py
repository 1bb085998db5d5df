"""Adopt and prune: the two operations that append records' fates to the log.

Adoption logs sealed, intact records that have no entry yet; pruning logs a
tombstone before it deletes a record. Neither ever rewrites a record's files,
and each decides every record again under the log's lock.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ._log import EntryType, EvidenceLog, Head, parse_log, read_log
from ._store import EvidenceStorageError
from .verify_file import (
    RESERVED_DIR,
    Outcome,
    RecordResult,
    is_evidence_id,
    printable,
    record_ids,
    verify_record,
    verify_root,
)

__all__ = ["INCOMPLETE_MIN_AGE_S", "AdoptReport", "adopt", "prune"]

#: ``adopt`` leaves alone incomplete records touched more recently than this:
#: they may still be being written. It is notanda-mcp's longest tool deadline
#: (a reference check's 60 s; a search's is 20 s) plus its shutdown grace
#: (2 s); a writer that outlives it has given up on the record. ``--min-age``
#: overrides it.
INCOMPLETE_MIN_AGE_S = 62.0


def _latest_entries(root: Path) -> dict[str, EntryType]:
    data, _ = read_log(root)
    entries, _, _ = parse_log(data)
    latest: dict[str, EntryType] = {}
    for entry in entries:
        latest[entry.evidence_id] = entry.type
    return latest


@dataclass(frozen=True, slots=True)
class AdoptReport:
    """What ``adopt`` did: records adopted, refused and why, and left alone."""

    adopted: tuple[tuple[str, int], ...]
    refused: tuple[tuple[str, Outcome], ...]
    head: Head | None
    #: Incomplete records younger than the minimum age: perhaps still being written.
    left: tuple[str, ...] = ()


def _is_decided(latest: EntryType | None) -> bool:
    """Whether the log already speaks for a record: sealed, adopted or tombstoned.

    A tombstoned record whose folder survived its pruning is not adopted again:
    that would revive it. ``prune`` it again to delete the folder.
    """
    return latest is not None


def adopt(
    root: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    min_age_s: float = INCOMPLETE_MIN_AGE_S,
) -> AdoptReport:
    """Log every sealed, intact record that has no log entry, as ``adopted``.

    Such records were written before the log existed (notanda-mcp 0.1.0b3's
    included) or their append never happened. They are ordered by the time
    their request states, then by ID; their position only proves that they
    existed when they were adopted. Records that fail verification are
    refused; incomplete records touched within *min_age_s* are left alone.

    Each record, adopted or refused, is decided again under the log's lock,
    with the log re-read and the record re-verified, so that beside servers,
    other ``adopt`` and ``prune`` runs no record is logged twice, no pruned
    record is revived, and a record a server logged or a ``prune`` deleted
    meanwhile (perhaps half-way through the first look) is not refused.

    Raises:
        EvidenceLogError: The log cannot be read or appended to.
    """
    base = Path(root)
    latest = _latest_entries(base)
    candidates: list[tuple[str, str, str | None]] = []
    suspects: list[tuple[str, Outcome]] = []
    left: list[str] = []
    for evidence_id in record_ids(base):
        if _is_decided(latest.get(evidence_id)):
            continue
        result = verify_record(base / evidence_id)
        if _young_incomplete(base, result, min_age_s):
            left.append(evidence_id)
        elif result.outcome is not Outcome.OK:
            suspects.append((result.evidence_id, result.outcome))
        else:
            candidates.append(_candidate(result))
    if dry_run:
        candidates.sort(key=lambda item: (item[0], item[1]))
        would = tuple((evidence_id, -1) for _, evidence_id, _ in candidates)
        return AdoptReport(would, tuple(suspects), None, tuple(left))
    adopted: list[tuple[str, int]] = []
    refused: list[tuple[str, Outcome]] = []
    head: Head | None = None
    log = EvidenceLog(base)
    for evidence_id, _ in suspects:
        with log.transaction() as locked:
            if _is_decided(locked.latest(evidence_id)):
                continue  # A server logged it (or a prune tombstoned it) meanwhile.
            result = verify_record(base / evidence_id)
        if result.outcome is Outcome.NOT_FOUND:
            continue  # Pruned meanwhile.
        if _young_incomplete(base, result, min_age_s):
            left.append(evidence_id)
        elif result.outcome is Outcome.OK:
            candidates.append(_candidate(result))
        else:
            refused.append((evidence_id, result.outcome))
    candidates.sort(key=lambda item: (item[0], item[1]))
    for _, evidence_id, receipt in candidates:
        with log.transaction() as locked:
            if _is_decided(locked.latest(evidence_id)):
                continue  # A server or another adopt logged it meanwhile.
            if verify_record(base / evidence_id, receipt).outcome is not Outcome.OK:
                continue  # Pruned (or changed) meanwhile: nothing to adopt.
            appended = locked.append(evidence_id, receipt, EntryType.ADOPTED)
        adopted.append((evidence_id, appended.entry.index))
        head = appended.head
    return AdoptReport(tuple(adopted), tuple(refused), head, tuple(left))


def _candidate(result: RecordResult) -> tuple[str, str, str | None]:
    """A record to adopt, as its sort key (``requested_at``, then ID) and receipt."""
    requested = (result.request or {}).get("requested_at")
    return (requested if isinstance(requested, str) else "", result.evidence_id, result.receipt)


def _young_incomplete(base: Path, result: RecordResult, min_age_s: float) -> bool:
    return result.outcome is Outcome.INCOMPLETE and (
        _record_age_s(base / result.evidence_id) < min_age_s
    )


def _record_age_s(path: Path) -> float:
    """Seconds since the record's folder or a file in it last changed (0 if unreadable)."""
    try:
        newest = path.lstat().st_mtime
        for child in path.iterdir():
            newest = max(newest, child.lstat().st_mtime)
    except OSError:
        return 0.0
    return time.time() - newest


def prune(
    root: str | os.PathLike[str],
    evidence_ids: Sequence[str] = (),
    *,
    reason: str,
    incomplete_older_than_s: float | None = None,
    dry_run: bool = False,
) -> list[tuple[str, int]]:
    """Delete records, each only after a tombstone for it is durably logged.

    Each record is decided again under the log's lock (it still exists; an
    incomplete one is still incomplete and still old enough), and its
    tombstone and deletion happen under that lock, so that beside servers,
    ``adopt`` and other ``prune`` runs nothing is pruned twice or revived.

    Args:
        root: The evidence root.
        evidence_ids: Records to delete, sealed or not.
        reason: Why, stored in each tombstone (printable, at most 200 characters).
        incomplete_older_than_s: Also delete every incomplete record untouched
            for this long (a younger one may still be being written).
        dry_run: Say what would be deleted, change nothing.

    Returns:
        ``(evidence_id, tombstone index)`` per deleted record (-1 when dry).

    Raises:
        ValueError: A bad ID, an unknown record, or a bad reason.
        EvidenceLogError: The log cannot be read or appended to.
        EvidenceStorageError: A record could not be deleted after its tombstone.
    """
    if not reason.strip() or len(reason) > 200 or not reason.isprintable():
        raise ValueError("the reason must be printable text of 1 to 200 characters")
    base = Path(root)
    targets: dict[str, bool] = {}  # evidence ID -> only because it is old and incomplete
    for evidence_id in evidence_ids:
        if not is_evidence_id(evidence_id):
            raise ValueError(f"not an evidence ID: {printable(evidence_id)}")
        if verify_record(base / evidence_id).outcome is Outcome.NOT_FOUND:
            raise ValueError(f"no record {evidence_id}")
        targets[evidence_id] = False
    if incomplete_older_than_s is not None:
        for result in verify_root(base).records:
            if result.outcome is Outcome.INCOMPLETE and (
                _record_age_s(base / result.evidence_id) >= incomplete_older_than_s
            ):
                targets.setdefault(result.evidence_id, True)
    if dry_run:
        return [(evidence_id, -1) for evidence_id in sorted(targets)]
    done: list[tuple[str, int]] = []
    log = EvidenceLog(base)
    for evidence_id, stale_only in sorted(targets.items()):
        path = base / evidence_id
        with log.transaction() as locked:
            result = verify_record(path)
            if result.outcome is Outcome.NOT_FOUND:
                continue  # Another prune got there first.
            if stale_only and (
                result.outcome is not Outcome.INCOMPLETE
                or _record_age_s(path) < (incomplete_older_than_s or 0.0)
            ):
                continue  # Its writer sealed or touched it meanwhile.
            appended = locked.append(
                evidence_id, result.receipt, EntryType.TOMBSTONE, reason=reason
            )
            try:
                _remove_record(path)
            except OSError as exc:
                raise EvidenceStorageError.from_os_error(exc, evidence_id=evidence_id) from exc
        done.append((evidence_id, appended.entry.index))
    return done


def _remove_record(path: Path) -> None:
    """Remove a record folder in one step readers can see: present, or not found.

    The folder is first renamed into ``.notanda/`` (``pruning-<id>``), then
    deleted there, so that nothing reading the root beside a prune (``adopt``,
    ``audit``, a server's ``get_evidence``) ever sees a half-deleted record and
    calls it an integrity failure. Leftovers of an interrupted prune (each
    renamed only after its tombstone was durable) are deleted first.
    """
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    reserved = path.parent / RESERVED_DIR
    for leftover in reserved.glob("pruning-*"):
        shutil.rmtree(leftover)
    aside = reserved / f"pruning-{path.name}"
    os.rename(path, aside)
    shutil.rmtree(aside)
