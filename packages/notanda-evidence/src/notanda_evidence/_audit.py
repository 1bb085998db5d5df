"""Whole-collection audit: every record, the log, and how they agree.

``audit`` verifies each record (the default pass), parses the log strictly,
checks its index sequence, its chain of previous-line hashes and its Merkle
head, and joins the two: a logged record that is gone without a tombstone, a
record whose receipt differs from the logged one, a record logged twice, a
sealed record missing from the log. Given a head someone kept, it also proves
by an RFC 9162 consistency proof that today's log extends it. The RFC 3161
tokens stored beside the log are checked against it by :mod:`._timestamp_audit`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from . import _merkle
from ._log import (
    MAX_LOG_BYTES,
    EntryType,
    EvidenceLogError,
    Head,
    LogCode,
    LogEntry,
    LogReason,
    log_finding,
    parse_log,
    read_log,
)
from ._pool import records_verifier
from ._runs import RunTracker
from ._timestamp_audit import TimestampAudit, audit_timestamps
from ._timestamps import TIMESTAMPS_DIR
from .verify_file import (
    Finding,
    Outcome,
    RecordResult,
    Severity,
    collection_paused,
    exit_code,
    verify_root,
)

__all__ = ["AuditResult", "LogStatus", "audit", "check_head", "timestamps_folder"]


class LogStatus(StrEnum):
    """What the log says of one record (``log_status`` in the ``--json`` report)."""

    LOGGED = "logged"
    ADOPTED = "adopted"
    UNLOGGED = "unlogged"
    TOMBSTONED = "tombstoned"


#: Findings that mean "not tampering, but not finished": exit code 3.
_INCOMPLETE = frozenset({LogCode.TAIL_TORN, LogCode.RECORD_UNLOGGED, LogCode.MISSING})


@dataclass(frozen=True, slots=True)
class AuditResult:
    """Everything ``audit`` found."""

    records: tuple[RecordResult, ...]
    root_findings: tuple[Finding, ...]
    log_findings: tuple[Finding, ...]
    entries: tuple[LogEntry, ...]
    head: Head
    #: Per record: ``logged``, ``adopted``, ``unlogged`` or ``tombstoned``.
    log_status: dict[str, LogStatus] = field(default_factory=dict)
    #: The stored time-stamp tokens; None when the log could not be read to check them.
    timestamps: TimestampAudit | None = None

    @property
    def exit_code(self) -> int:
        """0 intact; 1 any failure; 3 only incomplete, unlogged or a token unchecked."""
        records = exit_code(self.records)
        log_errors = [f for f in self.log_findings if f.severity is Severity.ERROR]
        stamps = self.timestamps
        if (
            records == 1
            or any(f.code not in _INCOMPLETE for f in log_errors)
            or (stamps is not None and stamps.failed)
        ):
            return 1
        if records == 3 or log_errors or (stamps is not None and stamps.unchecked):
            return 3
        return 0


def _read_log_finding(exc: EvidenceLogError) -> Finding:
    if exc.reason == LogReason.TOO_LARGE:
        return log_finding(LogCode.TOO_LARGE, detail=f"the log is over {MAX_LOG_BYTES} bytes")
    return log_finding(LogCode.UNREADABLE, detail=str(exc.reason))


def check_head(held: Head, leaves: Sequence[bytes]) -> Finding:
    """Prove that the log extends a head someone kept, or say how it does not."""
    size = len(leaves)
    if held.size > size:
        return log_finding(
            LogCode.HEAD_TRUNCATED,
            detail=f"the held head has {held.size} entries, the log only {size}",
        )
    current = _merkle.root_of(leaves)
    proof = _merkle.consistency_proof(leaves, held.size)
    if not _merkle.verify_consistency(held.size, size, bytes.fromhex(held.root), current, proof):
        return log_finding(
            LogCode.HEAD_MISMATCH, detail=f"the first {held.size} entries were rewritten"
        )
    return log_finding(
        LogCode.HEAD_CONSISTENT,
        detail=f"the log extends the held head of {held.size} entries",
        severity=Severity.INFO,
    )


def _join(
    records: Iterable[RecordResult], entries: Sequence[LogEntry], log_exists: bool
) -> tuple[list[Finding], dict[str, LogStatus]]:
    findings: list[Finding] = []
    status: dict[str, LogStatus] = {}
    by_id = {record.evidence_id: record for record in records}
    logged: dict[str, LogEntry] = {}
    tombstoned: dict[str, LogEntry] = {}
    for entry in entries:
        if entry.type is EntryType.TOMBSTONE:
            tombstoned[entry.evidence_id] = entry
            continue
        if entry.evidence_id in logged and entry.evidence_id not in tombstoned:
            findings.append(log_finding(LogCode.DUPLICATE_ENTRY, entry.evidence_id, entry.index))
            continue
        logged[entry.evidence_id] = entry
        tombstoned.pop(entry.evidence_id, None)
    for evidence_id, entry in logged.items():
        if evidence_id in tombstoned:
            continue
        record = by_id.get(evidence_id)
        if record is None:
            findings.append(
                log_finding(
                    LogCode.RECORD_MISSING,
                    evidence_id,
                    entry.index,
                    "logged, no tombstone, and the folder is gone",
                )
            )
            continue
        if record.receipt != entry.receipt:
            detail = (
                "the record is no longer sealed"
                if record.receipt is None
                else "the record was replaced after it was logged"
            )
            findings.append(log_finding(LogCode.RECEIPT_MISMATCH, evidence_id, entry.index, detail))
        status[evidence_id] = (
            LogStatus.ADOPTED if entry.type is EntryType.ADOPTED else LogStatus.LOGGED
        )
        if entry.type is EntryType.ADOPTED:
            findings.append(
                log_finding(LogCode.ADOPTED, evidence_id, entry.index, severity=Severity.INFO)
            )
    for evidence_id, entry in tombstoned.items():
        status[evidence_id] = LogStatus.TOMBSTONED
        findings.append(
            log_finding(
                LogCode.TOMBSTONED, evidence_id, entry.index, entry.reason, severity=Severity.INFO
            )
        )
        if evidence_id in by_id:
            findings.append(
                log_finding(
                    LogCode.TOMBSTONE_PRESENT,
                    evidence_id,
                    entry.index,
                    "pruned, but the folder is still there",
                    severity=Severity.WARNING,
                )
            )
    for evidence_id, record in by_id.items():
        if evidence_id in status or record.receipt is None or record.outcome is Outcome.INCOMPLETE:
            continue
        status[evidence_id] = LogStatus.UNLOGGED
        findings.append(
            log_finding(
                LogCode.RECORD_UNLOGGED, evidence_id, detail="sealed but not in the log; adopt it"
            )
        )
    if not log_exists and any(s is LogStatus.UNLOGGED for s in status.values()):
        findings.append(
            log_finding(LogCode.MISSING, detail="no log yet; sealed records can be adopted")
        )
    return findings, status


def timestamps_folder(root: str | os.PathLike[str]) -> Path:
    """Where the tokens of *root* live: ``.notanda/timestamps``, in a bag ``notanda/timestamps``."""
    bag = Path(root)
    if (bag / "bagit.txt").is_file() and (bag / "data").is_dir():
        return bag / "notanda" / "timestamps"
    return bag / TIMESTAMPS_DIR


def audit(
    root: str | os.PathLike[str],
    *,
    held: Head | None = None,
    tsa_ca: str | os.PathLike[str] | None = None,
    jobs: int = 1,
) -> AuditResult:
    """Audit an evidence root: every record, the log, the held head if given, the tokens.

    *root* may also be a bag made by ``export --bagit``: its ``data/`` folder
    is audited against the log in ``notanda/log.jsonl``. *jobs* processes
    verify the records (``--jobs``); the result is the same for any number.

    Each stored time-stamp token is checked against the log; with *tsa_ca* (a
    PEM bundle) its signature chain too, by ``openssl ts -verify``.

    A log that cannot be read (a link, not a regular file, over
    :data:`MAX_LOG_BYTES`) is a finding, ``log.unreadable`` or
    ``log.too_large``; the records are still reported.
    """
    bag = Path(root)
    runs = RunTracker()  # the parts of checked bibliographies (_runs.py)
    verify_many = runs.verifier(records_verifier(jobs))
    with collection_paused():
        if (bag / "bagit.txt").is_file() and (bag / "data").is_dir():
            verified = verify_root(bag / "data", verify_many=verify_many)
            log_path: Path | None = bag / "notanda" / "log.jsonl"
        else:
            verified = verify_root(root, verify_many=verify_many)
            log_path = None
        try:
            data, exists = read_log(root, log_path=log_path)
        except EvidenceLogError as exc:
            data, exists, unread = b"", True, [_read_log_finding(exc)]
        else:
            unread = []
        entries, leaves, findings = parse_log(data)
        findings[:0] = unread
    findings.extend(runs.findings())
    status: dict[str, LogStatus] = {}
    if not unread:  # Unread, the log can neither vouch for records nor accuse them.
        join_findings, status = _join(verified.records, entries, exists)
        findings.extend(join_findings)
        if held is not None:
            findings.append(check_head(held, leaves))
    # Unread, the log has no heads to check a token against.
    stamps = None if unread else audit_timestamps(timestamps_folder(root), leaves, ca_file=tsa_ca)
    head = Head(len(leaves), _merkle.root_of(leaves).hex())
    return AuditResult(
        records=verified.records,
        root_findings=verified.findings,
        log_findings=tuple(findings),
        entries=tuple(entries),
        head=head,
        log_status=status,
        timestamps=stamps,
    )
