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

from ._version import __version__ as __version__

# The public names: ``_EXPORTS`` below is the one list (``__all__`` is made
# from it). Type checkers cannot read it, so each name is also imported here
# as ``X as X`` (an explicit re-export); ``tests/test_package.py`` checks that the two
# agree. To add a name: one line here, one entry in ``_EXPORTS``.
if TYPE_CHECKING:
    from ._adopt import AdoptReport as AdoptReport
    from ._adopt import adopt as adopt
    from ._adopt import prune as prune
    from ._audit import AuditResult as AuditResult
    from ._audit import LogStatus as LogStatus
    from ._audit import audit as audit
    from ._bagit import export_bagit as export_bagit
    from ._cite import Citation as Citation
    from ._cite import CitationCode as CitationCode
    from ._cite import CitationError as CitationError
    from ._cite import CitationFormat as CitationFormat
    from ._cite import collect_citations as collect_citations
    from ._cite import find_doi as find_doi
    from ._cite import render as render
    from ._log import AppendResult as AppendResult
    from ._log import EntryType as EntryType
    from ._log import EvidenceLog as EvidenceLog
    from ._log import EvidenceLogError as EvidenceLogError
    from ._log import Head as Head
    from ._log import LogCode as LogCode
    from ._log import LogEntry as LogEntry
    from ._log import LogFinding as LogFinding
    from ._log import LogReason as LogReason
    from ._proofs import InclusionProof as InclusionProof
    from ._proofs import ProofCode as ProofCode
    from ._proofs import ProofError as ProofError
    from ._proofs import make_proof as make_proof
    from ._proofs import verify_proof as verify_proof
    from ._store import EvidenceStorageError as EvidenceStorageError
    from ._store import EvidenceStore as EvidenceStore
    from ._store import EvidenceValueError as EvidenceValueError
    from ._store import RecordWriter as RecordWriter
    from ._store import Seal as Seal
    from ._store import Stage as Stage
    from ._store import StageCallback as StageCallback
    from ._store import StorageReason as StorageReason
    from ._store import encode_canonical as encode_canonical
    from ._store import replace_lone_surrogates as replace_lone_surrogates
    from ._timestamp_audit import SignatureCheck as SignatureCheck
    from ._timestamp_audit import TimestampAudit as TimestampAudit
    from ._timestamp_audit import TimestampCode as TimestampCode
    from ._timestamp_audit import TimestampFinding as TimestampFinding
    from ._timestamp_audit import TokenReport as TokenReport
    from ._verify import VerificationError as VerificationError
    from ._verify import verify_or_raise as verify_or_raise
    from .verify_file import SCHEMA_VERSION as SCHEMA_VERSION
    from .verify_file import Code as Code
    from .verify_file import EvidenceError as EvidenceError
    from .verify_file import Finding as Finding
    from .verify_file import Outcome as Outcome
    from .verify_file import ParsedJSON as ParsedJSON
    from .verify_file import RecordResult as RecordResult
    from .verify_file import RootResult as RootResult
    from .verify_file import Severity as Severity
    from .verify_file import canonical_bytes as canonical_bytes
    from .verify_file import canonical_pieces as canonical_pieces
    from .verify_file import format_timestamp as format_timestamp
    from .verify_file import is_evidence_id as is_evidence_id
    from .verify_file import open_record as open_record
    from .verify_file import parse_canonical as parse_canonical
    from .verify_file import verify_record as verify_record
    from .verify_file import verify_root as verify_root

# Names are imported on first use: the MCP server needs the writer, the log
# and the reader, not the auditor, the citation renderer or the collection
# tools, and an auditor's ``verify`` needs none of the writer.
_EXPORTS = {
    # Every error raised to a caller derives from this one
    "EvidenceError": ".verify_file",
    # Writing
    "EvidenceStorageError": "._store",
    "EvidenceStore": "._store",
    "EvidenceValueError": "._store",
    "ParsedJSON": ".verify_file",
    "RecordWriter": "._store",
    "Seal": "._store",
    "Stage": "._store",
    "StageCallback": "._store",
    "StorageReason": "._store",
    "encode_canonical": "._store",
    "replace_lone_surrogates": "._store",
    # Reading and verifying
    "SCHEMA_VERSION": ".verify_file",
    "Code": ".verify_file",
    "Finding": ".verify_file",
    "Outcome": ".verify_file",
    "RecordResult": ".verify_file",
    "RootResult": ".verify_file",
    "Severity": ".verify_file",
    "VerificationError": "._verify",
    "canonical_bytes": ".verify_file",
    "canonical_pieces": ".verify_file",
    "is_evidence_id": ".verify_file",
    "open_record": ".verify_file",
    "parse_canonical": ".verify_file",
    "verify_or_raise": "._verify",
    "verify_record": ".verify_file",
    "verify_root": ".verify_file",
    # The log and the collection
    "AdoptReport": "._adopt",
    "AppendResult": "._log",
    "AuditResult": "._audit",
    "EntryType": "._log",
    "EvidenceLog": "._log",
    "EvidenceLogError": "._log",
    "Head": "._log",
    "InclusionProof": "._proofs",
    "LogCode": "._log",
    "LogEntry": "._log",
    "LogFinding": "._log",
    "LogReason": "._log",
    "LogStatus": "._audit",
    "ProofCode": "._proofs",
    "ProofError": "._proofs",
    "adopt": "._adopt",
    "audit": "._audit",
    "export_bagit": "._bagit",
    "format_timestamp": ".verify_file",
    "make_proof": "._proofs",
    "prune": "._adopt",
    "verify_proof": "._proofs",
    # Time-stamp tokens on log heads (audit's side)
    "SignatureCheck": "._timestamp_audit",
    "TimestampAudit": "._timestamp_audit",
    "TimestampCode": "._timestamp_audit",
    "TimestampFinding": "._timestamp_audit",
    "TokenReport": "._timestamp_audit",
    # Citations
    "Citation": "._cite",
    "CitationCode": "._cite",
    "CitationError": "._cite",
    "CitationFormat": "._cite",
    "collect_citations": "._cite",
    "find_doi": "._cite",
    "render": "._cite",
    "__version__": "._version",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'notanda_evidence' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
