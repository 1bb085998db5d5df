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
    from ._der import MAX_TOKEN_BYTES as MAX_TOKEN_BYTES
    from ._der import DerProblem as DerProblem
    from ._der import EssCertId as EssCertId
    from ._der import TimeStampInfo as TimeStampInfo
    from ._der import TimeStampResponse as TimeStampResponse
    from ._der import TokenSignature as TokenSignature
    from ._der import der_ordered_response as der_ordered_response
    from ._der import read_time_stamp_response as read_time_stamp_response
    from ._der import read_token_signature as read_token_signature
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
    from ._report import ReportCode as ReportCode
    from ._report import ReportFormat as ReportFormat
    from ._report import build_report as build_report
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
    from ._timestamp_audit import MAX_CA_BUNDLE_BYTES as MAX_CA_BUNDLE_BYTES
    from ._timestamp_audit import CaBundleError as CaBundleError
    from ._timestamp_audit import SignatureCheck as SignatureCheck
    from ._timestamp_audit import TimestampAudit as TimestampAudit
    from ._timestamp_audit import TimestampCode as TimestampCode
    from ._timestamp_audit import TimestampFinding as TimestampFinding
    from ._timestamp_audit import TokenReport as TokenReport
    from ._timestamp_audit import read_ca_bundle as read_ca_bundle
    from ._timestamps import CHECKPOINT_PREFIX as CHECKPOINT_PREFIX
    from ._timestamps import TIMESTAMPS_DIR as TIMESTAMPS_DIR
    from ._timestamps import checkpoint_bytes as checkpoint_bytes
    from ._timestamps import checkpoint_digest as checkpoint_digest
    from ._timestamps import store_token as store_token
    from ._timestamps import token_name as token_name
    from ._timestamps import token_size as token_size
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
    "CHECKPOINT_PREFIX": "._timestamps",
    "MAX_CA_BUNDLE_BYTES": "._timestamp_audit",
    "MAX_TOKEN_BYTES": "._der",
    "SCHEMA_VERSION": ".verify_file",
    "TIMESTAMPS_DIR": "._timestamps",
    "AdoptReport": "._adopt",
    "AppendResult": "._log",
    "AuditResult": "._audit",
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
    "Outcome": ".verify_file",
    "ParsedJSON": ".verify_file",
    "ProofCode": "._proofs",
    "ProofError": "._proofs",
    "RecordResult": ".verify_file",
    "RecordWriter": "._store",
    "ReportCode": "._report",
    "ReportFormat": "._report",
    "RootResult": ".verify_file",
    "Seal": "._store",
    "Severity": ".verify_file",
    "SignatureCheck": "._timestamp_audit",
    "Stage": "._store",
    "StageCallback": "._store",
    "StorageReason": "._store",
    "TimeStampInfo": "._der",
    "TimeStampResponse": "._der",
    "TimestampAudit": "._timestamp_audit",
    "TimestampCode": "._timestamp_audit",
    "TimestampFinding": "._timestamp_audit",
    "TokenReport": "._timestamp_audit",
    "TokenSignature": "._der",
    "VerificationError": "._verify",
    "__version__": "._version",
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
