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
    from ._adopt import AdoptReport, adopt, prune
    from ._audit import AuditResult, LogStatus, audit
    from ._bagit import export_bagit
    from ._cite import (
        Citation,
        CitationCode,
        CitationError,
        CitationFormat,
        collect_citations,
        find_doi,
        render,
    )
    from ._log import (
        AppendResult,
        EntryType,
        EvidenceLog,
        EvidenceLogError,
        Head,
        LogCode,
        LogEntry,
        LogFinding,
        LogReason,
    )
    from ._proofs import InclusionProof, ProofCode, ProofError, make_proof, verify_proof
    from ._report import ReportCode, ReportFormat, build_report
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
        format_timestamp,
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
    "AdoptReport": "._adopt",
    "AppendResult": "._log",
    "AuditResult": "._audit",
    "Citation": "._cite",
    "CitationCode": "._cite",
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
    "InclusionProof": "._proofs",
    "LogCode": "._log",
    "LogEntry": "._log",
    "LogFinding": "._log",
    "LogReason": "._log",
    "LogStatus": "._audit",
    "Outcome": ".verify_file",
    "ParsedJSON": ".verify_file",
    "ProofCode": "._proofs",
    "ProofError": "._proofs",
    "RecordResult": ".verify_file",
    "RecordWriter": "._store",
    "ReportCode": "._report",
    "ReportFormat": "._report",
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
    "adopt": "._adopt",
    "audit": "._audit",
    "build_report": "._report",
    "canonical_bytes": ".verify_file",
    "canonical_pieces": ".verify_file",
    "collect_citations": "._cite",
    "encode_canonical": "._store",
    "export_bagit": "._bagit",
    "find_doi": "._cite",
    "format_timestamp": ".verify_file",
    "is_evidence_id": ".verify_file",
    "make_proof": "._proofs",
    "open_record": ".verify_file",
    "parse_canonical": ".verify_file",
    "prune": "._adopt",
    "render": "._cite",
    "replace_lone_surrogates": "._store",
    "verify_or_raise": "._verify",
    "verify_proof": "._proofs",
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
    "LogStatus",
    "ProofCode",
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
    "CitationCode",
    "CitationError",
    "CitationFormat",
    "collect_citations",
    "find_doi",
    "render",
    # Reports of reference checks
    "ReportCode",
    "ReportFormat",
    "build_report",
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
