"""Operations on a whole evidence root: adopt, prune, prove inclusion, export as BagIt.

Each one changes the log only by appending to it, and never rewrites a
record's files: adoption logs records that exist without an entry, pruning
logs a tombstone before it deletes, and an export copies bytes after checking
them against the manifests they were sealed with.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from . import _merkle
from ._audit import parse_log
from ._der import MAX_TOKEN_BYTES
from ._log import (
    EntryType,
    EvidenceLog,
    Head,
    parse_line,
    read_log,
    read_regular_file,
)
from ._store import EvidenceStorageError
from ._timestamp_audit import read_token, token_names
from ._timestamps import TIMESTAMPS_DIR, token_size
from ._version import __version__
from .verify_file import (
    MANIFEST,
    PAYLOADS,
    RESERVED_DIR,
    EvidenceError,
    Outcome,
    RecordResult,
    format_timestamp,
    is_evidence_id,
    json_depth_exceeds,
    printable,
    record_ids,
    verify_record,
    verify_root,
)

__all__ = [
    "INCOMPLETE_MIN_AGE_S",
    "MAX_PROOF_BYTES",
    "AdoptReport",
    "InclusionProof",
    "ProofCode",
    "ProofError",
    "adopt",
    "export_bagit",
    "make_proof",
    "prune",
    "read_proof",
    "verify_proof",
]

PROOF_FORMAT = "notanda-evidence-inclusion-proof"
PROOF_FORMAT_VERSION = 1
#: The largest proof file ``prove --verify`` reads. A proof holds one log line
#: (at most 4,096 bytes, escaped in a JSON string) and at most 64 sibling
#: hashes, so a real one stays under 16 KiB.
MAX_PROOF_BYTES = 64 << 10

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
    refused: tuple[tuple[str, str], ...]
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
    suspects: list[tuple[str, str]] = []
    left: list[str] = []
    for evidence_id in record_ids(base):
        if _is_decided(latest.get(evidence_id)):
            continue
        result = verify_record(base / evidence_id)
        if _young_incomplete(base, result, min_age_s):
            left.append(evidence_id)
        elif result.outcome is not Outcome.OK:
            suspects.append((result.evidence_id, result.outcome.value))
        else:
            candidates.append(_candidate(result))
    if dry_run:
        candidates.sort(key=lambda item: (item[0], item[1]))
        would = tuple((evidence_id, -1) for _, evidence_id, _ in candidates)
        return AdoptReport(would, tuple(suspects), None, tuple(left))
    adopted: list[tuple[str, int]] = []
    refused: list[tuple[str, str]] = []
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
            refused.append((evidence_id, result.outcome.value))
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


def _export_tokens(base: Path, out: Path) -> list[str]:
    """Copy the root's token files into *out*; their tag-file names, sorted.

    Only names that are tokens' are copied, each read as a regular file within
    the token limit; anything else is left for ``audit`` of the root to report.
    """
    source = base / TIMESTAMPS_DIR
    names, _ = token_names(source)
    copied: list[str] = []
    for name in names:
        if token_size(name) is None:
            continue  # not a token: audit of the root reports it
        data = read_token(source / name)
        if isinstance(data, str) or len(data) > MAX_TOKEN_BYTES:
            continue  # a link, a FIFO, unreadable or too large: likewise
        out.mkdir(exist_ok=True)
        (out / name).write_bytes(data)
        copied.append(f"notanda/timestamps/{name}")
    return copied


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


# ----------------------------------------------------------------- proofs


class ProofCode(StrEnum):
    """Why an inclusion proof could not be made or did not verify."""

    UNKNOWN_FORMAT = "unknown_format"
    MALFORMED = "malformed"
    TOO_LARGE = "proof.too_large"
    TOO_DEEP = "proof.too_deep"
    ENTRY_MISMATCH = "entry_mismatch"
    PATH_MISMATCH = "path_mismatch"
    HEAD_MISMATCH = "head_mismatch"
    RECORD_MISMATCH = "record_mismatch"
    NOT_LOGGED = "not_logged"
    BAD_SIZE = "bad_size"


class ProofError(EvidenceError):
    """An inclusion proof could not be made or did not verify; ``code`` says why."""

    def __init__(self, code: ProofCode, detail: str = "") -> None:
        super().__init__(code.value + (f": {detail}" if detail else ""))
        self.code = code


def read_proof(path: str | os.PathLike[str]) -> Any:
    """Read and parse a proof file, within :data:`MAX_PROOF_BYTES` and the depth limit.

    Raises:
        ProofError: ``proof.too_large``, ``proof.too_deep``, or ``malformed``
            (not UTF-8 JSON).
        NotRegularFileError: *path* is a FIFO, a device or a folder.
        OSError: *path* cannot be opened (``ELOOP`` for a link) or read.
    """
    data = read_regular_file(path, MAX_PROOF_BYTES)
    if len(data) > MAX_PROOF_BYTES:
        raise ProofError(ProofCode.TOO_LARGE, f"a proof is at most {MAX_PROOF_BYTES} bytes")
    if json_depth_exceeds(data):
        raise ProofError(ProofCode.TOO_DEEP, "nested deeper than a proof")
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError as exc:
        raise ProofError(ProofCode.MALFORMED, "not UTF-8 JSON") from exc


@dataclass(frozen=True, slots=True)
class InclusionProof:
    """Proof that one record's log entry is in the tree of a given head."""

    evidence_id: str
    receipt: str
    index: int
    entry: str
    head: Head
    path: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The proof document ``prove`` writes."""
        return {
            "entry": self.entry,
            "evidence_id": self.evidence_id,
            "format": PROOF_FORMAT,
            "format_version": PROOF_FORMAT_VERSION,
            "head": self.head.to_json(),
            "index": self.index,
            "path": list(self.path),
            "receipt": self.receipt,
        }


def make_proof(
    root: str | os.PathLike[str], evidence_id: str, *, size: int | None = None
) -> InclusionProof:
    """Prove that a record's entry is in the log's tree (of *size* entries if given).

    The proof holds the record's own log line and sibling hashes only, so it
    can be shared without revealing any other search.
    """
    data, _ = read_log(Path(root))
    entries, leaves, _ = parse_log(data)
    tree = len(leaves) if size is None else size
    if not 0 < tree <= len(leaves):
        raise ProofError(ProofCode.BAD_SIZE, f"the log has {len(leaves)} entries")
    matching = [
        e
        for e in entries
        if e.evidence_id == evidence_id
        and e.index < tree
        and e.type is not EntryType.TOMBSTONE
        and e.receipt is not None
    ]
    if not matching:
        raise ProofError(ProofCode.NOT_LOGGED, evidence_id)
    entry = matching[-1]
    path = _merkle.inclusion_proof(leaves, entry.index, tree)
    root_hash = _merkle.root_of(leaves[:tree])
    return InclusionProof(
        evidence_id,
        entry.receipt or "",
        entry.index,
        entry.line.decode("utf-8"),
        Head(tree, root_hash.hex()),
        tuple(p.hex() for p in path),
    )


def verify_proof(
    document: Any, *, record: str | os.PathLike[str] | None = None, held: Head | None = None
) -> InclusionProof:
    """Check an inclusion proof document, optionally with the record and a held head.

    Raises:
        ProofError: The document is malformed, the path does not lead to the
            head, the entry does not name the record and receipt, the record
            does not verify with that receipt, or the held head differs.
    """
    try:
        if document["format"] != PROOF_FORMAT or document["format_version"] != PROOF_FORMAT_VERSION:
            raise ProofError(ProofCode.UNKNOWN_FORMAT)
        head = Head(int(document["head"]["size"]), str(document["head"]["root"]))
        Head.parse(str(head))
        path = [bytes.fromhex(p) for p in document["path"]]
        proof = InclusionProof(
            str(document["evidence_id"]),
            str(document["receipt"]),
            int(document["index"]),
            str(document["entry"]),
            head,
            tuple(str(p) for p in document["path"]),
        )
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, ProofError):
            raise
        raise ProofError(ProofCode.MALFORMED) from exc
    entry = parse_line(proof.entry.encode("utf-8"))
    if entry is None or entry.type is EntryType.TOMBSTONE:
        raise ProofError(ProofCode.MALFORMED, "the entry is not a log entry of a record")
    if (entry.evidence_id, entry.receipt, entry.index) != (
        proof.evidence_id,
        proof.receipt,
        proof.index,
    ):
        raise ProofError(
            ProofCode.ENTRY_MISMATCH, "the entry names another record, receipt or index"
        )
    if not _merkle.verify_inclusion(
        entry.leaf, proof.index, head.size, path, bytes.fromhex(head.root)
    ):
        raise ProofError(ProofCode.PATH_MISMATCH, "the path does not lead to the head")
    if held is not None and held != head:
        raise ProofError(
            ProofCode.HEAD_MISMATCH,
            f"the proof is for {head}, the held head is {held}; "
            "ask for a proof at the held size (prove --size)",
        )
    if record is not None:
        result = verify_record(record, proof.receipt)
        if result.outcome is not Outcome.OK or result.evidence_id != proof.evidence_id:
            raise ProofError(ProofCode.RECORD_MISMATCH, result.outcome.value)
    return proof


# ------------------------------------------------------------------ BagIt


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export_bagit(
    root: str | os.PathLike[str], out: str | os.PathLike[str], *, ids: Sequence[str] = ()
) -> tuple[int, list[tuple[str, str]]]:
    """Export intact records as a BagIt (RFC 8493) bag whose manifests agree with ours.

    The payload is ``data/<evidence_id>/*.json``, byte for byte. The SHA-256
    of each payload file is the one its record's manifest states, and the line
    for ``manifest.json`` is the record's receipt. The log goes in as the tag
    file ``notanda/log.jsonl`` with its head in ``notanda/head.json``, and
    every time-stamp token (``.notanda/timestamps/<size>.tsr``) as a tag file
    under ``notanda/timestamps/``, so that ``audit`` checks them in the bag.

    Returns:
        The number of records exported and the ``(evidence_id, outcome)`` of
        those left out because they did not verify.

    Raises:
        FileExistsError: *out* exists.
        ValueError: A record's bytes changed while it was being copied.
    """
    base, bag = Path(root), Path(out)
    bag.mkdir(parents=False, exist_ok=False)
    results = [verify_record(base / i) for i in ids] if ids else list(verify_root(base).records)
    skipped = [(r.evidence_id, r.outcome.value) for r in results if r.outcome is not Outcome.OK]
    manifest_lines: list[str] = []
    octets = files = 0
    for result in sorted(
        (r for r in results if r.outcome is Outcome.OK), key=lambda r: r.evidence_id
    ):
        source, target = base / result.evidence_id, bag / "data" / result.evidence_id
        target.mkdir(parents=True)
        sealed = json.loads((source / MANIFEST).read_bytes())
        expected = {name: sealed["files"][name]["sha256"] for name in PAYLOADS}
        expected[MANIFEST] = result.receipt or ""
        for name in (*PAYLOADS, MANIFEST):
            shutil.copyfile(source / name, target / name, follow_symlinks=False)
            digest = _sha256_file(target / name)
            if digest != expected[name]:
                raise ValueError(f"{result.evidence_id}/{name} changed while it was exported")
            manifest_lines.append(f"{digest}  data/{result.evidence_id}/{name}")
            octets += (target / name).stat().st_size
            files += 1
    (bag / "data").mkdir(exist_ok=True)
    data, _ = read_log(base)
    _, leaves, _ = parse_log(data)
    head = Head(len(leaves), _merkle.root_of(leaves).hex())
    (bag / "notanda").mkdir()
    (bag / "notanda" / "log.jsonl").write_bytes(data)
    (bag / "notanda" / "head.json").write_text(json.dumps(head.to_json(), sort_keys=True) + "\n")
    tokens = _export_tokens(base, bag / "notanda" / "timestamps")
    (bag / "manifest-sha256.txt").write_text("".join(f"{line}\n" for line in manifest_lines))
    (bag / "bagit.txt").write_text("BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n")
    info = {
        "Bag-Software-Agent": f"notanda-evidence {__version__}",
        "Bagging-Date": format_timestamp(dt.datetime.now(dt.UTC))[:10],
        "External-Description": "Notanda evidence records and their log; "
        "audit the bag with: notanda-evidence audit <this folder>",
        "Notanda-Log-Root": head.root,
        "Notanda-Log-Size": str(head.size),
        "Payload-Oxum": f"{octets}.{files}",
    }
    (bag / "bag-info.txt").write_text("".join(f"{k}: {v}\n" for k, v in info.items()))
    tags = [
        "bagit.txt",
        "bag-info.txt",
        "manifest-sha256.txt",
        "notanda/head.json",
        "notanda/log.jsonl",
        *tokens,
    ]
    (bag / "tagmanifest-sha256.txt").write_text(
        "".join(f"{_sha256_file(bag / name)}  {name}\n" for name in tags)
    )
    for path in bag.rglob("*"):
        if not path.is_symlink():
            path.chmod(stat.S_IRWXU if path.is_dir() else stat.S_IRUSR | stat.S_IWUSR)
    return len(manifest_lines) // 4, skipped
