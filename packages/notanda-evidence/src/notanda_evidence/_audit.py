"""Whole-collection audit: every record, the log, and how they agree.

``audit`` verifies each record (the default pass), parses the log strictly,
checks its index sequence, its chain of previous-line hashes and its Merkle
head, and joins the two: a logged record that is gone without a tombstone, a
record whose receipt differs from the logged one, a record logged twice, a
sealed record missing from the log. Given a head someone kept, it also proves
that today's log extends it. The RFC 3161 tokens stored beside the log are
checked against it by :mod:`._timestamp_audit`.

The audit streams (:class:`AuditRun`): the root is listed once (its record
IDs packed, 16 bytes each), the log is read line by line twice at most (once
before the records, for what the log says of each; the findings it gives
are kept on disk, not in memory, until they are reported), and each record is
verified, reported and dropped in turn. What stays in memory per record is a
few dozen bytes: its packed ID, what the log says of it (a flag byte, the
logged receipt, the index of the entry that logged it) and its place in the
log's order; log entries whose record folder is gone (pruned, or missing)
are kept by ID in a dict. :func:`audit` collects a run into one
:class:`AuditResult` for callers that want every object.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import IO

from . import _merkle
from ._log import (
    MAX_LOG_BYTES,
    EntryType,
    EvidenceLogError,
    Head,
    LogCode,
    LogEntry,
    LogReader,
    LogReason,
    LogScanner,
    log_finding,
)
from ._pool import records_verifier
from ._runs import RunTracker
from ._timestamp_audit import TimestampAudit, audit_timestamps, token_sizes
from ._timestamps import TIMESTAMPS_DIR
from .verify_file import (
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_OK,
    Finding,
    Outcome,
    RecordIds,
    RecordResult,
    Severity,
    Tally,
    collection_paused,
    exit_code,
    iter_root,
    scan_root,
)

__all__ = [
    "AuditResult",
    "AuditRun",
    "LogStatus",
    "audit",
    "check_head",
    "head_finding",
    "timestamps_folder",
]


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
        return audit_exit_code(exit_code(self.records), self.log_findings, self.timestamps)


def audit_exit_code(
    records: int, log_findings: Iterable[Finding], stamps: TimestampAudit | None
) -> int:
    """The audit's exit code from the records' own, the log's findings and the tokens'."""
    log_errors = [f for f in log_findings if f.severity is Severity.ERROR]
    if (
        records == EXIT_FAILED
        or any(f.code not in _INCOMPLETE for f in log_errors)
        or (stamps is not None and stamps.failed)
    ):
        return EXIT_FAILED
    if records == EXIT_INCOMPLETE or log_errors or (stamps is not None and stamps.unchecked):
        return EXIT_INCOMPLETE
    return EXIT_OK


def _read_log_finding(exc: EvidenceLogError) -> Finding:
    if exc.reason == LogReason.TOO_LARGE:
        return log_finding(LogCode.TOO_LARGE, detail=f"the log is over {MAX_LOG_BYTES} bytes")
    return log_finding(LogCode.UNREADABLE, detail=str(exc.reason))


def head_finding(held: Head, size: int, prefix_root: bytes | None) -> Finding:
    """Whether a log of *size* entries extends a head someone kept, or how it does not.

    *prefix_root* is the root of the log's first ``held.size`` entries (None
    when the log is shorter). The log extends the held head exactly when
    that root is the held one (an RFC 9162 consistency proof between the two
    heads verifies exactly then); any log extends the empty tree.
    """
    if held.size > size or prefix_root is None:
        return log_finding(
            LogCode.HEAD_TRUNCATED,
            detail=f"the held head has {held.size} entries, the log only {size}",
        )
    extends = (held.size == 0 and size > 0) or prefix_root == bytes.fromhex(held.root)
    if not extends:
        return log_finding(
            LogCode.HEAD_MISMATCH, detail=f"the first {held.size} entries were rewritten"
        )
    return log_finding(
        LogCode.HEAD_CONSISTENT,
        detail=f"the log extends the held head of {held.size} entries",
        severity=Severity.INFO,
    )


def check_head(held: Head, leaves: Sequence[bytes]) -> Finding:
    """Whether the log whose leaf hashes are *leaves* extends a held head (:func:`head_finding`)."""
    return head_finding(held, len(leaves), _merkle.prefix_roots(leaves, [held.size]).get(held.size))


# -------------------------------------------------------------- the stream

#: What the log says of one evidence ID, a bit each (:class:`_Join`).
_LOGGED = 1  # a sealed or adopted entry names it (the log's ``logged`` set)
_TOMBSTONED = 2  # its last event is a tombstone
_ADOPTED = 4  # the entry that logged it last is an adoption
_UNSEALED = 8  # logged, but its folder has no manifest now
_REPLACED = 16  # logged, but its receipt is not the logged one
_UNLOGGED = 32  # sealed, and the log has never named it
#: Findings kept in memory before a spool moves them to a temporary file.
_SPOOL_IN_MEMORY = 1024


class _Spool:
    """Findings kept in order to be reported later: in memory while few, on disk after."""

    def __init__(self) -> None:
        self._held: list[Finding] = []
        self._file: IO[bytes] | None = None

    def add(self, finding: Finding) -> None:
        if self._file is None and len(self._held) < _SPOOL_IN_MEMORY:
            self._held.append(finding)
            return
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by __iter__
        pickle.dump(finding, self._file, protocol=pickle.HIGHEST_PROTOCOL)

    def __iter__(self) -> Iterator[Finding]:
        yield from self._held
        self._held = []
        spilled, self._file = self._file, None
        if spilled is None:
            return
        with spilled:
            spilled.seek(0)
            while True:
                try:
                    # Only this process wrote the file, from Finding objects.
                    yield pickle.load(spilled)  # noqa: S301
                except EOFError:
                    return


class _Join:
    """What the log says of each record, built one entry at a time in log order.

    The rules of the join, entry by entry: a tombstone marks its ID
    tombstoned; a sealed or adopted entry for an ID already logged and not
    tombstoned since is a duplicate (reported, otherwise ignored); any other
    one logs the ID (again, after a tombstone) and clears the tombstone. IDs
    are reported in the order the log first logged them, tombstones in the
    order their last run of tombstones began.

    IDs with a record folder live in flat arrays beside the root's packed
    IDs; the others (a record pruned or gone) in :attr:`absent`.
    """

    def __init__(self, ids: RecordIds) -> None:
        self.ids = ids
        count = len(ids)
        self.flags = bytearray(count)
        #: The line position of the entry that logged each ID last.
        self.logged_at = array("q", bytes(8 * count))
        #: The receipt that entry holds (records only).
        self.receipts = bytearray(32 * count)
        #: Absent IDs: packed ID -> ref (``len(ids) + k``); their IDs in ref order.
        self.absent: dict[bytes, int] = {}
        self.absent_ids: list[str] = []
        #: Entry index by line position, where an entry's index is not its position.
        self.odd_index: dict[int, int] = {}
        #: Refs in the order the log first logged them.
        self.logged_order = array("q")
        #: Refs in the order their runs of tombstones began.
        self.tomb_order = array("q")
        #: Per tombstoned ref: its last tombstone's position and reason, and
        #: where in :attr:`tomb_order` its last run began.
        self.tombs: dict[int, tuple[int, str | None, int]] = {}

    def _ref(self, evidence_id: str) -> int:
        position = self.ids.position(evidence_id)
        if position is not None:
            return position
        key = bytes.fromhex(evidence_id)
        ref = self.absent.get(key)
        if ref is None:
            ref = len(self.ids) + len(self.absent_ids)
            self.absent[key] = ref
            self.absent_ids.append(evidence_id)
            self.flags.append(0)
            self.logged_at.append(0)
        return ref

    def evidence_id(self, ref: int) -> str:
        count = len(self.ids)
        return self.ids[ref] if ref < count else self.absent_ids[ref - count]

    def index(self, position: int) -> int:
        """The index the entry at line *position* states."""
        return self.odd_index.get(position, position)

    def feed(self, entry: LogEntry, position: int) -> Finding | None:
        """Take one parsed entry at line *position*; return a duplicate's finding."""
        if entry.index != position:
            self.odd_index[position] = entry.index
        ref = self._ref(entry.evidence_id)
        flags = self.flags[ref]
        if entry.type is EntryType.TOMBSTONE:
            if not flags & _TOMBSTONED:
                self.tomb_order.append(ref)
                run = len(self.tomb_order) - 1
            else:
                run = self.tombs[ref][2]
            self.tombs[ref] = (position, entry.reason, run)
            self.flags[ref] = flags | _TOMBSTONED
            return None
        if flags & _LOGGED and not flags & _TOMBSTONED:
            return log_finding(LogCode.DUPLICATE_ENTRY, entry.evidence_id, entry.index)
        if not flags & _LOGGED:
            self.logged_order.append(ref)
        adopted = _ADOPTED if entry.type is EntryType.ADOPTED else 0
        self.flags[ref] = (flags & ~(_TOMBSTONED | _ADOPTED)) | _LOGGED | adopted
        self.logged_at[ref] = position
        if ref < len(self.ids) and entry.receipt is not None:
            self.receipts[32 * ref : 32 * ref + 32] = bytes.fromhex(entry.receipt)
        return None

    def record(self, position: int, record: RecordResult) -> LogStatus | None:
        """What the log says of the record at *position* in the root's order; note mismatches."""
        flags = self.flags[position]
        if flags & _TOMBSTONED:
            return LogStatus.TOMBSTONED
        if flags & _LOGGED:
            if record.receipt is None:
                self.flags[position] = flags | _UNSEALED
            elif bytes.fromhex(record.receipt) != self.receipts[32 * position : 32 * position + 32]:
                self.flags[position] = flags | _REPLACED
            return LogStatus.ADOPTED if flags & _ADOPTED else LogStatus.LOGGED
        if record.receipt is None or record.outcome is Outcome.INCOMPLETE:
            return None
        self.flags[position] = flags | _UNLOGGED
        return LogStatus.UNLOGGED

    def findings(self, log_exists: bool) -> Iterator[Finding]:
        """The join's findings after every record was seen, in the report's order."""
        count = len(self.ids)
        for ref in self.logged_order:
            flags = self.flags[ref]
            if flags & _TOMBSTONED:
                continue
            evidence_id, index = self.evidence_id(ref), self.index(self.logged_at[ref])
            if ref >= count:
                detail = "logged, no tombstone, and the folder is gone"
                yield log_finding(LogCode.RECORD_MISSING, evidence_id, index, detail)
                continue
            if flags & (_UNSEALED | _REPLACED):
                detail = (
                    "the record is no longer sealed"
                    if flags & _UNSEALED
                    else "the record was replaced after it was logged"
                )
                yield log_finding(LogCode.RECEIPT_MISMATCH, evidence_id, index, detail)
            if flags & _ADOPTED:
                yield log_finding(LogCode.ADOPTED, evidence_id, index, severity=Severity.INFO)
        for run, ref in enumerate(self.tomb_order):
            position, reason, last_run = self.tombs[ref]
            if last_run != run or not self.flags[ref] & _TOMBSTONED:
                continue
            evidence_id, index = self.evidence_id(ref), self.index(position)
            yield log_finding(
                LogCode.TOMBSTONED, evidence_id, index, reason, severity=Severity.INFO
            )
            if ref < count:
                yield log_finding(
                    LogCode.TOMBSTONE_PRESENT,
                    evidence_id,
                    index,
                    "pruned, but the folder is still there",
                    severity=Severity.WARNING,
                )
        unlogged = False
        for position in range(count):
            if self.flags[position] & _UNLOGGED:
                unlogged = True
                yield log_finding(
                    LogCode.RECORD_UNLOGGED,
                    self.ids[position],
                    detail="sealed but not in the log; adopt it",
                )
        if not log_exists and unlogged:
            yield log_finding(LogCode.MISSING, detail="no log yet; sealed records can be adopted")

    def tombstoned_absent(self) -> Iterator[str]:
        """The IDs the log tombstoned whose folder is gone (they have a status, not a record)."""
        count = len(self.ids)
        for ref in range(count, count + len(self.absent_ids)):
            if self.flags[ref] & _TOMBSTONED:
                yield self.absent_ids[ref - count]


