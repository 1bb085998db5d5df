"""Time sources: the injectable clock.

Times leave this package as aware :class:`~datetime.datetime` values; the
evidence format's text form is ``notanda_evidence.verify_file.format_timestamp``,
which the server applies.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["Clock", "SystemClock"]


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
