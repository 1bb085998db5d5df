"""The published tool definitions: names, descriptions, input and output schemas, annotations.

These are plain data so that ``tools/list`` needs nothing heavy at start-up:
the vocabularies and limits come from ``notanda_openalex._vocabulary`` and the
notice from ``notanda_evidence.verify_file``, both standard-library only, so
that importing this module loads neither pydantic nor httpx.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from notanda_evidence.verify_file import CHECK_TOOL, NOTICE
from notanda_openalex._vocabulary import (
    CHECKED_REFERENCE_KEYS,
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_QUERY_LENGTH,
    MAX_REFERENCES,
    MAX_REFERENCES_BYTES,
    MAX_YEAR,
    MIN_YEAR,
    OA_STATUSES,
    WORK_TYPES,
    ReferenceFormat,
    Verdict,
)
from notanda_openalex._vocabulary import IDENTITY_FIELDS as _IDENTITY

from ._codes import AnswerStatus, ToolError

__all__ = [
    "CHECK_REFERENCES",
    "DEFAULT_TOOLSETS",
    "GET_EVIDENCE",
    "REMEDIES",
    "SEARCH_LITERATURE",
    "TOOLS",
    "TOOLSET_TOOLS",
    "Toolset",
    "get_evidence_input",
    "resolve_toolsets",
    "search_input",
    "tool_names",
]

SEARCH_LITERATURE = "search_literature"
GET_EVIDENCE = "get_evidence"
#: A check record names its tool in ``request.json``, so the verifier owns the name.
CHECK_REFERENCES = CHECK_TOOL


class Toolset(StrEnum):
    """The groups of tools a server may offer (``--toolsets``)."""

    #: ``search_literature`` and ``get_evidence``: always offered.
    SEARCH = "search"
    #: ``check_references``.
    REFERENCES = "references"


#: The tools each toolset adds.
TOOLSET_TOOLS: dict[Toolset, tuple[str, ...]] = {
    Toolset.SEARCH: (SEARCH_LITERATURE, GET_EVIDENCE),
    Toolset.REFERENCES: (CHECK_REFERENCES,),
}
DEFAULT_TOOLSETS: tuple[Toolset, ...] = (Toolset.SEARCH,)


def resolve_toolsets(names: Iterable[str]) -> tuple[Toolset, ...]:
    """The toolsets *names* choose, in a fixed order, ``search`` always among them.

    Order and repeats do not matter.

    Raises:
        ValueError: A name is not a toolset (the message lists the known ones).
    """
    chosen = {Toolset.SEARCH}
    for name in names:
        try:
            chosen.add(Toolset(name))
        except ValueError:
            known = ", ".join(toolset.value for toolset in Toolset)
            raise ValueError(f"unknown toolset (known: {known})") from None
    return tuple(toolset for toolset in Toolset if toolset in chosen)


def tool_names(toolsets: Iterable[str]) -> tuple[str, ...]:
    """The sorted names of the tools a server started with *toolsets* offers."""
    return tuple(sorted(name for ts in resolve_toolsets(toolsets) for name in TOOLSET_TOOLS[ts]))


#: Every ``error`` code either tool can answer with (``docs/errors.md``).
SEARCH_ERRORS = (
    ToolError.INVALID_ARGUMENTS,
    ToolError.CONFIGURATION_ERROR,
    ToolError.PROVIDER_ERROR,
    ToolError.SERVER_BUSY,
    ToolError.EVIDENCE_STORAGE_UNAVAILABLE,
    ToolError.EVIDENCE_LOG_UNAVAILABLE,
    ToolError.SHUTTING_DOWN,
    ToolError.INTERNAL_ERROR,
)
RETRIEVAL_ERRORS = (
    ToolError.INVALID_EVIDENCE_ID,
    ToolError.NOT_FOUND,
    ToolError.INTEGRITY_FAILURE,
    ToolError.UNSUPPORTED_SCHEMA_VERSION,
    ToolError.RECEIPT_MISMATCH,
    ToolError.LOG_MISMATCH,
    ToolError.EVIDENCE_LOG_UNAVAILABLE,
    ToolError.INVALID_ARGUMENTS,
    ToolError.SHUTTING_DOWN,
    ToolError.INTERNAL_ERROR,
)

#: What to do about each answer code, one line each: the answer carries it as
#: ``remedy`` (added when answering, never stored), and ``docs/errors.md`` lists
#: the same text. ``configuration_error`` and ``provider_error`` answers take
#: the remedy of their ``detail`` or ``reason`` (``notanda_openalex``) when known.
REMEDIES: dict[str, str] = {
    ToolError.INVALID_ARGUMENTS: (
        "correct the argument that field names (see the tool's input schema) and call again"
    ),
    ToolError.CONFIGURATION_ERROR: (
        "run notanda-mcp doctor: it says what in the configuration to fix"
    ),
    ToolError.PROVIDER_ERROR: (
        "the search reached OpenAlex or the network and failed: search again later"
    ),
    ToolError.SERVER_BUSY: (
        "wait a moment and search again, or start the server with more --search-slots"
    ),
    ToolError.EVIDENCE_STORAGE_UNAVAILABLE: (
        "make the evidence folder writable, with free space (storage_reason says what "
        "failed), then search again"
    ),
    ToolError.EVIDENCE_LOG_UNAVAILABLE: (
        "keep the receipt; make the evidence folder's .notanda/ log readable and writable "
        "(log_reason says what failed), then run notanda-evidence adopt"
    ),
    ToolError.SHUTTING_DOWN: (
        "the server is stopping: call again once the MCP client has restarted it; with "
        "record_state sealed, keep the receipt and run notanda-evidence adopt on the folder "
        "in case the record was not logged"
    ),
    ToolError.INTERNAL_ERROR: (
        "report it with the server's stderr; get_evidence with the evidence_id tells what "
        "state the record is in"
    ),
    ToolError.INVALID_EVIDENCE_ID: (
        "give the evidence_id exactly as the search returned it: 32 lowercase hex digits (0-9, a-f)"
    ),
    ToolError.NOT_FOUND: (
        "check the evidence_id, and that this server has the --evidence-dir the search was "
        "made into"
    ),
    AnswerStatus.INCOMPLETE: (
        "the search that made this record never finished: search again; notanda-evidence "
        "verify on the record shows what is missing"
    ),
    ToolError.RECEIPT_MISMATCH: (
        "give the receipt this evidence_id's search returned; if it is that one, the record "
        "was replaced: run notanda-evidence audit on the folder"
    ),
    ToolError.UNSUPPORTED_SCHEMA_VERSION: (
        "check the record with a notanda-evidence release that supports its schema_version"
    ),
    ToolError.INTEGRITY_FAILURE: (
        "the record was altered or damaged: notanda-evidence verify on it names the finding; "
        "restore the record from a backup"
    ),
    ToolError.LOG_MISMATCH: (
        "the record was replaced after it was logged: run notanda-evidence audit on the folder"
    ),
}

_YEAR = {"type": "integer", "minimum": MIN_YEAR, "maximum": MAX_YEAR}


def search_input() -> dict[str, Any]:
    """The input schema of ``search_literature``: every limit stated."""
    return {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_QUERY_LENGTH,
                "description": "What to search for in titles, abstracts and full text. "
                "A question is fine; '?' and '*' are not treated as wildcards.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "default": DEFAULT_LIMIT,
                "description": f"How many works to return (1 to {MAX_LIMIT}). "
                "One request, no pagination.",
            },
            "filters": {
                "type": "object",
                "description": "Optional. Unused filters leave the request unchanged.",
                "properties": {
                    "from_year": {**_YEAR, "description": "Earliest publication year."},
                    "to_year": {**_YEAR, "description": "Latest publication year."},
                    "oa_status": {
                        "type": "array",
                        "items": {"enum": list(OA_STATUSES)},
                        "minItems": 1,
                        "maxItems": len(OA_STATUSES),
                        "uniqueItems": True,
                        "description": "Open-access routes to keep.",
                    },
                    "types": {
                        "type": "array",
                        "items": {"enum": list(WORK_TYPES)},
                        "minItems": 1,
                        "maxItems": len(WORK_TYPES),
                        "uniqueItems": True,
                        "description": "OpenAlex work types to keep.",
                    },
                    "languages": {
                        "type": "array",
                        "items": {"type": "string", "pattern": "^[a-z]{2}$"},
                        "minItems": 1,
                        "maxItems": 20,
                        "uniqueItems": True,
                        "description": "ISO 639-1 language codes, e.g. en, de.",
                    },
                },
                "additionalProperties": False,
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def get_evidence_input() -> dict[str, Any]:
    """The input schema of ``get_evidence``."""
    return {
        "type": "object",
        "properties": {
            "evidence_id": {
                "type": "string",
                "minLength": 1,
                "maxLength": 128,
                "description": "The 32-character evidence ID a search returned.",
            },
            "receipt": {
                "type": ["string", "null"],
                "maxLength": 128,
                "description": "The receipt the search returned. Give it whenever you have it: "
                "only a receipt detects a record replaced together with its manifest.",
            },
        },
        "required": ["evidence_id"],
        "additionalProperties": False,
    }


#: The output schemas are typed but few-keyed: the mcp 1.x Python SDK client
#: checks a tool's output schema against the JSON Schema 2020-12 metaschema on
#: every call, at about a millisecond per subschema, so each keyword here costs
#: every call. The fields are named in the descriptions; their full definition
#: is ``docs/evidence-format.md`` (section 2.4 and 10) and ``docs/errors.md``.
_ANSWER_FIELDS = (
    "status, evidence_id, receipt; on success content_notice, query, limit, total_count, "
    "skipped_count, pagination and results; on error error, remedy and, where they apply, "
    "field, reason, detail, http_status, retry_after_s, persisted, storage_reason, "
    "log_reason, record_state. cancelled: true when the client cancelled the call."
)
_COMMON = {"evidence_id": {"type": "string"}, "receipt": {"type": "string"}}


def search_output() -> dict[str, Any]:
    """One object schema, discriminated by ``status``, for every ``search_literature`` answer."""
    return {
        "type": "object",
        "description": "A search answer: " + _ANSWER_FIELDS + " A success also has log_head, "
        "head (as notanda-evidence audit --head takes it) and log_index.",
        "required": ["status"],
        "properties": {
            "status": {"enum": [AnswerStatus.OK.value, AnswerStatus.ERROR.value]},
            **_COMMON,
            "error": {"enum": [code.value for code in SEARCH_ERRORS]},
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": list(_IDENTITY),
                    "description": "A citation block: always openalex_id, doi, title, "
                    "authors (at most 20, each name and, when known, a bare ORCID iD) and "
                    "publication_year; when known publication_date, authors_total, "
                    "authors_truncated_by_provider, venue, volume, issue, first_page, "
                    "last_page, type, language, is_oa, oa_status, oa_url, is_retracted, "
                    "cited_by_count.",
                },
            },
        },
    }


def _in_words(names: Iterable[str]) -> str:
    """``a, b or c``: *names* as a sentence lists them."""
    listed = list(names)
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " or " + listed[-1]


#: The ``format`` argument's description: ``auto``, then every reader, in the reader's order.
_FORMATS_PROSE = (
    _in_words(
        [f"{ReferenceFormat.AUTO.value} (the default)"]
        + [member.value for member in ReferenceFormat if member is not ReferenceFormat.AUTO]
    )
    + "."
)


def check_input() -> dict[str, Any]:
    """The input schema of ``check_references``.

    No ``maxLength`` and no ``enum``: the server checks the size, an empty
    text and the format name itself, so that each refusal leaves a record.
    """
    return {
        "type": "object",
        "properties": {
            "references": {
                "type": "string",
                "description": "The bibliography as text: BibTeX, RIS, CSL-JSON, or one "
                "reference per line (or per blank-line-separated block). At most "
                f"{MAX_REFERENCES} references and {MAX_REFERENCES_BYTES:,} UTF-8 bytes.",
            },
            "format": {
                "type": "string",
                "default": ReferenceFormat.AUTO.value,
                "description": _FORMATS_PROSE,
            },
        },
        "required": ["references"],
        "additionalProperties": False,
    }


#: Verdicts, in the order of the answer's ``summary`` (``docs/reference-checking.md``).
VERDICTS: tuple[str, ...] = tuple(Verdict)
#: One entry per input reference; only its keys are constrained, to keep the
#: schema cheap to check (the work is a citation block, like a search result).
_CHECKED_REFERENCE = {"type": "object", "required": list(CHECKED_REFERENCE_KEYS)}


def check_output() -> dict[str, Any]:
    """The ``check_references`` answer's schema: typed, but as small as a search's.

    Only the fields a client acts on are typed (``status``, ``error``, the
    record's identity, the summary and each reference's verdict); the rest are
    named in the description and specified in ``docs/evidence-format.md``.
    """
    search = search_output()["properties"]
    return {
        "type": "object",
        "description": "A reference check's answer: status, evidence_id, receipt; on success "
        "content_notice, log_head, head, log_index, summary (a count per verdict) and "
        "references (one per input reference, in input order: "
        + ", ".join(CHECKED_REFERENCE_KEYS)
        + "; verdict one of "
        + ", ".join(VERDICTS)
        + "); "
        "on error error and remedy.",
        "required": ["status"],
        "properties": {
            "status": search["status"],
            **_COMMON,
            "error": search["error"],
            "summary": {"type": "object", "required": list(VERDICTS)},
            "references": {"type": "array", "items": _CHECKED_REFERENCE},
        },
    }


def get_evidence_output() -> dict[str, Any]:
    """One object schema, discriminated by ``status``, for every ``get_evidence`` answer.

    A retrieved record is returned as it was stored, so its fields are those
    of the search that made it (including records of notanda-mcp 0.1.0b3).
    """
    return {
        "type": "object",
        "description": "The stored search answer, as the search gave it ("
        + _ANSWER_FIELDS
        + "; a check's answer holds summary and references instead of results), "
        "with logged (whether the log holds the record) and receipt when one was "
        "given; or an error, or status incomplete for a search that never finished.",
        "required": ["status"],
        "properties": {
            "status": {"enum": [status.value for status in AnswerStatus]},
            **_COMMON,
            "error": {"enum": sorted({code.value for code in (*SEARCH_ERRORS, *RETRIEVAL_ERRORS)})},
            "results": {"type": "array", "items": {"type": "object"}},
            "references": {"type": "array"},
        },
    }


TOOLS: dict[str, dict[str, Any]] = {
    SEARCH_LITERATURE: {
        "name": SEARCH_LITERATURE,
        "title": "Search the scholarly literature, with evidence",
        "description": (
            "Search OpenAlex for open-access works with a DOI. Every call leaves a sealed "
            "evidence record of the request, OpenAlex's answer and the result, and returns "
            "an evidence_id and a receipt: keep both, they later prove which sources this "
            f"search really returned. One request, no pagination, at most {MAX_LIMIT} works. "
            + NOTICE
        ),
        "inputSchema": search_input(),
        "outputSchema": search_output(),
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": True,
        },
    },
    GET_EVIDENCE: {
        "name": GET_EVIDENCE,
        "title": "Retrieve a verified earlier search",
        "description": (
            "Return the stored result of an earlier search_literature (or check_references) "
            "call by its evidence_id, "
            "after verifying its hashes, its log entry and, when given, its receipt. Never "
            "contacts OpenAlex. " + NOTICE
        ),
        "inputSchema": get_evidence_input(),
        "outputSchema": get_evidence_output(),
        "annotations": {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
    },
    CHECK_REFERENCES: {
        "name": CHECK_REFERENCES,
        "title": "Check a bibliography against OpenAlex, with evidence",
        "description": (
            f"Check every reference of a bibliography (at most {MAX_REFERENCES}) against "
            "OpenAlex and say, "
            "per reference, whether it is verified, differs from the record "
            "(metadata_mismatch, with the fields that differ), was not found in OpenAlex as "
            "searched, is ambiguous, could not be checked, or could not be read. Closed works "
            "count: no open-access restriction. The whole check leaves one sealed evidence "
            "record of the text, every OpenAlex request and answer, and every verdict, and "
            "returns an evidence_id and a receipt: keep both. "
            f"For a longer bibliography, call this tool several times, each with at most "
            f"{MAX_REFERENCES} of its entries (keep any @string and crossref entries they "
            "use in every call), or run notanda-mcp check-references FILE, which checks a "
            f"file of any size in parts of {MAX_REFERENCES}. "
            "not_found never proves that a work does not exist. " + NOTICE
        ),
        "inputSchema": check_input(),
        "outputSchema": check_output(),
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": True,
        },
    },
}
