"""From what the network layer observed to a :class:`ProviderResult`. Pure.

:func:`result_from_exchange` is a function of the status, headers, body bytes,
the time and the secrets: no I/O. It looks at the body's bytes once for
anything scrubbing could change, decodes them once (UTF-8, strict), parses
them once, walks the parsed value only when the look found something, and
builds the works from that value, which the observation carries to the
evidence writer: nothing here encodes it. The raw body is released as soon as
it is decoded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from ._clock import Clock
from ._decode import decode_json_text
from ._errors import ErrorCode, ProviderReason
from ._observation import PROVENANCE_HEADERS, Capture, ProviderAttempt, ProviderObservation
from ._query import SearchRequest
from ._ratelimit import classify_429, parse_retry_after
from ._result import ProviderFailure, ProviderResult
from ._secrets import BodyLook, SecretScrubber
from ._works import Work, normalize_work

__all__ = ["AttemptStart", "DepthCheck", "Exchange", "result_from_body", "result_from_exchange"]

HeaderInput = httpx.Headers | Mapping[str, str] | Iterable[tuple[str, str]]
#: The caller's nesting limit: True when a decoded body nests too deep to keep.
DepthCheck = Callable[[bytes | bytearray], bool]


@dataclass(frozen=True, slots=True)
class AttemptStart:
    """What is known about the attempt before the response."""

    method: str
    url: str
    started_at: datetime
    request_headers: dict[str, str]


@dataclass(slots=True)
class Exchange:
    """What the network layer observed.

    ``body`` is the complete decoded body, or ``None`` when it was not read
    completely; :func:`result_from_exchange` takes it out of the object so that
    the only reference is released as early as possible.
    """

    status: int | None
    headers: HeaderInput = field(default_factory=list)
    body: bytes | bytearray | None = None
    body_bytes: int | None = None
    wire_bytes: int | None = None
    #: Set when reading failed or was refused; a body problem for a 2xx status.
    problem: ProviderReason | None = None
    #: The capture to record when ``body`` is ``None``.
    capture: Capture | None = None
    #: Exception type name behind ``problem``, if any.
    error_type: str | None = None


def _reject_constant(name: str) -> Any:
    raise ValueError("NaN and Infinity are not JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise ValueError("a number too large for JSON's finite doubles")
    return number


def _parse(text: str) -> Any:
    """Parse strictly: NaN, Infinity and numbers that overflow to infinity are refused.

    The evidence writer refuses infinity too; finding it here makes the body
    a ``malformed_json`` failure instead of an unwritable record. The float
    hook costs little: pages hold far fewer numbers with a fraction or an
    exponent than characters.
    """
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)


def _header_pairs(headers: HeaderInput) -> list[tuple[str, str]]:
    if isinstance(headers, httpx.Headers):
        return [(name.lower(), value) for name, value in headers.multi_items()]
    if isinstance(headers, Mapping):
        return [(str(name).lower(), str(value)) for name, value in headers.items()]
    return [(str(name).lower(), str(value)) for name, value in headers]


def _merged_headers(pairs: list[tuple[str, str]]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for name, value in pairs:
        merged[name] = f"{merged[name]}, {value}" if name in merged else value
    return merged


def _provenance_headers(headers: dict[str, str], scrubber: SecretScrubber) -> dict[str, str]:
    return {
        name: scrubber.scrub_text(value)
        for name, value in sorted(headers.items())
        if name in PROVENANCE_HEADERS or name.startswith("x-ratelimit-")
    }


def _status_reason(
    status: int, headers: dict[str, str], text: str | None, retry_after_s: float | None
) -> ProviderReason:
    if 300 <= status < 400:
        return ProviderReason.REDIRECT
    if status == 429:
        return classify_429(headers, text, retry_after_s)
    return ProviderReason.HTTP_ERROR


@dataclass(slots=True)
class _Works:
    works: list[Work]
    skipped: int
    total: int | None


def _works(value: Any, limit: int, scrubber: SecretScrubber) -> _Works | None:
    if not isinstance(value, dict):
        return None
    results = value.get("results")
    if not isinstance(results, list):
        return None
    meta = value.get("meta")
    count = meta.get("count") if isinstance(meta, dict) else None
    total = count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None
    works: list[Work] = []
    skipped = 0
    # A provider that ignores per-page cannot make the result longer than asked.
    for record in results[:limit]:
        work = normalize_work(record, scrubber)
        if work is None:
            skipped += 1
        else:
            works.append(work)
    return _Works(works, skipped, total)


def result_from_exchange(
    exchange: Exchange,
    *,
    limit: int,
    attempt: AttemptStart,
    finished_at: datetime,
    scrubber: SecretScrubber,
    now: datetime,
    too_deep: DepthCheck | None = None,
) -> ProviderResult:
    """Build the result and observation of one exchange.

    Args:
        exchange: What the network layer observed; its body is taken out.
        limit: The effective limit: at most this many ``results`` entries are used.
        attempt: The request side of the attempt record.
        finished_at: When the exchange ended (aware).
        scrubber: The secrets to keep out of everything returned.
        now: The current time, to resolve an HTTP-date ``Retry-After``.
        too_deep: The caller's nesting limit, checked before parsing; a body
            it refuses is a ``too_deep`` failure and is not kept.
    """
    status = exchange.status
    headers = _merged_headers(_header_pairs(exchange.headers))
    body, exchange.body = exchange.body, None
    problem = exchange.problem
    error_type = exchange.error_type
    capture = exchange.capture
    body_bytes = exchange.body_bytes
    text: str | None = None
    parsed: Any = None
    has_json = False
    look = BodyLook.SECRETS

    if body is not None:
        body_bytes = len(body)
        if too_deep is not None and too_deep(body):
            problem, error_type = ProviderReason.TOO_DEEP, ProviderReason.TOO_DEEP.value
        else:
            look = scrubber.look_at_body(body)
            try:
                text = decode_json_text(body)
            except UnicodeDecodeError as exc:
                problem, error_type = ProviderReason.UNDECODABLE, type(exc).__name__
        del body
        if text is not None:
            try:
                parsed = _parse(text)
                has_json = True
            except (ValueError, RecursionError) as exc:
                problem, error_type = ProviderReason.MALFORMED_JSON, type(exc).__name__
        capture = Capture.NON_JSON_BODY_NOT_RETAINED

    retry_after_s: float | None = None
    status_reason: ProviderReason | None = None
    if status is not None and not 200 <= status < 300:
        retry_after_s = parse_retry_after(headers.get("retry-after"), now)
        status_reason = _status_reason(status, headers, text, retry_after_s)
    text = None

    value: Any = None
    if has_json:
        value = scrubber.scrub_parsed(parsed, look)
        capture = Capture.JSON_WITHHELD if scrubber.withholds_json else Capture.PARSED_JSON
        parsed = None

    reason: ProviderReason | None
    page: _Works | None = None
    if status is None:
        reason = problem or ProviderReason.TRANSPORT_ERROR
        capture = capture or Capture.NO_RESPONSE
    elif status_reason is not None:
        reason = status_reason
    elif problem is not None:
        reason = problem
    else:
        page = _works(value, limit, scrubber)
        reason = None if page is not None else ProviderReason.UNEXPECTED_SHAPE

    failure: ProviderFailure | None = None
    if reason is not None:
        failure = ProviderFailure(
            code=ErrorCode.PROVIDER_ERROR,
            reason=reason,
            http_status=status,
            retry_after_s=retry_after_s,
        )
        error_type = error_type or reason.value
    else:
        error_type = None

    observation = ProviderObservation(
        capture=capture or Capture.BODY_NOT_READ,
        attempt=ProviderAttempt(
            method=attempt.method,
            url=attempt.url,
            started_at=attempt.started_at,
            finished_at=finished_at,
            request_headers=attempt.request_headers,
            http_status=status,
            response_headers=_provenance_headers(headers, scrubber),
            body_bytes=body_bytes,
            wire_bytes=exchange.wire_bytes,
            error_type=error_type,
        ),
        body_json=value if capture is Capture.PARSED_JSON else None,
    )
    if failure is not None or page is None:
        return ProviderResult(
            ok=False,
            works=[],
            total_count=None,
            skipped_count=0,
            error=failure,
            observation=observation,
        )
    return ProviderResult(
        ok=True,
        works=page.works,
        total_count=page.total,
        skipped_count=page.skipped,
        error=None,
        observation=observation,
    )


def result_from_body(
    status: int,
    headers: HeaderInput,
    body: bytes | bytearray,
    *,
    request: SearchRequest,
    clock: Clock,
    secrets: Iterable[str] = (),
    url: str = "",
    request_headers: Mapping[str, str] | None = None,
    too_deep: DepthCheck | None = None,
) -> ProviderResult:
    """Run the body-to-result path on a complete decoded body, without HTTP.

    This is exactly what :meth:`OpenAlexClient.search` does once the body is
    in memory; benchmarks and replay tools call it directly.
    """
    stamp = clock.now()
    scrubber = SecretScrubber(secrets)
    exchange = Exchange(status=status, headers=headers, body=body, wire_bytes=len(body))
    del body
    return result_from_exchange(
        exchange,
        limit=request.effective.limit,
        attempt=AttemptStart(
            method="GET",
            url=url,
            started_at=stamp,
            request_headers=dict(request_headers or {}),
        ),
        finished_at=stamp,
        scrubber=scrubber,
        now=clock.now(),
        too_deep=too_deep,
    )
