"""Time sources: the injectable clock and the evidence timestamp format."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["Clock", "SystemClock", "format_utc_ms"]


class Clock(Protocol):
    """Where the client reads time; tests inject a fake one.

    ``now`` stamps the observation and resolves an HTTP-date ``Retry-After``;
    ``monotonic`` measures the deadline.
    """

    def now(self) -> datetime:
        """Return the current time as a timezone-aware UTC datetime."""
        ...

    def monotonic(self) -> float:
        """Return a monotonic reading in seconds."""
        ...


class SystemClock:
    """The real clock: :func:`datetime.now` in UTC and :func:`time.monotonic`."""

    def now(self) -> datetime:
        """Return the current UTC time."""
        return datetime.now(UTC)

    def monotonic(self) -> float:
        """Return :func:`time.monotonic`."""
        return time.monotonic()


def format_utc_ms(moment: datetime) -> str:
    """Format *moment* as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC, milliseconds, truncated).

    Raises:
        ValueError: *moment* is naive; a clock must return aware datetimes.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("the clock returned a naive datetime; it must be timezone-aware")
    utc = moment.astimezone(UTC)
    return f"{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"
