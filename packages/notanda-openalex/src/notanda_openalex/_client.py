"""The OpenAlex works-search client: configuration, the one request, the reading.

This is the thin I/O layer. Validation lives in ``_query``, the network in
``_transport``, and turning a response into a result in ``_outcome``.
"""

from __future__ import annotations

import logging
import re
import ssl
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from typing import Any

import httpcore
import httpx

from ._checking import (
    CheckRun,
    ReferenceCheck,
    refused_check,
)
from ._clock import Clock, SystemClock
from ._config import load_core_config
from ._decode import BodyDecoder, BodyTooLarge, BodyUndecodable
from ._errors import (
    ConfigurationDetail,
    ErrorCode,
    ProviderReason,
)
from ._log_redaction import redacting_http_logs
from ._observation import Capture, ProviderObservation
from ._outcome import AttemptStart, DepthCheck, Exchange, result_from_exchange
from ._query import SearchRequest
from ._references import ParsedReferences
from ._result import ProviderFailure, ProviderResult
from ._secrets import REDACTED, SecretScrubber
from ._transport import PINNED_HOST, Deadline, PinnedTransport, default_ssl_context
from ._version import __version__
from ._vocabulary import (
    DEFAULT_CHECK_CONCURRENCY,
    DEFAULT_CHECK_DEADLINE_S,
    DEFAULT_SEARCH_DEADLINE_S,
    MAX_CHECK_CONCURRENCY,
)

__all__ = [
    "BODY_CEILING_BYTES",
    "DEFAULT_USER_AGENT",
    "ENDPOINT",
    "OpenAlexClient",
]

_LOGGER = logging.getLogger("notanda_openalex")

#: The only URL this package ever requests (plus query parameters).
ENDPOINT = "https://api.openalex.org/works"
#: The ceiling on the decoded body.
BODY_CEILING_BYTES = 4 * 1024 * 1024
DEFAULT_USER_AGENT = f"notanda-openalex/{__version__} (+https://github.com/notanda/notanda)"

#: Name resolution, TCP connect and TLS of one request, by default, in seconds.
DEFAULT_CONNECT_TIMEOUT_S = 10.0
_ALLOWED_BASE_URLS = ("https://api.openalex.org", "https://api.openalex.org/")
_CHUNK_SIZE = 64 * 1024
#: Visible ASCII: what a bearer token and a User-Agent may contain here.
_HEADER_VALUE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")
_TOKEN = re.compile(r"[\x21-\x7e]+")


def _is_pinned(url: httpx.URL) -> bool:
    return (
        url.scheme == "https"
        and url.host == PINNED_HOST
        and url.port in (None, 443)
        and url.path == "/works"
        and not url.userinfo
        and not url.fragment
    )


