"""Notanda evidence records: the format, a durable writer and a stdlib-only verifier.

Each search leaves one record directory ``<root>/<evidence_id>/`` holding
``request.json``, ``provider.json``, ``response.json`` and, written last,
``manifest.json``. The receipt is the SHA-256 of the manifest's bytes. The
format is specified in ``docs/evidence-format.md``; this package depends on
nothing outside the Python standard library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from ._audit import AuditResult, LogCode, LogFinding, audit
    from ._cite import Citation, CitationError, CitationFormat, collect_citations, find_doi, render
    from ._collection import (
        AdoptReport,
        InclusionProof,
        ProofError,
        adopt,
        export_bagit,
        make_proof,
        prune,
        verify_proof,
    )
    from ._log import (
        AppendResult,
        EntryType,
        EvidenceLog,
        EvidenceLogError,
        Head,
        LogEntry,
        LogReason,
        format_timestamp,
    )
    from ._store import (
        EvidenceStorageError,
        EvidenceStore,
        EvidenceValueError,
        RecordWriter,
        Seal,
        Stage,
        StageCallback,
        StorageReason,
        encode_canonical,
        replace_lone_surrogates,
    )
    from ._verify import VerificationError, verify_or_raise
    from .verify_file import (
        SCHEMA_VERSION,
        Code,
        EvidenceError,
        Finding,
        Outcome,
        ParsedJSON,
        RecordResult,
        RootResult,
        Severity,
        canonical_bytes,
        canonical_pieces,
        is_evidence_id,
        open_record,
        parse_canonical,
        verify_record,
        verify_root,
    )

# Names are imported on first use: the MCP server needs the writer, the log
# and the reader, not the auditor, the citation renderer or the collection
# tools, and an auditor's ``verify`` needs none of the writer.
_EXPORTS = {
    "AdoptReport": "._collection",
    "AppendResult": "._log",
    "AuditResult": "._audit",
    "Citation": "._cite",
    "CitationError": "._cite",
    "CitationFormat": "._cite",
    "Code": ".verify_file",
    "EntryType": "._log",
    "EvidenceError": ".verify_file",
    "EvidenceLog": "._log",
    "EvidenceLogError": "._log",
    "EvidenceStorageError": "._store",
    "EvidenceStore": "._store",
    "EvidenceValueError": "._store",
    "Finding": ".verify_file",
    "Head": "._log",
    "InclusionProof": "._collection",
    "LogCode": "._audit",
    "LogEntry": "._log",
    "LogFinding": "._audit",
    "LogReason": "._log",
    "Outcome": ".verify_file",
    "ParsedJSON": ".verify_file",
    "ProofError": "._collection",
    "RecordResult": ".verify_file",
    "RecordWriter": "._store",
    "RootResult": ".verify_file",
    "SCHEMA_VERSION": ".verify_file",
    "Seal": "._store",
    "Severity": ".verify_file",
    "SignatureCheck": "._timestamp_audit",
    "Stage": "._store",
    "StageCallback": "._store",
    "StorageReason": "._store",
    "TimestampAudit": "._timestamp_audit",
    "TimestampCode": "._timestamp_audit",
    "TimestampFinding": "._timestamp_audit",
    "TokenReport": "._timestamp_audit",
    "VerificationError": "._verify",
    "adopt": "._collection",
    "audit": "._audit",
    "canonical_bytes": ".verify_file",
    "canonical_pieces": ".verify_file",
    "collect_citations": "._cite",
    "encode_canonical": "._store",
    "export_bagit": "._collection",
    "find_doi": "._cite",
    "format_timestamp": "._log",
    "is_evidence_id": ".verify_file",
    "make_proof": "._collection",
    "open_record": ".verify_file",
    "parse_canonical": ".verify_file",
    "prune": "._collection",
    "render": "._cite",
    "replace_lone_surrogates": "._store",
    "verify_or_raise": "._verify",
    "verify_proof": "._collection",
    "verify_record": ".verify_file",
    "verify_root": ".verify_file",
}

__all__ = [
    # Every error raised to a caller derives from this one
    "EvidenceError",
    # Writing
    "EvidenceStorageError",
    "EvidenceStore",
    "EvidenceValueError",
    "ParsedJSON",
    "RecordWriter",
    "Seal",
    "Stage",
    "StageCallback",
    "StorageReason",
    "encode_canonical",
    "replace_lone_surrogates",
    # Reading and verifying
    "SCHEMA_VERSION",
    "Code",
    "Finding",
    "Outcome",
    "RecordResult",
    "RootResult",
    "Severity",
    "VerificationError",
    "canonical_bytes",
    "canonical_pieces",
    "is_evidence_id",
    "open_record",
    "parse_canonical",
    "verify_or_raise",
    "verify_record",
    "verify_root",
    # The log and the collection
    "AdoptReport",
    "AppendResult",
    "AuditResult",
    "EntryType",
    "EvidenceLog",
    "EvidenceLogError",
    "Head",
    "InclusionProof",
    "LogCode",
    "LogEntry",
    "LogFinding",
    "LogReason",
    "ProofError",
    "adopt",
    "audit",
    "export_bagit",
    "format_timestamp",
    "make_proof",
    "prune",
    "verify_proof",
    # Time-stamp tokens on log heads (audit's side)
    "SignatureCheck",
    "TimestampAudit",
    "TimestampCode",
    "TimestampFinding",
    "TokenReport",
    # Citations
    "Citation",
    "CitationError",
    "CitationFormat",
    "collect_citations",
    "find_doi",
    "render",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'notanda_evidence' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
