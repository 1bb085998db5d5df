"""Reading ``Retry-After`` and telling throttling from an exhausted budget.

The notanda core decides "budget exhausted" from ``X-RateLimit-Remaining``
alone, but OpenAlex's proxy sends ``X-RateLimit-Remaining: 0`` on an ordinary
per-second 429 too. The evidence used here, strongest first, is the body text,
a short ``Retry-After``, the USD budget headers and finally a very long
``Retry-After``; ``X-RateLimit-Remaining`` is never decisive.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from ._errors import ProviderReason

__all__ = ["classify_429", "parse_retry_after"]

_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")

#: A ``Retry-After`` at or below this is a burst throttle whatever else is said.
THROTTLE_MAX_RETRY_AFTER_S = 2.0
#: With no other evidence, a ``Retry-After`` at least this long means the daily budget.
BUDGET_MIN_RETRY_AFTER_S = 3600.0

_BUDGET_PHRASES = ("insufficient budget",)
_THROTTLE_PHRASES = ("per second", "slow down")


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Return the delay a ``Retry-After`` value asks for, in seconds.

    Accepts delay-seconds (digits, optionally with a fraction) and an HTTP-date,
    which is resolved against *now* (from the injectable clock). A date in the
    past gives 0. Anything else gives ``None``.
    """
    if value is None:
        return None
    text = value.strip()
    if _SECONDS.fullmatch(text):
        seconds = float(text)
        return seconds if math.isfinite(seconds) else None
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - now).total_seconds())


def _usd(headers: Mapping[str, str], name: str) -> float | None:
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def classify_429(
    headers: Mapping[str, str], body_text: str | None, retry_after_s: float | None
) -> ProviderReason:
    """Classify an HTTP 429 as ``rate_limited`` or ``budget_exhausted``.

    Args:
        headers: Response headers with lower-case names.
        body_text: The decoded body, JSON or not, if it was read.
        retry_after_s: The parsed ``Retry-After``, if any.
    """
    lowered = body_text.lower() if body_text else ""
    if any(phrase in lowered for phrase in _BUDGET_PHRASES):
        return ProviderReason.BUDGET_EXHAUSTED
    if any(phrase in lowered for phrase in _THROTTLE_PHRASES):
        return ProviderReason.RATE_LIMITED
    if retry_after_s is not None and retry_after_s <= THROTTLE_MAX_RETRY_AFTER_S:
        return ProviderReason.RATE_LIMITED
    remaining = _usd(headers, "x-ratelimit-remaining-usd")
    required = _usd(headers, "x-ratelimit-cost-required-usd")
    prepaid = _usd(headers, "x-ratelimit-prepaid-remaining-usd") or 0.0
    if remaining is not None and required is not None and remaining + prepaid < required:
        return ProviderReason.BUDGET_EXHAUSTED
    if retry_after_s is not None and retry_after_s >= BUDGET_MIN_RETRY_AFTER_S:
        return ProviderReason.BUDGET_EXHAUSTED
    return ProviderReason.RATE_LIMITED