class OpenAlexClient:
    """Searches OpenAlex works: one GET to :data:`ENDPOINT` per search.

    Construction never touches the network and never fails because of a
    missing key: a client that cannot search returns a ``configuration_error``
    result from every :meth:`search` without any traffic.

    Args:
        api_key: The OpenAlex API key, sent only as ``Authorization: Bearer``.
            Surrounding whitespace is ignored; a blank key counts as missing.
        allow_keyless: Search without a key when none is given (small daily
            allowance, may be shed under load). Off by default.
        secrets: Further values to keep out of every record (the key is
            always included).
        transport: An httpx transport to use instead of the network (tests).
            The deadline is then enforced between chunks only.
        clock: The time source (tests); :class:`SystemClock` by default.
        deadline_s: Total deadline of one search, name resolution to last byte.
        connect_timeout_s: Limit for name resolution, TCP connect and TLS.
        user_agent: The ``User-Agent`` header (visible ASCII).
        network_backend: An httpcore network backend under the built-in
            transport, for tests that must exercise the real deadline and
            watchdog against a loopback server. The URL, the host check and
            TLS settings are unchanged. Cannot be combined with *transport*.

    Raises:
        ValueError: A timeout is not positive, the user agent is not visible
            ASCII, or both *transport* and *network_backend* are given.
    """

    def __init__(
        self,
        *,
        api_key: str | None,
        allow_keyless: bool = False,
        secrets: Iterable[str] = (),
        transport: httpx.BaseTransport | None = None,
        clock: Clock | None = None,
        deadline_s: float = DEFAULT_SEARCH_DEADLINE_S,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        user_agent: str = DEFAULT_USER_AGENT,
        network_backend: httpcore.NetworkBackend | None = None,
    ) -> None:
        self._setup(
            api_key=api_key,
            allow_keyless=allow_keyless,
            secrets=secrets,
            transport=transport,
            clock=clock,
            deadline_s=deadline_s,
            connect_timeout_s=connect_timeout_s,
            user_agent=user_agent,
            network_backend=network_backend,
            refused=None,
        )

    def _setup(
        self,
        *,
        api_key: str | None,
        allow_keyless: bool,
        secrets: Iterable[str],
        transport: httpx.BaseTransport | None,
        clock: Clock | None,
        deadline_s: float,
        connect_timeout_s: float,
        user_agent: str,
        network_backend: httpcore.NetworkBackend | None,
        refused: ConfigurationDetail | None,
    ) -> None:
        if not deadline_s > 0 or not connect_timeout_s > 0:
            raise ValueError("deadline_s and connect_timeout_s must be positive")
        if not isinstance(user_agent, str) or not _HEADER_VALUE.fullmatch(user_agent):
            raise ValueError("user_agent must be visible ASCII")
        if transport is not None and network_backend is not None:
            raise ValueError("give either transport or network_backend, not both")
        secret_values = [value for value in secrets if isinstance(value, str) and value]
        key = api_key.strip() if isinstance(api_key, str) else ""
        if isinstance(api_key, str) and api_key:
            secret_values.append(api_key)
        if key:
            secret_values.append(key)
        self._scrubber = SecretScrubber(secret_values)
        self._transport = transport
        self._network_backend = network_backend
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._deadline_s = float(deadline_s)
        self._connect_timeout_s = float(connect_timeout_s)
        self._user_agent = user_agent
        self._ssl_context: ssl.SSLContext | None = None
        self._api_key: str | None = None
        self._refused = refused
        if refused is None:
            if not key:
                if not allow_keyless:
                    self._refused = ConfigurationDetail.MISSING_API_KEY
            elif not _TOKEN.fullmatch(key):
                self._refused = ConfigurationDetail.INVALID_API_KEY
            else:
                self._api_key = key

    @classmethod
    def from_core_config(
        cls,
        *,
        env: Mapping[str, str] | None = None,
        config: Any = None,
        transport: httpx.BaseTransport | None = None,
        clock: Clock | None = None,
        network_backend: httpcore.NetworkBackend | None = None,
    ) -> OpenAlexClient:
        """Create a client from the notanda core configuration.

        Reads ``harvester.config.Config.load(env=...)``: the ``HARVESTER_CONFIG``
        file and ``HARVESTER_*`` variables (``HARVESTER_OPENALEX_API_KEY``,
        ``HARVESTER_OPENALEX_ALLOW_KEYLESS``, ``HARVESTER_OPENALEX_BASE_URL``...).
        Uses ``openalex.api_key``, ``openalex.allow_keyless`` and
        ``openalex.base_url``; keeps ``openalex.api_key``, ``contact_email`` and
        ``advisor.api_key`` out of every record. A missing key or a base URL
        other than ``https://api.openalex.org`` does not raise: the client
        returns ``configuration_error`` from every search.

        Args:
            env: The environment to read; ``os.environ`` by default.
            config: A configuration already returned by :func:`load_core_config`;
                when given, *env* is not read.
            transport: See :class:`OpenAlexClient`.
            clock: See :class:`OpenAlexClient`.
            network_backend: See :class:`OpenAlexClient`.

        Raises:
            ConfigurationError: The configuration could not be read or is
                invalid. The message is one fixed line with no value in it.
        """
        if config is None:
            config = load_core_config(env)
        openalex = config.openalex
        secrets = [
            value
            for value in (openalex.api_key, config.contact_email, config.advisor.api_key)
            if isinstance(value, str) and value
        ]
        base_url = openalex.base_url
        refused = (
            None
            if isinstance(base_url, str) and base_url in _ALLOWED_BASE_URLS
            else ConfigurationDetail.ENDPOINT_NOT_ALLOWED
        )
        client = cls.__new__(cls)
        client._setup(
            api_key=openalex.api_key if isinstance(openalex.api_key, str) else None,
            allow_keyless=openalex.allow_keyless is True,
            secrets=secrets,
            transport=transport,
            clock=clock,
            deadline_s=DEFAULT_SEARCH_DEADLINE_S,
            connect_timeout_s=DEFAULT_CONNECT_TIMEOUT_S,
            user_agent=DEFAULT_USER_AGENT,
            network_backend=network_backend,
            refused=refused,
        )
        return client

    @property
    def configuration_problem(self) -> ConfigurationDetail | None:
        """Why every search would fail with ``configuration_error``, or ``None``."""
        return self._refused

    def redact(self, value: Any) -> Any:
        """Return a JSON-safe *value* with this client's secrets redacted.

        Applies the same rules as the observation's slow path (secret values,
        secret-named keys, secret URL parameters, lone surrogates), e.g. to a
        request record before it is stored. A value those rules would not
        change is returned itself, after one look at it; otherwise the result
        is a copy in which only the changed parts were rebuilt.
        """
        return self._scrubber.scrubbed(value)

    def search(
        self,
        request: SearchRequest,
        *,
        deadline_s: float | None = None,
        too_deep: DepthCheck | None = None,
    ) -> ProviderResult:
        """Run one search: exactly one GET, no retry, no redirect, no pagination.

        Never raises for configuration, network or provider problems; those
        come back as a failed :class:`ProviderResult`.

        Args:
            request: From :func:`prepare_search`.
            deadline_s: A shorter total deadline for this call (for a caller
                with its own time budget); never longer than the client's.
            too_deep: The caller's nesting limit, as a check of the decoded
                body run before it is parsed: when it returns True the body
                is refused as ``provider_error`` with reason ``too_deep``.
                A caller that stores the body passes its store's limit.

        Raises:
            TypeError: *request* is not a :class:`SearchRequest`.
            ValueError: *deadline_s* is not positive.
        """
        if not isinstance(request, SearchRequest):
            raise TypeError("request must come from prepare_search()")
        if deadline_s is not None and not deadline_s > 0:
            raise ValueError("deadline_s must be positive")
        total_s = self._deadline_s if deadline_s is None else min(deadline_s, self._deadline_s)
        if self._refused is not None:
            return self._refusal(self._refused)
        return self._send(
            request.effective.params,
            limit=request.effective.limit,
            total_s=total_s,
            too_deep=too_deep,
        )

    def check_references(
        self,
        parsed: ParsedReferences,
        *,
        concurrency: int = DEFAULT_CHECK_CONCURRENCY,
        deadline_s: float = DEFAULT_CHECK_DEADLINE_S,
        too_deep: DepthCheck | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> ReferenceCheck:
        """Check every parsed reference against OpenAlex; one verdict per reference.

        References with a DOI (or an arXiv ID, as its DOI) are looked up in
        batches of at most :data:`MAX_DOIS_PER_REQUEST` with
        ``filter=doi:A|B|...``; those without one, and those whose DOI
        OpenAlex does not know, by title (``filter=title.search:...``, at most
        :data:`MAX_TITLE_CANDIDATES` candidates). Every request goes through
        the same path as :meth:`search` (endpoint pin, headers, secret
        scrubbing, body ceiling, *too_deep*) and is recorded as a
        :class:`CheckAttempt`. Never raises for configuration, network or
        provider problems: a refused configuration gives a check with
        ``failure`` set, a failed request makes the references it served
        ``unchecked`` with its code, and references not reached by the
        deadline (or after *cancelled* returned True) are ``unchecked`` with
        ``deadline_exceeded``.

        Args:
            parsed: From :func:`parse_references`.
            concurrency: At most this many requests in flight (1 to 16).
            deadline_s: The total deadline of the whole check; each request
                also keeps the client's own per-request deadline.
            too_deep: As for :meth:`search`, applied to every body.
            on_progress: Called as ``(decided, total)`` from the calling
                thread each time references are decided.
            cancelled: Polled while the check runs; once it returns True no
                new request starts and requests in flight are cut short.

        Raises:
            TypeError: *parsed* is not a :class:`ParsedReferences`.
            ValueError: *concurrency* is not an integer from 1 to 16, or
                *deadline_s* is not positive.
        """
        if not isinstance(parsed, ParsedReferences):
            raise TypeError("parsed must come from parse_references()")
        if (
            isinstance(concurrency, bool)
            or not isinstance(concurrency, int)
            or not 1 <= concurrency <= MAX_CHECK_CONCURRENCY
        ):
            raise ValueError(f"concurrency must be an integer from 1 to {MAX_CHECK_CONCURRENCY}")
        if not deadline_s > 0:
            raise ValueError("deadline_s must be positive")
        refused = self._refused
        if refused is None and not _is_pinned(httpx.URL(ENDPOINT)):
            refused = ConfigurationDetail.ENDPOINT_NOT_ALLOWED
        if refused is not None:
            failure = ProviderFailure(code=ErrorCode.CONFIGURATION_ERROR, detail=refused)
            return refused_check(parsed, failure)
        return CheckRun(
            self._send,
            parsed.references,
            concurrency=concurrency,
            deadline=Deadline(self._clock, float(deadline_s)),
            per_request_s=self._deadline_s,
            too_deep=too_deep,
            on_progress=on_progress,
            cancelled=cancelled,
            current_year=self._clock.now().year,
        ).run()

    def _send(
        self,
        params: Iterable[tuple[str, str]],
        *,
        limit: int,
        total_s: float,
        too_deep: DepthCheck | None,
        watch: Callable[[Deadline], None] | None = None,
    ) -> ProviderResult:
        """Send one GET to :data:`ENDPOINT` and turn what came back into a result.

        The one path from parameters to a :class:`ProviderObservation`, shared
        by :meth:`search` and :meth:`check_references`: endpoint pin, headers,
        recorded (scrubbed) request, deadline and watchdog, body ceiling,
        *too_deep*. *watch* receives the exchange's :class:`Deadline` before
        the request is sent, so that a caller can cut it short (``fire``).
        """
        clock = self._clock
        http_request = httpx.Request("GET", ENDPOINT, params=list(params), headers=self._headers())
        if not _is_pinned(http_request.url):
            return self._refusal(ConfigurationDetail.ENDPOINT_NOT_ALLOWED)
        deadline = Deadline(clock, total_s)
        if watch is not None:
            watch(deadline)
        attempt = AttemptStart(
            method=http_request.method,
            url=self._scrubber.scrub_url(str(http_request.url)),
            started_at=clock.now(),
            request_headers=self._recorded_headers(http_request.headers),
        )
        with redacting_http_logs(self._scrubber), deadline.watchdog():
            exchange = self._exchange(http_request, deadline)
        finished = clock.now()
        result = result_from_exchange(
            exchange,
            limit=limit,
            attempt=attempt,
            finished_at=finished,
            scrubber=self._scrubber,
            now=finished,
            too_deep=too_deep,
        )
        _LOGGER.debug(
            "openalex request: ok=%s status=%s reason=%s works=%d",
            result.ok,
            exchange.status,
            None if result.error is None else result.error.reason,
            len(result.works),
        )
        return result

    def _headers(self) -> list[tuple[str, str]]:
        headers = [
            ("Accept", "application/json"),
            ("Accept-Encoding", "gzip, deflate"),
            ("User-Agent", self._user_agent),
        ]
        if self._api_key is not None:
            headers.append(("Authorization", f"Bearer {self._api_key}"))
        return headers

    def _recorded_headers(self, headers: httpx.Headers) -> dict[str, str]:
        recorded: dict[str, str] = {}
        for name, value in headers.multi_items():
            lower = name.lower()
            recorded[lower] = (
                f"Bearer {REDACTED}"
                if lower == "authorization"
                else self._scrubber.scrub_text(value)
            )
        return recorded

    def _tls(self) -> ssl.SSLContext:
        # Built once per client (loading the CA bundle takes milliseconds);
        # an SSLContext may be shared between threads.
        if self._ssl_context is None:
            self._ssl_context = default_ssl_context()
        return self._ssl_context

    def _refusal(self, detail: ConfigurationDetail) -> ProviderResult:
        return ProviderResult(
            ok=False,
            works=[],
            total_count=None,
            skipped_count=0,
            error=ProviderFailure(code=ErrorCode.CONFIGURATION_ERROR, detail=detail),
            observation=ProviderObservation(capture=Capture.NOT_ATTEMPTED, attempt=None),
        )

    def _exchange(self, request: httpx.Request, deadline: Deadline) -> Exchange:
        owned = self._transport is None
        transport: httpx.BaseTransport = (
            self._transport
            if self._transport is not None
            else PinnedTransport(
                deadline,
                self._connect_timeout_s,
                network_backend=self._network_backend,
                ssl_context=self._tls(),
            )
        )
        try:
            try:
                response = transport.handle_request(request)
            except (httpx.RequestError, OSError) as exc:
                problem, error_type = _failure(exc, deadline)
                return Exchange(
                    status=None,
                    problem=problem,
                    capture=Capture.NO_RESPONSE,
                    error_type=error_type,
                )
            try:
                return _read(response, deadline)
            finally:
                with suppress(httpx.RequestError, OSError):
                    response.close()
        finally:
            if owned:
                with suppress(httpx.RequestError, OSError):
                    transport.close()


def _failure(exc: BaseException, deadline: Deadline) -> tuple[ProviderReason, str]:
    """Classify a network exception; return the reason and the ``error_type``."""
    if isinstance(exc, (httpx.TimeoutException, TimeoutError)):
        return ProviderReason.TIMEOUT, type(exc).__name__
    if deadline.expired():
        # The watchdog shut the socket down; what httpcore saw (end of file,
        # reset) is a consequence, not the cause.
        return ProviderReason.TIMEOUT, ProviderReason.TIMEOUT.value
    return ProviderReason.TRANSPORT_ERROR, type(exc).__name__


def _declared_length(headers: httpx.Headers) -> int | None:
    raw = headers.get("content-length")
    if raw is None or not raw.strip().isdigit():
        return None
    return int(raw.strip())


def _raw_chunks(response: httpx.Response) -> Iterator[bytes]:
    # The raw stream, not iter_bytes(): httpx would decompress without a limit.
    # Iterated directly rather than through iter_raw() so that a response a
    # test transport built from bytes (already "read" by httpx) is handled alike.
    stream = response.stream
    if not isinstance(stream, Iterable):
        raise TypeError("the transport returned an asynchronous stream")
    for part in stream:
        view = memoryview(part)
        for offset in range(0, len(view), _CHUNK_SIZE):
            yield bytes(view[offset : offset + _CHUNK_SIZE])


def _read(response: httpx.Response, deadline: Deadline) -> Exchange:
    status = response.status_code
    headers = response.headers
    if deadline.expired():
        return Exchange(
            status=status,
            headers=headers,
            problem=ProviderReason.TIMEOUT,
            capture=Capture.BODY_NOT_READ,
        )
    if 300 <= status < 400:
        # Never followed, and the body (which may quote the Location) is not read.
        return Exchange(
            status=status,
            headers=headers,
            problem=ProviderReason.REDIRECT,
            capture=Capture.BODY_NOT_READ,
        )
    decoder = BodyDecoder.for_encoding(headers.get("content-encoding"), BODY_CEILING_BYTES)
    if decoder is None:
        return Exchange(
            status=status,
            headers=headers,
            problem=ProviderReason.UNDECODABLE,
            capture=Capture.BODY_NOT_READ,
        )
    declared = _declared_length(headers)
    if decoder.identity and declared is not None and declared > BODY_CEILING_BYTES:
        return Exchange(
            status=status,
            headers=headers,
            problem=ProviderReason.TOO_LARGE,
            capture=Capture.BODY_NOT_READ,
        )
    body = bytearray()
    wire = 0
    problem: ProviderReason | None = None
    error_type: str | None = None
    try:
        for chunk in _raw_chunks(response):
            wire += len(chunk)
            if deadline.expired():
                problem = ProviderReason.TIMEOUT
                break
            decoder.feed(chunk, body)
        else:
            decoder.finish()
            if deadline.expired():
                problem = ProviderReason.TIMEOUT
    except BodyTooLarge:
        problem = ProviderReason.TOO_LARGE
    except BodyUndecodable as exc:
        problem, error_type = ProviderReason.UNDECODABLE, type(exc.__cause__ or exc).__name__
    except (httpx.RequestError, OSError) as exc:
        problem, error_type = _failure(exc, deadline)
    if problem is not None:
        return Exchange(
            status=status,
            headers=headers,
            body_bytes=decoder.size,
            wire_bytes=wire,
            problem=problem,
            capture=Capture.BODY_INCOMPLETE_NOT_RETAINED,
            error_type=error_type,
        )
    return Exchange(status=status, headers=headers, body=body, wire_bytes=wire)
