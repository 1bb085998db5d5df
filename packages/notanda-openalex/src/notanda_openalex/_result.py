"""The outcome of one request to OpenAlex: works, or a failure, plus the provider observation.

A search is one such request; a reference check makes several
(:attr:`CheckAttempt.failure` is a :class:`ProviderFailure` too).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ._errors import ConfigurationDetail, ErrorCode, ProviderReason
from ._observation import ProviderObservation
from ._works import Work

__all__ = ["ProviderFailure", "ProviderResult", "SearchFailure", "SearchResult"]


class ProviderFailure(BaseModel):
    """Why a request to OpenAlex (a search, or one of a check's) returned no works.

    Also why a check failed as a whole (:attr:`ReferenceCheck.failure`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: ErrorCode
    #: For ``provider_error`` only.
    reason: ProviderReason | None = None
    #: For ``configuration_error`` only.
    detail: ConfigurationDetail | None = None
    #: The HTTP status when a response arrived.
    http_status: int | None = None
    #: Seconds to wait, when the provider sent a parseable ``Retry-After``.
    retry_after_s: float | None = None

    def to_record(self) -> dict[str, Any]:
        """Return ``{"code", "reason", "detail", "http_status", "retry_after_s"}``.

        All five keys are always present; the ones that do not apply are ``null``.
        """
        return {
            "code": self.code.value,
            "reason": None if self.reason is None else self.reason.value,
            "detail": None if self.detail is None else self.detail.value,
            "http_status": self.http_status,
            "retry_after_s": self.retry_after_s,
        }


class ProviderResult(BaseModel):
    """The result of one request to OpenAlex: :meth:`OpenAlexClient.search`'s, or a check's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    #: In the provider's order; empty on error.
    works: list[Work]
    #: ``meta.count`` from the provider, when it is a non-negative integer.
    total_count: int | None
    #: Entries of ``results`` (within the limit) dropped because they had no valid work ID.
    skipped_count: int = 0
    error: ProviderFailure | None
    observation: ProviderObservation

    def to_record(self) -> dict[str, Any]:
        """Return the JSON-safe result without the observation."""
        return {
            "ok": self.ok,
            "works": [work.to_record() for work in self.works],
            "total_count": self.total_count,
            "skipped_count": self.skipped_count,
            "error": None if self.error is None else self.error.to_record(),
        }


#: Deprecated alias of :class:`ProviderFailure`: kept for one release, then removed.
SearchFailure = ProviderFailure
#: Deprecated alias of :class:`ProviderResult`: kept for one release, then removed.
SearchResult = ProviderResult
