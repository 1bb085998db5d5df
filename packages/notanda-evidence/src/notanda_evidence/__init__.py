"""Notanda evidence records: the format, a durable writer and a stdlib-only verifier.

Each search leaves one record directory ``<root>/<evidence_id>/`` holding
``request.json``, ``provider.json``, ``response.json`` and, written last,
``manifest.json``. The receipt is the SHA-256 of the manifest's bytes. The
format is specified in ``docs/evidence-format.md``; this package depends on
nothing outside the Python standard library.
"""

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
    format_timestamp,
)
from ._store import (
    CanonicalJSON,
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
from ._version import __version__
from .verify_file import (
    SCHEMA_VERSION,
    Code,
    Finding,
    Outcome,
    RecordResult,
    RootResult,
    Severity,
    canonical_bytes,
    is_evidence_id,
    open_record,
    parse_canonical,
    verify_record,
    verify_root,
)

__all__ = [
    # Writing
    "CanonicalJSON",
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
    "ProofError",
    "adopt",
    "audit",
    "export_bagit",
    "format_timestamp",
    "make_proof",
    "prune",
    "verify_proof",
    # Citations
    "Citation",
    "CitationError",
    "CitationFormat",
    "collect_citations",
    "find_doi",
    "render",
    "__version__",
]
