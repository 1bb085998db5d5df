"""The provider record of one search: what was asked and what OpenAlex said."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

__all__ = ["PROVENANCE_HEADERS", "Capture", "ProviderAttempt", "ProviderObservation"]

#: Response headers recorded for provenance (lower-case), besides every ``x-ratelimit-*``.
PROVENANCE_HEADERS = frozenset(
    {"content-type", "content-encoding", "retry-after", "date", "x-openalex-edge-reject"}
)


class Capture(StrEnum):
    """What :attr:`ProviderObservation.body_json` holds, and why."""

    #: No request was made (configuration error).
    NOT_ATTEMPTED = "not_attempted"
    #: The request failed before a status line arrived (timeout, transport error).
    NO_RESPONSE = "no_response"
    #: A status arrived but the body was deliberately not read (redirect,
    #: unsupported Content-Encoding, declared length over the ceiling).
    BODY_NOT_READ = "body_not_read"
    #: Reading stopped part-way (too large, timeout, broken connection, corrupt compression).
    BODY_INCOMPLETE_NOT_RETAINED = "body_incomplete_not_retained"
    #: The complete body was not UTF-8 JSON, or nested too deep; it is not kept.
    NON_JSON_BODY_NOT_RETAINED = "non_json_body_not_retained"
    #: The parsed JSON body, secrets redacted; stored re-encoded canonically, not as the wire bytes.
    PARSED_JSON = "parsed_json_with_secret_redaction_not_wire_bytes"
    #: JSON whose secret could not be removed (it spans JSON structure); withheld.
    JSON_WITHHELD = "json_body_withheld_secret_not_removable"


class ProviderAttempt(BaseModel):
    """The single HTTP exchange of a search."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: str
    #: The URL sent. The key never travels in it; secrets are redacted anyway.
    url: str
    #: Aware moments from the injectable clock (a naive one is refused): the
    #: evidence writer's caller formats them (``verify_file.format_timestamp``).
    started_at: AwareDatetime
    finished_at: AwareDatetime
    #: Headers sent, lower-case names; the ``authorization`` value is ``Bearer REDACTED``.
    request_headers: dict[str, str]
    http_status: int | None
    #: Provenance response headers, lower-case names, values as received after redaction.
    response_headers: dict[str, str]
    #: Decoded body bytes read (up to the point reading stopped); ``None`` if not read.
    body_bytes: int | None
    #: Bytes read from the wire after transfer decoding, before content decoding.
    wire_bytes: int | None
    #: On failure only: an exception type name or a :class:`ProviderReason` value.
    error_type: str | None

    def to_record(self) -> dict[str, Any]:
        """Return the attempt's fields as values.

        Every value is JSON-ready except ``started_at`` and ``finished_at``,
        which stay aware :class:`~datetime.datetime` values: their text form
        belongs to the record format, not to this package.
        """
        return self.model_dump()


class ProviderObservation(BaseModel):
    """The provider record to persist next to a search.

    The server writes ``{**observation.record_fields(), "observed_json":
    body_json}`` when :attr:`has_body`; the evidence writer encodes it, once.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Literal["openalex"] = "openalex"
    capture: Capture
    pagination: Literal[False] = False
    max_attempts: Literal[1] = 1
    #: ``None`` when no request was made.
    attempt: ProviderAttempt | None
    #: The parsed body with secrets scrubbed, as a JSON value (shared, not
    #: copied: do not change it); ``None`` unless :attr:`has_body`.
    body_json: Any = Field(default=None, repr=False)

    def record_fields(self) -> dict[str, Any]:
        """Return everything except the body, as values.

        Keys: ``provider``, ``capture``, ``pagination``, ``max_attempts`` and
        ``attempts`` (a list with zero or one :meth:`ProviderAttempt.to_record`,
        whose times are aware datetimes).
        """
        return {
            "provider": self.provider,
            "capture": self.capture.value,
            "pagination": self.pagination,
            "max_attempts": self.max_attempts,
            "attempts": [] if self.attempt is None else [self.attempt.to_record()],
        }

    @property
    def has_body(self) -> bool:
        """Whether :attr:`body_json` holds the body (JSON ``null`` is a body too)."""
        return self.capture is Capture.PARSED_JSON
