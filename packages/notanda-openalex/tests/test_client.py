"""OpenAlexClient.search (``_client.py``) against httpx.MockTransport: every outcome."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from conftest import (
    SECRET_KEY,
    FakeClock,
    fixture_bytes,
    json_response,
    make_client,
)
from notanda_openalex import (
    BODY_CEILING_BYTES,
    DEFAULT_USER_AGENT,
    ENDPOINT,
    Capture,
    ConfigurationDetail,
    ErrorCode,
    OpenAlexClient,
    ProviderReason,
    ProviderResult,
    prepare_search,
)

PAGE = {
    "meta": {"count": 2, "page": 1, "per_page": 5},
    "results": [
        {"id": "https://openalex.org/W1", "doi": "https://doi.org/10.1234/ABC", "title": "One"},
        {"id": "https://openalex.org/W2", "title": "Two"},
    ],
}


def run(
    handler: Any, clock: FakeClock, query: str = "Does X improve Y?", **kwargs: Any
) -> ProviderResult:
    client, recorder = make_client(handler, clock, **kwargs)
    result = client.search(prepare_search(query, 5))
    assert len(recorder.requests) <= 1
    return result


def assert_provider_error(
    result: ProviderResult,
    reason: ProviderReason,
    status: int | None,
    *,
    retry_after: float | None = None,
) -> None:
    assert not result.ok
    assert result.works == []
    assert result.total_count is None
    assert result.error is not None
    assert result.error.code is ErrorCode.PROVIDER_ERROR
    assert result.error.reason is reason
    assert result.error.http_status == status
    assert result.error.retry_after_s == retry_after
    assert result.error.detail is None
    attempt = result.observation.attempt
    assert attempt is not None
    assert attempt.http_status == status
    assert attempt.error_type is not None


class ChunkStream(httpx.SyncByteStream):
    """A response body delivered in given chunks, optionally moving the clock."""

    def __init__(
        self,
        chunks: list[bytes],
        clock: FakeClock | None = None,
        per_chunk_s: float = 0.0,
        fail_after: int | None = None,
    ) -> None:
        self.chunks = chunks
        self.clock = clock
        self.per_chunk_s = per_chunk_s
        self.fail_after = fail_after
        self.iterated = 0
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if self.fail_after is not None and index >= self.fail_after:
                raise httpx.RemoteProtocolError("peer closed connection")
            if self.clock is not None:
                self.clock.advance(self.per_chunk_s)
            self.iterated += 1
            yield chunk

    def close(self) -> None:
        self.closed = True


# --------------------------------------------------------------------- success


def test_one_get_to_the_endpoint_with_explicit_headers(clock: FakeClock) -> None:
    result = None
    client, recorder = make_client(lambda request: json_response(PAGE), clock)
    result = client.search(prepare_search("Does X improve Y?", 5))
    assert result.ok
    (request,) = recorder.requests
    assert request.method == "GET"
    assert str(request.url).startswith(ENDPOINT + "?")
    assert request.url.params.multi_items() == [
        ("search", "Does X improve Y"),
        ("filter", "has_doi:true,is_oa:true"),
        ("per-page", "5"),
        (
            "select",
            "id,doi,title,publication_year,publication_date,authorships,is_authors_truncated,"
            "primary_location,biblio,type,language,open_access,is_retracted,cited_by_count",
        ),
    ]
    assert request.headers.raw == [
        (b"Host", b"api.openalex.org"),
        (b"Accept", b"application/json"),
        (b"Accept-Encoding", b"gzip, deflate"),
        (b"User-Agent", DEFAULT_USER_AGENT.encode("ascii")),
        (b"Authorization", f"Bearer {SECRET_KEY}".encode("ascii")),
    ]
    assert SECRET_KEY not in str(request.url)
    assert [work.openalex_id for work in result.works] == ["W1", "W2"]
    assert result.works[0].doi == "10.1234/abc"
    assert result.total_count == 2
    assert result.skipped_count == 0


def test_observation_of_a_success(clock: FakeClock) -> None:
    body = json.dumps(PAGE).encode()

    def handler(request: httpx.Request) -> httpx.Response:
        clock.advance(0.25)
        return httpx.Response(
            200,
            content=body,
            headers={
                "Content-Type": "application/json",
                "Date": "Fri, 22 May 2026 12:00:00 GMT",
                "X-RateLimit-Limit-USD": "1",
                "X-RateLimit-Remaining-USD": "0.999",
                "X-RateLimit-Cost-USD": "0.001",
                "X-RateLimit-Remaining": "9990",
                "Set-Cookie": "session=abc",
                "Server": "cloudflare",
            },
        )

    result = run(handler, clock)
    observation = result.observation
    assert observation.capture is Capture.PARSED_JSON
    fields = observation.record_fields()
    assert fields["provider"] == "openalex"
    assert fields["capture"] == "parsed_json_with_secret_redaction_not_wire_bytes"
    assert fields["pagination"] is False
    assert fields["max_attempts"] == 1
    (attempt,) = fields["attempts"]
    assert attempt["method"] == "GET"
    # Values, not text: the server formats them for the record.
    assert attempt["started_at"] == datetime(2026, 5, 22, 12, 0, 0, 123456, tzinfo=UTC)
    assert attempt["finished_at"] == datetime(2026, 5, 22, 12, 0, 0, 373456, tzinfo=UTC)
    assert attempt["http_status"] == 200
    assert attempt["response_headers"] == {
        "content-type": "application/json",
        "date": "Fri, 22 May 2026 12:00:00 GMT",
        "x-ratelimit-cost-usd": "0.001",
        "x-ratelimit-limit-usd": "1",
        "x-ratelimit-remaining": "9990",
        "x-ratelimit-remaining-usd": "0.999",
    }
    assert attempt["request_headers"]["authorization"] == "Bearer REDACTED"
    assert attempt["body_bytes"] == len(body)
    assert attempt["wire_bytes"] == len(body)
    assert attempt["error_type"] is None
    assert observation.has_body
    assert observation.body_json == PAGE
    # Everything but the two times is JSON-ready as it is.
    times = {"started_at", "finished_at"}
    json.dumps({**fields, "attempts": [{k: v for k, v in attempt.items() if k not in times}]})


class _NaiveClock(FakeClock):
    def now(self) -> datetime:
        return super().now().replace(tzinfo=None)


def test_a_naive_clock_is_refused() -> None:
    # Which zone a naive moment means is a guess; the attempt never records one.
    with pytest.raises(ValueError, match="timezone"):
        run(lambda request: json_response(PAGE), _NaiveClock())


def test_keyless_mode_sends_no_authorization(clock: FakeClock) -> None:
    client, recorder = make_client(
        lambda request: json_response(PAGE), clock, api_key=None, allow_keyless=True
    )
    assert client.search(prepare_search("q")).ok
    (request,) = recorder.requests
    assert "authorization" not in request.headers


def test_key_whitespace_is_trimmed(clock: FakeClock) -> None:
    client, recorder = make_client(lambda request: json_response(PAGE), clock, api_key=" k-1 \n")
    assert client.search(prepare_search("q")).ok
    assert recorder.requests[0].headers["authorization"] == "Bearer k-1"


# ------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("api_key", "detail"),
    [
        (None, ConfigurationDetail.MISSING_API_KEY),
        ("", ConfigurationDetail.MISSING_API_KEY),
        ("  \n", ConfigurationDetail.MISSING_API_KEY),
        ("two words", ConfigurationDetail.INVALID_API_KEY),
        ("line\nbreak", ConfigurationDetail.INVALID_API_KEY),
        ("clé", ConfigurationDetail.INVALID_API_KEY),
    ],
)
def test_configuration_refusals_make_no_request(
    api_key: str | None, detail: ConfigurationDetail, clock: FakeClock
) -> None:
    client, recorder = make_client(lambda request: json_response(PAGE), clock, api_key=api_key)
    assert client.configuration_problem is detail
    result = client.search(prepare_search("q"))
    assert recorder.requests == []
    assert not result.ok
    assert result.error is not None
    assert result.error.to_record() == {
        "code": "configuration_error",
        "reason": None,
        "detail": detail.value,
        "http_status": None,
        "retry_after_s": None,
    }
    assert result.observation.capture is Capture.NOT_ATTEMPTED
    assert result.observation.attempt is None
    assert result.observation.record_fields()["attempts"] == []
    assert not result.observation.has_body


def test_keyless_refused_unless_opted_in(clock: FakeClock) -> None:
    refused, _ = make_client(lambda request: json_response(PAGE), clock, api_key=None)
    assert refused.configuration_problem is ConfigurationDetail.MISSING_API_KEY
    allowed, _ = make_client(
        lambda request: json_response(PAGE), clock, api_key=None, allow_keyless=True
    )
    assert allowed.configuration_problem is None


def test_constructor_rejects_programming_errors() -> None:
    with pytest.raises(ValueError, match="positive"):
        OpenAlexClient(api_key="k", deadline_s=0)
    with pytest.raises(ValueError, match="ASCII"):
        OpenAlexClient(api_key="k", user_agent="bad\r\nua")
    with pytest.raises(ValueError, match="either"):
        OpenAlexClient(
            api_key="k",
            transport=httpx.MockTransport(lambda r: httpx.Response(200)),
            network_backend=object(),  # type: ignore[arg-type]
        )
    with pytest.raises(TypeError):
        OpenAlexClient(api_key="k").search("not a request")  # type: ignore[arg-type]


# ------------------------------------------------------------- HTTP statuses

WILDCARD_400 = {
    "error": "Invalid query parameters error.",
    "message": (
        "Wildcards (* or ?) require exact (no-stem) search. The default search is stemmed, "
        "so the literal text before the wildcard is removed when the work is indexed and the "
        "search returns wrong results. Use the search.exact= parameter instead (or the "
        "default.search.exact filter), e.g. search.exact=does x improve y?."
    ),
}


def test_wildcard_400_is_an_http_error(clock: FakeClock) -> None:
    result = run(lambda request: json_response(WILDCARD_400, 400), clock)
    assert_provider_error(result, ProviderReason.HTTP_ERROR, 400)
    assert result.observation.capture is Capture.PARSED_JSON
    assert result.observation.body_json == WILDCARD_400
    assert result.observation.attempt is not None
    assert result.observation.attempt.error_type == "http_error"


@pytest.mark.parametrize(
    ("status", "fixture"),
    [
        (400, "error_400_works_invalid-filter_2026-05.json"),
        (400, "error_400_works_invalid-select_2026-05.json"),
        (401, "error_401_works_invalid-api-key_2025-11.json"),
        (403, "error_403_works_invalid-filter_2025-08.json"),
    ],
)
def test_real_error_bodies(status: int, fixture: str, clock: FakeClock) -> None:
    body = fixture_bytes(fixture)
    result = run(lambda request: json_response(body, status), clock)
    assert_provider_error(result, ProviderReason.HTTP_ERROR, status)
    assert result.observation.body_json == json.loads(body)


def test_401_invalid_key_body(clock: FakeClock) -> None:
    body = {"error": "Invalid or missing API key", "message": "API key not found"}
    result = run(lambda request: json_response(body, 401), clock)
    assert_provider_error(result, ProviderReason.HTTP_ERROR, 401)


def test_500_html(clock: FakeClock) -> None:
    html = b"<html><body><h1>Internal Server Error</h1></body></html>"
    result = run(
        lambda request: httpx.Response(500, content=html, headers={"Content-Type": "text/html"}),
        clock,
    )
    assert_provider_error(result, ProviderReason.HTTP_ERROR, 500)
    assert result.observation.capture is Capture.NON_JSON_BODY_NOT_RETAINED
    assert not result.observation.has_body


def test_503_with_retry_after_30(clock: FakeClock) -> None:
    body = {"error": "collection resolution unavailable"}
    result = run(lambda request: json_response(body, 503, {"Retry-After": "30"}), clock)
    assert_provider_error(result, ProviderReason.HTTP_ERROR, 503, retry_after=30.0)
    assert result.observation.attempt is not None
    assert result.observation.attempt.response_headers["retry-after"] == "30"


def test_504_gateway_timeout(clock: FakeClock) -> None:
    body = {
        "error": "Gateway timeout",
        "message": "Your query took too long ... You were not charged for this request.",
        "reason": "query_timeout",
    }
    result = run(lambda request: json_response(body, 504), clock)
    assert_provider_error(result, ProviderReason.HTTP_ERROR, 504)


def test_404_html_from_the_fixtures_readme(clock: FakeClock) -> None:
    html = (
        b"<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n"
        b"<p>The requested URL was not found on the server. If you entered the URL manually "
        b"please check your spelling and try again.</p>\n"
    )
    result = run(
        lambda request: httpx.Response(
            404, content=html, headers={"Content-Type": "text/html; charset=utf-8"}
        ),
        clock,
    )
    assert_provider_error(result, ProviderReason.HTTP_ERROR, 404)


# ------------------------------------------------------------------------ 429

PER_SECOND_429_BODY = {
    "error": "Rate limit exceeded",
    "message": "Rate limit exceeded: 30 requests per second. Please slow down.",
    "retryAfter": 0.42,
    "costUsd": 0.001,
    "dailyRemainingUsd": 0,
    "prepaidRemainingUsd": 0,
    "creditsRequired": 10,
    "creditsRemaining": 0,
    "onetimeCreditsRemaining": 0,
}
PER_SECOND_429_HEADERS = {
    "Retry-After": "1",
    "X-RateLimit-Limit-USD": "1",
    "X-RateLimit-Remaining-USD": "0",
    "X-RateLimit-Prepaid-Remaining-USD": "0",
    "X-RateLimit-Cost-Required-USD": "0.001",
    "X-RateLimit-Limit": "10000",
    "X-RateLimit-Remaining": "0",
    "X-RateLimit-Onetime-Remaining": "0",
    "X-RateLimit-Credits-Required": "10",
    "X-RateLimit-Reset": "43200",
}
BUDGET_429_BODY = {
    "error": "Rate limit exceeded",
    "message": (
        "Insufficient budget. This request costs $0.001 but you only have $0.0005 remaining. "
        "Resets at midnight UTC. Need more? Add funds at https://openalex.org/pricing"
    ),
    "retryAfter": 81471,
    "costUsd": 0.001,
    "dailyRemainingUsd": 0.0005,
    "prepaidRemainingUsd": 0,
    "creditsRequired": 10,
    "creditsRemaining": 5,
    "onetimeCreditsRemaining": 0,
}
BUDGET_429_HEADERS = {
    "Retry-After": "81471",
    "X-RateLimit-Limit-USD": "0.1",
    "X-RateLimit-Remaining-USD": "0.0005",
    "X-RateLimit-Prepaid-Remaining-USD": "0",
    "X-RateLimit-Cost-Required-USD": "0.001",
    "X-RateLimit-Limit": "1000",
    "X-RateLimit-Remaining": "5",
    "X-RateLimit-Credits-Required": "10",
    "X-RateLimit-Reset": "81471",
}


def test_per_second_429_with_remaining_zero_is_rate_limited(clock: FakeClock) -> None:
    # The core reads X-RateLimit-Remaining: 0 as exhaustion; it is a burst throttle.
    result = run(
        lambda request: json_response(PER_SECOND_429_BODY, 429, PER_SECOND_429_HEADERS), clock
    )
    assert_provider_error(result, ProviderReason.RATE_LIMITED, 429, retry_after=1.0)
    assert result.observation.attempt is not None
    headers = result.observation.attempt.response_headers
    assert headers["x-ratelimit-remaining"] == "0"
    assert headers["x-ratelimit-cost-required-usd"] == "0.001"
    assert len([name for name in headers if name.startswith("x-ratelimit-")]) == 9


def test_budget_429_with_remaining_above_zero_is_budget_exhausted(clock: FakeClock) -> None:
    result = run(lambda request: json_response(BUDGET_429_BODY, 429, BUDGET_429_HEADERS), clock)
    assert_provider_error(result, ProviderReason.BUDGET_EXHAUSTED, 429, retry_after=81471.0)


def test_html_429_with_http_date_retry_after(clock: FakeClock) -> None:
    html = (
        b'<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<title>429 Too Many Requests'
        b"</title>\n<h1>Too Many Requests</h1>\n<p>2 per 1 second</p>\n"
    )
    moment = FakeClock(datetime(2025, 10, 6, 19, 20, 41, tzinfo=UTC))
    result = run(
        lambda request: httpx.Response(
            429,
            content=html,
            headers={
                "Content-Type": "text/html; charset=utf-8",
                "Retry-After": "Mon, 06 Oct 2025 19:20:42 GMT",
                "X-Ratelimit-Limit": "2",
                "X-Ratelimit-Remaining": "0",
            },
        ),
        moment,
    )
    assert_provider_error(result, ProviderReason.RATE_LIMITED, 429, retry_after=1.0)
    assert result.observation.capture is Capture.NON_JSON_BODY_NOT_RETAINED


@pytest.mark.parametrize(
    ("headers", "body", "reason", "retry_after"),
    [
        ({}, b"", ProviderReason.RATE_LIMITED, None),
        ({"Retry-After": "5", "X-RateLimit-Remaining": "0"}, b"", ProviderReason.RATE_LIMITED, 5.0),
        ({"Retry-After": "40000"}, b"", ProviderReason.BUDGET_EXHAUSTED, 40000.0),
        (
            {
                "Retry-After": "120",
                "X-RateLimit-Remaining-USD": "0.0004",
                "X-RateLimit-Prepaid-Remaining-USD": "0.0005",
                "X-RateLimit-Cost-Required-USD": "0.001",
            },
            b"",
            ProviderReason.BUDGET_EXHAUSTED,
            120.0,
        ),
        (
            {
                "Retry-After": "120",
                "X-RateLimit-Remaining-USD": "0.0004",
                "X-RateLimit-Prepaid-Remaining-USD": "0.5",
                "X-RateLimit-Cost-Required-USD": "0.001",
            },
            b"",
            ProviderReason.RATE_LIMITED,
            120.0,
        ),
        ({"Retry-After": "0.5"}, b"insufficient budget", ProviderReason.BUDGET_EXHAUSTED, 0.5),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, b"", ProviderReason.RATE_LIMITED, 0.0),
        ({"Retry-After": "soon"}, b"", ProviderReason.RATE_LIMITED, None),
    ],
)
def test_429_classification(
    headers: dict[str, str],
    body: bytes,
    reason: ProviderReason,
    retry_after: float | None,
    clock: FakeClock,
) -> None:
    result = run(lambda request: httpx.Response(429, content=body, headers=headers), clock)
    assert_provider_error(result, reason, 429, retry_after=retry_after)


# ------------------------------------------------------------------- redirect


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_is_never_followed(status: int, clock: FakeClock) -> None:
    location = f"https://evil.example/works?api_key={SECRET_KEY}&next=1"
    stream = ChunkStream([b"<a href='https://evil.example/'>moved</a>"])

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.host == "api.openalex.org"
        return httpx.Response(status, headers={"Location": location}, stream=stream)

    client, recorder = make_client(handler, clock)
    result = client.search(prepare_search("q"))
    assert len(recorder.requests) == 1
    assert_provider_error(result, ProviderReason.REDIRECT, status)
    assert result.observation.capture is Capture.BODY_NOT_READ
    assert stream.iterated == 0
    recorded = json.dumps(result.observation.record_fields(), default=str) + json.dumps(
        result.to_record()
    )
    assert "evil.example" not in recorded
    assert result.observation.attempt is not None
    assert "location" not in result.observation.attempt.response_headers


# -------------------------------------------------------------- body problems


@pytest.mark.parametrize(
    ("body", "reason", "capture"),
    [
        (b"not json at all", ProviderReason.MALFORMED_JSON, Capture.NON_JSON_BODY_NOT_RETAINED),
        (b"<html>oops</html>", ProviderReason.MALFORMED_JSON, Capture.NON_JSON_BODY_NOT_RETAINED),
        (b"", ProviderReason.MALFORMED_JSON, Capture.NON_JSON_BODY_NOT_RETAINED),
        (
            b'{"results": [], "x": NaN}',
            ProviderReason.MALFORMED_JSON,
            Capture.NON_JSON_BODY_NOT_RETAINED,
        ),
        (
            b'{"results": [Infinity]}',
            ProviderReason.MALFORMED_JSON,
            Capture.NON_JSON_BODY_NOT_RETAINED,
        ),
        (b"\xef\xbb\xbf{}", ProviderReason.MALFORMED_JSON, Capture.NON_JSON_BODY_NOT_RETAINED),
        (b'{"a": 1', ProviderReason.MALFORMED_JSON, Capture.NON_JSON_BODY_NOT_RETAINED),
        (
            b"[" * 100_000 + b"]" * 100_000,
            ProviderReason.MALFORMED_JSON,
            Capture.NON_JSON_BODY_NOT_RETAINED,
        ),
        (b'{"title": "\xff\xfe"}', ProviderReason.UNDECODABLE, Capture.NON_JSON_BODY_NOT_RETAINED),
        (
            b'{"title": "\xed\xa0\x80"}',
            ProviderReason.UNDECODABLE,
            Capture.NON_JSON_BODY_NOT_RETAINED,
        ),
        (b"[1, 2, 3]", ProviderReason.UNEXPECTED_SHAPE, Capture.PARSED_JSON),
        (b'"a string"', ProviderReason.UNEXPECTED_SHAPE, Capture.PARSED_JSON),
        (b"null", ProviderReason.UNEXPECTED_SHAPE, Capture.PARSED_JSON),
        (b'{"meta": {"count": 1}}', ProviderReason.UNEXPECTED_SHAPE, Capture.PARSED_JSON),
        (b'{"results": {"0": {}}}', ProviderReason.UNEXPECTED_SHAPE, Capture.PARSED_JSON),
        (b'{"results": "none"}', ProviderReason.UNEXPECTED_SHAPE, Capture.PARSED_JSON),
    ],
)
def test_unusable_200_bodies(
    body: bytes, reason: ProviderReason, capture: Capture, clock: FakeClock
) -> None:
    result = run(lambda request: httpx.Response(200, content=body), clock)
    assert_provider_error(result, reason, 200)
    assert result.observation.capture is capture
    if capture is Capture.PARSED_JSON:
        assert result.observation.body_json == json.loads(body)
    else:
        assert not result.observation.has_body


def test_wrong_shaped_records_are_skipped_and_counted(clock: FakeClock) -> None:
    page = {
        "meta": {"count": "many"},
        "results": [
            "a string",
            {"title": "no id"},
            {"id": 12345},
            {"id": "https://evil.example/W1"},
            {"id": "https://openalex.org/A123"},
            {"id": "https://openalex.org/W7", "title": 42, "authorships": "nope"},
        ],
    }
    client, _ = make_client(lambda request: json_response(page), clock)
    result = client.search(prepare_search("q", 10))
    assert result.ok
    assert result.total_count is None
    assert result.skipped_count == 5
    (work,) = result.works
    assert work.openalex_id == "W7"
    assert work.title is None
    assert work.authors == []
    assert work.authors_total is None


def test_more_results_than_asked_are_cut_to_the_limit(clock: FakeClock) -> None:
    page = {"results": [{"id": f"https://openalex.org/W{n}"} for n in range(1, 9)]}
    client, _ = make_client(lambda request: json_response(page), clock)
    result = client.search(prepare_search("q", 3))
    assert [work.openalex_id for work in result.works] == ["W1", "W2", "W3"]
    assert result.observation.body_json == page


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, gzip", "gzip;q=1"])
def test_unsupported_content_encoding(encoding: str, clock: FakeClock) -> None:
    stream = ChunkStream([b"\x00\x01"])
    result = run(
        lambda request: httpx.Response(200, headers={"Content-Encoding": encoding}, stream=stream),
        clock,
    )
    assert_provider_error(result, ProviderReason.UNDECODABLE, 200)
    assert result.observation.capture is Capture.BODY_NOT_READ
    assert stream.iterated == 0


def _deflate(data: bytes, wbits: int) -> bytes:
    compressor = zlib.compressobj(wbits=wbits)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("GZIP", gzip.compress),
        ("deflate", lambda data: _deflate(data, zlib.MAX_WBITS)),
        ("deflate", lambda data: _deflate(data, -zlib.MAX_WBITS)),
        ("identity", lambda data: data),
    ],
)
def test_supported_encodings(encoding: str, encode: Any, clock: FakeClock) -> None:
    raw = json.dumps(PAGE).encode()
    wire = encode(raw)
    chunks = [wire[index : index + 7] for index in range(0, len(wire), 7)]
    result = run(
        lambda request: httpx.Response(
            200, headers={"Content-Encoding": encoding}, stream=ChunkStream(chunks)
        ),
        clock,
    )
    assert result.ok
    assert result.observation.body_json == PAGE
    assert result.observation.attempt is not None
    assert result.observation.attempt.body_bytes == len(raw)
    assert result.observation.attempt.wire_bytes == len(wire)


@pytest.mark.parametrize(
    "wire",
    [
        gzip.compress(json.dumps(PAGE).encode())[:-9],
        gzip.compress(json.dumps(PAGE).encode()) + b"trailing",
        gzip.compress(json.dumps(PAGE).encode()) * 2,
        b"\x1f\x8b\x08\x00garbage-not-deflate",
        b"",
    ],
    ids=["truncated", "trailing-garbage", "two-members", "corrupt", "empty"],
)
def test_corrupt_gzip_is_undecodable(wire: bytes, clock: FakeClock) -> None:
    result = run(
        lambda request: httpx.Response(
            200, headers={"Content-Encoding": "gzip"}, stream=ChunkStream([wire])
        ),
        clock,
    )
    assert_provider_error(result, ProviderReason.UNDECODABLE, 200)
    assert not result.observation.has_body


def _padded_page(size: int) -> bytes:
    head = b'{"meta":{"count":0},"results":[],"pad":"'
    tail = b'"}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def test_body_at_the_ceiling_is_accepted(clock: FakeClock) -> None:
    body = _padded_page(BODY_CEILING_BYTES)
    assert len(body) == BODY_CEILING_BYTES
    result = run(lambda request: httpx.Response(200, stream=ChunkStream([body])), clock)
    assert result.ok
    assert result.observation.attempt is not None
    assert result.observation.attempt.body_bytes == BODY_CEILING_BYTES


def test_oversized_page_is_too_large(clock: FakeClock) -> None:
    body = _padded_page(BODY_CEILING_BYTES + 1)
    chunks = [body[index : index + 1 << 20] for index in range(0, len(body), 1 << 20)]
    result = run(lambda request: httpx.Response(200, stream=ChunkStream(chunks)), clock)
    assert_provider_error(result, ProviderReason.TOO_LARGE, 200)
    assert result.observation.capture is Capture.BODY_INCOMPLETE_NOT_RETAINED
    assert not result.observation.has_body
    assert result.observation.attempt is not None
    assert result.observation.attempt.body_bytes == BODY_CEILING_BYTES + 1


def test_a_body_the_callers_depth_check_refuses_is_too_deep_and_not_parsed(
    clock: FakeClock,
) -> None:
    deep = b'{"meta":{"count":0},"results":[' + b"[" * 100_000 + b"]" * 100_000 + b"]}"
    seen: list[int] = []

    def too_deep(body: bytes | bytearray) -> bool:
        seen.append(len(body))
        return True

    client, _ = make_client(lambda request: httpx.Response(200, content=deep), clock)
    result = client.search(prepare_search("deep", 5), too_deep=too_deep)
    assert_provider_error(result, ProviderReason.TOO_DEEP, 200)
    assert seen == [len(deep)]  # the decoded body, once, before any parsing
    assert result.observation.capture is Capture.NON_JSON_BODY_NOT_RETAINED
    assert not result.observation.has_body
    assert result.observation.attempt is not None
    assert result.observation.attempt.error_type == "too_deep"
    assert result.observation.attempt.body_bytes == len(deep)


def test_a_body_the_depth_check_passes_is_parsed_as_before(clock: FakeClock) -> None:
    body = json.dumps(PAGE).encode()
    client, _ = make_client(lambda request: httpx.Response(200, content=body), clock)
    result = client.search(prepare_search("shallow", 5), too_deep=lambda body: False)
    assert result.ok
    assert [work.openalex_id for work in result.works] == ["W1", "W2"]


def test_declared_oversized_length_is_not_read(clock: FakeClock) -> None:
    stream = ChunkStream([b"{}"])
    result = run(
        lambda request: httpx.Response(
            200, headers={"Content-Length": str(BODY_CEILING_BYTES + 1)}, stream=stream
        ),
        clock,
    )
    assert_provider_error(result, ProviderReason.TOO_LARGE, 200)
    assert result.observation.capture is Capture.BODY_NOT_READ
    assert stream.iterated == 0


def _gzip_bomb(decoded_size: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b" " * (1 << 20)
    parts = [compressor.compress(b'{"results":[],"pad":"')]
    parts.extend(compressor.compress(block) for _ in range(decoded_size >> 20))
    parts.append(compressor.compress(b'"}'))
    parts.append(compressor.flush())
    return b"".join(parts)


def test_gzip_bomb_stays_bounded(clock: FakeClock) -> None:
    bomb = _gzip_bomb(256 << 20)
    assert len(bomb) < 300_000
    chunks = [bomb[index : index + 65536] for index in range(0, len(bomb), 65536)]
    client, _ = make_client(
        lambda request: httpx.Response(
            200, headers={"Content-Encoding": "gzip"}, stream=ChunkStream(chunks)
        ),
        clock,
    )
    request = prepare_search("q")
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        baseline = tracemalloc.get_traced_memory()[0]
        result = client.search(request)
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    assert_provider_error(result, ProviderReason.TOO_LARGE, 200)
    assert result.observation.attempt is not None
    assert result.observation.attempt.body_bytes == BODY_CEILING_BYTES + 1
    # The decoded bytes (with bytearray over-allocation) plus one 64 KiB step.
    assert peak < BODY_CEILING_BYTES * 1.25 + (1 << 20)


# ------------------------------------------------------------- time and network


def test_slow_drip_hits_the_total_deadline(clock: FakeClock) -> None:
    body = json.dumps(PAGE).encode() + b" " * 100
    stream = ChunkStream([bytes([byte]) for byte in body], clock, per_chunk_s=1.0)
    result = run(lambda request: httpx.Response(200, stream=stream), clock)
    assert_provider_error(result, ProviderReason.TIMEOUT, 200)
    attempt = result.observation.attempt
    assert attempt is not None
    assert 19.0 <= (attempt.finished_at - attempt.started_at).total_seconds() <= 21.0
    assert stream.iterated <= 21
    assert attempt.error_type == "timeout"
    assert result.observation.capture is Capture.BODY_INCOMPLETE_NOT_RETAINED


def test_custom_deadline(clock: FakeClock) -> None:
    stream = ChunkStream([b"{"] * 10, clock, per_chunk_s=1.0)
    result = run(lambda request: httpx.Response(200, stream=stream), clock, deadline_s=3.0)
    assert_provider_error(result, ProviderReason.TIMEOUT, 200)
    assert stream.iterated == 3


def test_per_call_deadline_is_never_longer(clock: FakeClock) -> None:
    stream = ChunkStream([b"{"] * 30, clock, per_chunk_s=1.0)
    client, _ = make_client(lambda request: httpx.Response(200, stream=stream), clock)
    result = client.search(prepare_search("q"), deadline_s=2.5)
    assert_provider_error(result, ProviderReason.TIMEOUT, 200)
    assert stream.iterated == 3
    longer = ChunkStream([b"{"] * 30, clock, per_chunk_s=1.0)
    client, _ = make_client(lambda request: httpx.Response(200, stream=longer), clock)
    client.search(prepare_search("q"), deadline_s=60.0)
    assert longer.iterated == 20
    with pytest.raises(ValueError, match="positive"):
        client.search(prepare_search("q"), deadline_s=0)


def test_slow_headers_hit_the_deadline(clock: FakeClock) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        clock.advance(20.5)
        return json_response(PAGE)

    result = run(handler, clock)
    assert_provider_error(result, ProviderReason.TIMEOUT, 200)
    assert result.observation.capture is Capture.BODY_NOT_READ


@pytest.mark.parametrize(
    ("exception", "reason"),
    [
        (httpx.ConnectError("connection refused"), ProviderReason.TRANSPORT_ERROR),
        (httpx.ConnectTimeout("connect timed out"), ProviderReason.TIMEOUT),
        (httpx.ReadTimeout("read timed out"), ProviderReason.TIMEOUT),
        (httpx.RemoteProtocolError("bad status line"), ProviderReason.TRANSPORT_ERROR),
        (ConnectionResetError("reset"), ProviderReason.TRANSPORT_ERROR),
        (httpx.TooManyRedirects("redirects"), ProviderReason.TRANSPORT_ERROR),
        (TimeoutError("socket timeout"), ProviderReason.TIMEOUT),
    ],
)
def test_transport_failures(exception: Exception, reason: ProviderReason, clock: FakeClock) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exception

    result = run(handler, clock)
    assert_provider_error(result, reason, None)
    assert result.observation.capture is Capture.NO_RESPONSE
    assert result.observation.attempt is not None
    assert result.observation.attempt.error_type == type(exception).__name__


def test_connection_broken_mid_body(clock: FakeClock) -> None:
    stream = ChunkStream([b'{"results":', b"[]}"], fail_after=1)
    result = run(lambda request: httpx.Response(200, stream=stream), clock)
    assert_provider_error(result, ProviderReason.TRANSPORT_ERROR, 200)
    assert result.observation.capture is Capture.BODY_INCOMPLETE_NOT_RETAINED
    assert result.observation.attempt is not None
    assert result.observation.attempt.error_type == "RemoteProtocolError"


def test_error_status_keeps_its_reason_when_the_body_breaks(clock: FakeClock) -> None:
    stream = ChunkStream([b"{", b"}"], fail_after=1)
    result = run(lambda request: httpx.Response(503, stream=stream), clock)
    assert_provider_error(result, ProviderReason.HTTP_ERROR, 503)
    assert result.observation.attempt is not None
    assert result.observation.attempt.error_type == "RemoteProtocolError"
