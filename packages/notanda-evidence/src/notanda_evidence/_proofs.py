"""Inclusion proofs: one record's log entry in the tree of a head, made and checked.

A proof holds the record's own log line and sibling hashes only, so it can
be shared without revealing any other search.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from . import _merkle
from ._log import EntryType, Head, parse_line, parse_log, read_log
from .verify_file import (
    EvidenceError,
    Outcome,
    json_depth_exceeds,
    read_regular_file,
    verify_record,
)

__all__ = [
    "MAX_PROOF_BYTES",
    "InclusionProof",
    "ProofCode",
    "ProofError",
    "make_proof",
    "read_proof",
    "verify_proof",
]

PROOF_FORMAT = "notanda-evidence-inclusion-proof"
PROOF_FORMAT_VERSION = 1
#: The largest proof file ``prove --verify`` reads. A proof holds one log line
#: (at most 4,096 bytes, escaped in a JSON string) and at most 64 sibling
#: hashes, so a real one stays under 16 KiB.
MAX_PROOF_BYTES = 64 << 10


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
