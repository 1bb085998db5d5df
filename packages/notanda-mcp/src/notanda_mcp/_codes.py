"""The codes a tool answer carries: its ``status``, its ``error`` and their companions.

A leaf module: the published schemas (``_schemas``), the service, the server
and the resources import these enums, and it imports none of them. The values
are the wire contract (also that of 0.1.0b2 and 0.1.0b3), listed with their
remedies in ``docs/errors.md``; renaming one is a breaking change.
:func:`error_answer` is the one builder of an error answer's content, whether
it is stored in ``response.json`` or only sent.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

__all__ = [
    "AnswerStatus",
    "BusyReason",
    "RecordState",
    "SchemaReason",
    "ToolError",
    "error_answer",
]


class AnswerStatus(StrEnum):
    """The ``status`` of every answer."""

    OK = "ok"
    ERROR = "error"
    #: ``get_evidence`` only: the record has no manifest.
    INCOMPLETE = "incomplete"


class ToolError(StrEnum):
    """Every ``error`` code a tool answer can carry."""

    INVALID_ARGUMENTS = "invalid_arguments"
    CONFIGURATION_ERROR = "configuration_error"
    PROVIDER_ERROR = "provider_error"
    SERVER_BUSY = "server_busy"
    EVIDENCE_STORAGE_UNAVAILABLE = "evidence_storage_unavailable"
    EVIDENCE_LOG_UNAVAILABLE = "evidence_log_unavailable"
    SHUTTING_DOWN = "shutting_down"
    INTERNAL_ERROR = "internal_error"
    INVALID_EVIDENCE_ID = "invalid_evidence_id"
    NOT_FOUND = "not_found"
    INTEGRITY_FAILURE = "integrity_failure"
    UNSUPPORTED_SCHEMA_VERSION = "unsupported_schema_version"
    RECEIPT_MISMATCH = "receipt_mismatch"
    LOG_MISMATCH = "log_mismatch"


class RecordState(StrEnum):
    """``record_state`` of a ``shutting_down`` answer: how far its record got."""

    SEALED = "sealed"
    INCOMPLETE = "incomplete"


class BusyReason(StrEnum):
    """The ``reason`` of a ``server_busy`` answer."""

    NO_SEARCH_SLOT = "no_search_slot_before_deadline"


class SchemaReason(StrEnum):
    """The ``reason`` of an ``invalid_arguments`` answer the published input schema refused.

    ``schema_`` and the JSON Schema keyword that failed: one member per
    assertion keyword the input schemas use (a test keeps them complete).
    """

    TYPE = "schema_type"
    REQUIRED = "schema_required"
    ADDITIONAL_PROPERTIES = "schema_additionalProperties"
    ENUM = "schema_enum"
    PATTERN = "schema_pattern"
    MIN_LENGTH = "schema_minLength"
    MAX_LENGTH = "schema_maxLength"
    MINIMUM = "schema_minimum"
    MAXIMUM = "schema_maximum"
    MIN_ITEMS = "schema_minItems"
    MAX_ITEMS = "schema_maxItems"
    UNIQUE_ITEMS = "schema_uniqueItems"


def error_answer(code: str, **fields: Any) -> dict[str, Any]:
    """The content of an answer that failed with *code*: ``error``, ``status`` and *fields*.

    *code* is a :class:`ToolError`, or a code another package owns that the
    answer passes on (a record's outcome, a provider's error code), given as
    its value. *fields* are the code's companions (``evidence_id``,
    ``reason``, ``persisted``, ...), each as the answer holds it; the remedy
    is added when answering (``Reply``), never here, so it is never stored.
    """
    if "error" in fields or "status" in fields:
        raise TypeError("error and status are the code's: give the companions only")
    content = {**fields, "error": str(code), "status": AnswerStatus.ERROR.value}
    return dict(sorted(content.items()))