class AuditRun:
    """One audit, streamed: the records one by one, then the log's findings, then the tokens.

    Use as a context manager, and read :meth:`records` to the end before
    :meth:`log_findings` and :meth:`timestamps`. Opening lists the root and
    reads the log once (a log that cannot be read is a finding, ``unread``).

    Each record's request and response are dropped after it is verified,
    unless *keep_payloads* asks for them (``RecordResult.request``): the place
    for a check fed one record at a time is the loop in :meth:`records`.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        held: Head | None = None,
        tsa_ca: str | os.PathLike[str] | None = None,
        jobs: int = 1,
        keep_entries: bool = False,
        keep_payloads: bool = False,
    ) -> None:
        self.root = Path(root)
        self.held = held
        self.tsa_ca = tsa_ca
        self.keep_payloads = keep_payloads
        self._verify_many = records_verifier(jobs)
        bag = self.root
        if (bag / "bagit.txt").is_file() and (bag / "data").is_dir():
            self.records_root: Path = bag / "data"
            log_path: Path | None = bag / "notanda" / "log.jsonl"
        else:
            self.records_root, log_path = self.root, None
        self._paused = collection_paused()
        self._paused.__enter__()
        try:
            self.ids, self.root_findings = scan_root(self.records_root)
            self.join = _Join(self.ids)
            self.tally = Tally()
            #: The parts of checked bibliographies, fed one record at a time.
            self.runs = RunTracker()
            #: The parsed entries, with *keep_entries* (for :class:`AuditResult`).
            self.entries: list[LogEntry] = []
            self.entry_count = 0
            self.unread: list[Finding] = []
            self._decisive: dict[bool, Finding] = {}
            self.log_exists = True
            self._parse_findings = _Spool()
            self._duplicates = _Spool()
            self._stamp_sizes = token_sizes(timestamps_folder(self.root))
            self._roots: dict[int, bytes] = {}
            self.log_size = 0
            self.head = Head(0, _merkle.EMPTY_ROOT.hex())
            self._read_log(log_path, keep_entries)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """End the run (resume the collector)."""
        if self._paused is not None:
            self._paused.__exit__(None, None, None)
            self._paused = None  # type: ignore[assignment]

    def __enter__(self) -> AuditRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read_log(self, log_path: Path | None, keep_entries: bool) -> None:
        wanted = {size for size in self._stamp_sizes if size >= 0}
        if self.held is not None:
            wanted.add(self.held.size)
        try:
            with LogReader(self.root, log_path=log_path) as reader:
                self.log_exists = reader.exists
                self._scan(reader, sorted(wanted), keep_entries)
        except EvidenceLogError as exc:
            self.unread = [_read_log_finding(exc)]
            # Unread, the log can neither vouch for records nor accuse them.
            self.join = _Join(RecordIds())
            self.log_exists, self.entries, self.entry_count = True, [], 0
            self._parse_findings, self._duplicates = _Spool(), _Spool()
            self.log_size, self.head = 0, Head(0, _merkle.EMPTY_ROOT.hex())

    def _scan(self, reader: LogReader, wanted: list[int], keep_entries: bool) -> None:
        scanner = LogScanner()
        frontier = _merkle.Frontier()
        next_wanted = 0

        def note_roots() -> None:
            nonlocal next_wanted
            while next_wanted < len(wanted) and wanted[next_wanted] == frontier.size:
                self._roots[frontier.size] = frontier.root()
                next_wanted += 1

        note_roots()
        found: list[Finding] = []
        for line, terminated in reader.lines() if reader.exists else ():
            position = scanner.position
            entry, leaf = scanner.feed(line, terminated, found)
            for finding in found:
                self._parse_findings.add(finding)
            found.clear()
            if scanner.done:
                break
            if leaf is not None:
                frontier.append(leaf)
                note_roots()
            if entry is not None:
                self.entry_count += 1
                if keep_entries:
                    self.entries.append(entry)
                duplicate = self.join.feed(entry, position)
                if duplicate is not None:
                    self._duplicates.add(duplicate)
        self.log_size = frontier.size
        self.head = Head(frontier.size, frontier.root().hex())

    def records(self) -> Iterator[tuple[RecordResult, LogStatus | None]]:
        """Verify the records in ID order; yield each with what the log says of it."""
        # The payloads are read for the runs of checked bibliographies
        # (_runs.py), then dropped unless the caller asked for them: one
        # record's payloads are held at a time.
        results = iter_root(
            self.records_root,
            self.ids,
            keep_payloads=True,
            verify_many=self._verify_many,
        )
        joined = not self.unread
        for position, read in enumerate(results):
            self.tally.add(read)
            if read:
                self.runs.add(read.evidence_id, read.request, read.response)
            record = read if self.keep_payloads else replace(read, request=None, response=None)
            status = self.join.record(position, record) if joined else None
            yield record, status

    def log_findings(self) -> Iterator[Finding]:
        """Every finding about the log, in the report's order (after :meth:`records`)."""
        for finding in self._log_findings():
            if finding.severity is Severity.ERROR:
                # The exit code needs no more than the first error of each kind.
                kind = finding.code in _INCOMPLETE
                if kind not in self._decisive:
                    self._decisive[kind] = finding
            yield finding

    def _log_findings(self) -> Iterator[Finding]:
        yield from self.unread
        if not self.unread:
            yield from self._parse_findings
            yield from self._duplicates
        # The runs are the records' own: reported whether or not the log was read.
        yield from self.runs.findings()
        if self.unread:
            return
        yield from self.join.findings(self.log_exists)
        if self.held is not None:
            yield head_finding(self.held, self.log_size, self._roots.get(self.held.size))

    def exit_code(self, stamps: TimestampAudit | None) -> int:
        """The audit's exit code, once :meth:`records` and :meth:`log_findings` were read."""
        return audit_exit_code(self.tally.exit_code, self._decisive.values(), stamps)

    def timestamps(self) -> TimestampAudit | None:
        """The stored tokens checked against the log; None when the log could not be read."""
        if self.unread:
            return None
        return audit_timestamps(
            timestamps_folder(self.root),
            (),
            ca_file=self.tsa_ca,
            roots=self._roots,
            log_size=self.log_size,
        )

    def log_status(self, statuses: Iterable[tuple[str, LogStatus | None]]) -> dict[str, LogStatus]:
        """The ``log_status`` map: the records' statuses, and tombstoned IDs without a folder."""
        status = {evidence_id: value for evidence_id, value in statuses if value is not None}
        for evidence_id in self.join.tombstoned_absent():
            status[evidence_id] = LogStatus.TOMBSTONED
        return status


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

    Every record and entry is returned: a caller that wants to report a large
    root as it goes uses :class:`AuditRun`, as the command line does.
    """
    with AuditRun(root, held=held, tsa_ca=tsa_ca, jobs=jobs, keep_entries=True) as run:
        pairs = list(run.records())
        log_findings = tuple(run.log_findings())
        stamps = run.timestamps()
        return AuditResult(
            records=tuple(record for record, _ in pairs),
            root_findings=tuple(run.root_findings),
            log_findings=log_findings,
            entries=tuple(run.entries),
            head=run.head,
            log_status=run.log_status((r.evidence_id, status) for r, status in pairs),
            timestamps=stamps,
        )
