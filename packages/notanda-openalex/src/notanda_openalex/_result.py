"""The outcome of one search: works, or a failure, plus the provider observation."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ._errors import ConfigurationDetail, ErrorCode, ProviderReason
from ._observation import ProviderObservation
from ._works import Work

__all__ = ["SearchFailure", "SearchResult"]


class SearchFailure(BaseModel):
    """Why a search returned no works."""

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


class SearchResult(BaseModel):
    """The result of :meth:`OpenAlexClient.search`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    #: In the provider's order; empty on error.
    works: list[Work]
    #: ``meta.count`` from the provider, when it is a non-negative integer.
    total_count: int | None
    #: Entries of ``results`` (within the limit) dropped because they had no valid work ID.
    skipped_count: int = 0
    error: SearchFailure | None
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
