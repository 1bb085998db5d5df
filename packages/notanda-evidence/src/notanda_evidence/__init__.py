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
    from ._der import (
        MAX_TOKEN_BYTES,
        DerProblem,
        EssCertId,
        TimeStampInfo,
        TimeStampResponse,
        TokenSignature,
        der_ordered_response,
        read_time_stamp_response,
        read_token_signature,
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
    from ._timestamp_audit import (
        MAX_CA_BUNDLE_BYTES,
        CaBundleError,
        SignatureCheck,
        TimestampAudit,
        TimestampCode,
        TimestampFinding,
        TokenReport,
        read_ca_bundle,
    )
    from ._timestamps import (
        CHECKPOINT_PREFIX,
        TIMESTAMPS_DIR,
        checkpoint_bytes,
        checkpoint_digest,
        store_token,
        token_name,
        token_size,
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
    "CHECKPOINT_PREFIX": "._timestamps",
    "CaBundleError": "._timestamp_audit",
    "Citation": "._cite",
    "CitationCode": "._cite",
    "CitationError": "._cite",
    "CitationFormat": "._cite",
    "Code": ".verify_file",
    "DerProblem": "._der",
    "EntryType": "._log",
    "EssCertId": "._der",
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
    "MAX_CA_BUNDLE_BYTES": "._timestamp_audit",
    "MAX_TOKEN_BYTES": "._der",
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
    "TIMESTAMPS_DIR": "._timestamps",
    "TimeStampInfo": "._der",
    "TimeStampResponse": "._der",
    "TimestampAudit": "._timestamp_audit",
    "TimestampCode": "._timestamp_audit",
    "TimestampFinding": "._timestamp_audit",
    "TokenReport": "._timestamp_audit",
    "TokenSignature": "._der",
    "VerificationError": "._verify",
    "adopt": "._adopt",
    "audit": "._audit",
    "build_report": "._report",
    "canonical_bytes": ".verify_file",
    "canonical_pieces": ".verify_file",
    "checkpoint_bytes": "._timestamps",
    "checkpoint_digest": "._timestamps",
    "collect_citations": "._cite",
    "der_ordered_response": "._der",
    "encode_canonical": "._store",
    "export_bagit": "._bagit",
    "find_doi": "._cite",
    "format_timestamp": ".verify_file",
    "is_evidence_id": ".verify_file",
    "make_proof": "._proofs",
    "open_record": ".verify_file",
    "parse_canonical": ".verify_file",
    "prune": "._adopt",
    "read_ca_bundle": "._timestamp_audit",
    "read_time_stamp_response": "._der",
    "read_token_signature": "._der",
    "render": "._cite",
    "replace_lone_surrogates": "._store",
    "store_token": "._timestamps",
    "token_name": "._timestamps",
    "token_size": "._timestamps",
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
    # Time-stamp tokens on log heads: the checkpoint, the store, the DER reader
    "CHECKPOINT_PREFIX",
    "MAX_TOKEN_BYTES",
    "TIMESTAMPS_DIR",
    "DerProblem",
    "EssCertId",
    "TimeStampInfo",
    "TimeStampResponse",
    "TokenSignature",
    "checkpoint_bytes",
    "checkpoint_digest",
    "der_ordered_response",
    "read_time_stamp_response",
    "read_token_signature",
    "store_token",
    "token_name",
    "token_size",
    # ... and the audit's side
    "MAX_CA_BUNDLE_BYTES",
    "CaBundleError",
    "SignatureCheck",
    "TimestampAudit",
    "TimestampCode",
    "TimestampFinding",
    "TokenReport",
    "read_ca_bundle",
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
