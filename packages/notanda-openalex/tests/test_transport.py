"""The built-in transport on loopback sockets: deadline, watchdog, DNS, pinning, logs.

No socket leaves the machine: a network backend (the documented test seam)
connects every request for ``api.openalex.org:443`` to a server on 127.0.0.1
and skips TLS. The integration suite uses the same seam for its real-time
slow-drip test.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import httpcore
import httpx
import pytest
from conftest import SECRET_KEY, FakeClock, LogCapture, assert_no_secret
from notanda_openalex import (
    Capture,
    OpenAlexClient,
    ProviderReason,
    SystemClock,
    prepare_search,
)
from notanda_openalex._transport import Deadline, DeadlineBackend, PinnedTransport

PAGE = json.dumps({"meta": {"count": 1}, "results": [{"id": "https://openalex.org/W5"}]}).encode()


class LoopbackServer:
    """A one-thread HTTP/1.1 server on 127.0.0.1 with a canned behaviour."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests: list[bytes] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self._server.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                try:
                    self._answer(conn)
                except OSError:
                    continue  # the client went away: that is what some tests do

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        self.requests.append(data)
        if self.mode == "ok":
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"X-OpenAlex-Edge-Reject: echo {SECRET_KEY}\r\n".encode()
                + f"Content-Length: {len(PAGE)}\r\n\r\n".encode()
                + PAGE
            )
        elif self.mode == "stall":
            self._stop.wait(10)

    def close(self) -> None:
        self._stop.set()
        self._server.close()
        self._thread.join(timeout=5)


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[LoopbackServer]:
    instance = LoopbackServer(request.param)
    try:
        yield instance
    finally:
        instance.close()


class _PlainStream(httpcore.NetworkStream):
    """Plain TCP standing in for TLS, so no certificate is needed on loopback."""

    def __init__(self, inner: httpcore.NetworkStream, *, ignore_timeouts: bool = False) -> None:
        self._inner = inner
        self._ignore_timeouts = ignore_timeouts

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, None if self._ignore_timeouts else timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return self

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class LoopbackBackend(httpcore.NetworkBackend):
    """Connects api.openalex.org:443 to a loopback port; records what was asked."""

    def __init__(self, port: int, *, ignore_timeouts: bool = False) -> None:
        self.port = port
        self.ignore_timeouts = ignore_timeouts
        self.connects: list[tuple[str, int]] = []
        self._sync = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        self.connects.append((host, port))
        stream = self._sync.connect_tcp("127.0.0.1", self.port, timeout=timeout)
        return _PlainStream(stream, ignore_timeouts=self.ignore_timeouts)


@pytest.mark.parametrize("server", ["ok"], indirect=True)
def test_real_transport_round_trip(server: LoopbackServer, all_logs: LogCapture) -> None:
    backend = LoopbackBackend(server.port)
    client = OpenAlexClient(api_key=SECRET_KEY, network_backend=backend)
    result = client.search(prepare_search("Does X improve Y?", 3))
    assert result.ok, result.error
    assert [work.openalex_id for work in result.works] == ["W5"]
    assert backend.connects == [("api.openalex.org", 443)]
    (raw,) = server.requests
    head = raw.decode("latin-1").split("\r\n")
    assert head[0].startswith("GET /works?search=Does+X+improve+Y&filter=")
    assert head[1:6] == [
        "Host: api.openalex.org",
        "Accept: application/json",
        "Accept-Encoding: gzip, deflate",
        head[4],
        f"Authorization: Bearer {SECRET_KEY}",
    ]
    assert head[4].startswith("User-Agent: notanda-openalex/")
    assert head[6:] == ["", ""]
    # httpcore logs every response header at DEBUG; the secret is redacted there.
    text = all_logs.text()
    assert "receive_response_headers" in text
    assert "echo REDACTED" in text
    assert_no_secret(text, json.dumps(result.observation.record_fields(), default=str))


@pytest.mark.parametrize("server", ["stall"], indirect=True)
def test_stalled_server_is_cut_at_the_deadline(server: LoopbackServer) -> None:
    client = OpenAlexClient(
        api_key="k", network_backend=LoopbackBackend(server.port), deadline_s=0.5
    )
    started = time.monotonic()
    result = client.search(prepare_search("q"))
    elapsed = time.monotonic() - started
    assert result.error is not None
    assert result.error.reason is ProviderReason.TIMEOUT
    assert result.observation.capture is Capture.NO_RESPONSE
    assert 0.4 <= elapsed < 2.0


@pytest.mark.parametrize("server", ["stall"], indirect=True)
def test_watchdog_breaks_a_read_that_ignores_timeouts(server: LoopbackServer) -> None:
    # The stream below blocks with no timeout at all: only the watchdog's
    # socket shutdown can end the call.
    backend = LoopbackBackend(server.port, ignore_timeouts=True)
    client = OpenAlexClient(api_key="k", network_backend=backend, deadline_s=0.5)
    started = time.monotonic()
    result = client.search(prepare_search("q"))
    elapsed = time.monotonic() - started
    assert result.error is not None
    assert result.error.reason is ProviderReason.TIMEOUT
    assert result.observation.attempt is not None
    # The end of file httpcore saw is the watchdog's doing: recorded as the timeout.
    assert result.observation.attempt.error_type == "timeout"
    assert 0.4 <= elapsed < 2.0


def test_name_resolution_is_inside_the_deadline() -> None:
    release = threading.Event()

    def hanging_resolver(*args: Any, **kwargs: Any) -> list[Any]:
        release.wait(10)
        return []

    deadline = Deadline(SystemClock(), 0.3)
    backend = DeadlineBackend(deadline, 10.0, resolver=hanging_resolver)
    started = time.monotonic()
    try:
        with pytest.raises(httpcore.ConnectTimeout):
            backend.connect_tcp("api.openalex.org", 443)
    finally:
        release.set()
    assert time.monotonic() - started < 1.0


def test_connect_timeout_bounds_resolution_too() -> None:
    release = threading.Event()

    def hanging_resolver(*args: Any, **kwargs: Any) -> list[Any]:
        release.wait(10)
        return []

    backend = DeadlineBackend(Deadline(SystemClock(), 20.0), 0.2, resolver=hanging_resolver)
    started = time.monotonic()
    try:
        with pytest.raises(httpcore.ConnectTimeout):
            backend.connect_tcp("api.openalex.org", 443)
    finally:
        release.set()
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize(
    "resolver",
    [
        lambda *a, **k: (_ for _ in ()).throw(socket.gaierror("no such host")),
        lambda *a, **k: [],
        lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 9))],
    ],
    ids=["gaierror", "no-address", "refused"],
)
def test_resolution_and_connect_failures(resolver: Any) -> None:
    backend = DeadlineBackend(Deadline(SystemClock(), 5.0), 5.0, resolver=resolver)
    with pytest.raises(httpcore.ConnectError):
        backend.connect_tcp("api.openalex.org", 9)


def test_resolved_addresses_are_used_in_order() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        infos = [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
        ]
        seen: list[tuple[str, int]] = []

        def resolver(host: str, port_: int, **kwargs: Any) -> list[Any]:
            seen.append((host, port_))
            return infos

        deadline = Deadline(SystemClock(), 5.0)
        stream = DeadlineBackend(deadline, 5.0, resolver=resolver).connect_tcp(
            "api.openalex.org", port
        )
        assert seen == [("api.openalex.org", port)]
        assert stream.get_extra_info("socket").getpeername()[0] == "127.0.0.1"
        sock = stream.get_extra_info("socket")
        deadline.fire()
        with pytest.raises(httpcore.ReadTimeout):
            stream.read(10)
        # The watchdog shut the socket down: a read returns end-of-file at once.
        sock.settimeout(1.0)
        assert sock.recv(10) == b""
        stream.close()
    finally:
        listener.close()


def test_expired_deadline_refuses_io() -> None:
    clock = FakeClock()
    deadline = Deadline(clock, 1.0)
    assert deadline.clamp(None, httpcore.ReadTimeout) == pytest.approx(1.0)
    assert deadline.clamp(0.25, httpcore.ReadTimeout) == pytest.approx(0.25)
    clock.advance(1.0)
    assert deadline.expired()
    with pytest.raises(httpcore.ReadTimeout):
        deadline.clamp(5.0, httpcore.ReadTimeout)
    with pytest.raises(httpcore.ConnectTimeout):
        DeadlineBackend(deadline, 10.0).connect_tcp("api.openalex.org", 443)


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/works",
        "http://api.openalex.org/works",
        "https://api.openalex.org:8443/works",
    ],
)
def test_pinned_transport_refuses_other_origins(url: str) -> None:
    backend = LoopbackBackend(9)
    transport = PinnedTransport(Deadline(SystemClock(), 5.0), 5.0, network_backend=backend)
    try:
        with pytest.raises(httpx.UnsupportedProtocol):
            transport.handle_request(httpx.Request("GET", url))
    finally:
        transport.close()
    assert backend.connects == []


class _TLSRecordingStream(_PlainStream):
    calls: ClassVar[list[tuple[ssl.VerifyMode, bool, str | None]]] = []

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        self.calls.append((ssl_context.verify_mode, ssl_context.check_hostname, server_hostname))
        self.close()  # as httpcore's own streams do when the handshake fails
        raise httpcore.ConnectError("no TLS on this loopback server")


class _TLSRecordingBackend(LoopbackBackend):
    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        self.connects.append((host, port))
        return _TLSRecordingStream(self._sync.connect_tcp("127.0.0.1", self.port, timeout=timeout))


@pytest.mark.parametrize("server", ["stall"], indirect=True)
def test_tls_is_verified_for_the_pinned_host(server: LoopbackServer) -> None:
    _TLSRecordingStream.calls.clear()
    client = OpenAlexClient(api_key="k", network_backend=_TLSRecordingBackend(server.port))
    result = client.search(prepare_search("q"))
    assert result.error is not None
    assert result.error.reason is ProviderReason.TRANSPORT_ERROR
    assert result.observation.attempt is not None
    assert result.observation.attempt.error_type == "ConnectError"
    assert _TLSRecordingStream.calls == [(ssl.CERT_REQUIRED, True, "api.openalex.org")]


class _DummyStream(httpcore.NetworkStream):
    def __init__(self) -> None:
        self.closed = False
        self.tls_timeout: float | None = None

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return b""

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        return None

    def close(self) -> None:
        self.closed = True

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        self.tls_timeout = timeout
        return self


class _SlowConnectBackend(httpcore.NetworkBackend):
    def __init__(self, clock: FakeClock, seconds: float) -> None:
        self.clock = clock
        self.seconds = seconds
        self.stream = _DummyStream()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        self.clock.advance(self.seconds)
        return self.stream


def test_tls_shares_the_connect_timeout() -> None:
    clock = FakeClock()
    context = ssl.create_default_context()
    slow = _SlowConnectBackend(clock, 7.0)
    stream = DeadlineBackend(Deadline(clock, 20.0), 10.0, inner=slow).connect_tcp("h", 443)
    stream.start_tls(context, "api.openalex.org", timeout=10.0)
    assert slow.stream.tls_timeout == pytest.approx(3.0)

    slower = _SlowConnectBackend(clock, 10.5)
    stream = DeadlineBackend(Deadline(clock, 20.0), 10.0, inner=slower).connect_tcp("h", 443)
    with pytest.raises(httpcore.ConnectTimeout):
        stream.start_tls(context, "api.openalex.org", timeout=10.0)
    assert slower.stream.closed


def _watchdog_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "notanda-openalex-watchdog"]


def test_watchdogs_share_one_thread_instead_of_a_timer_each() -> None:
    """A thread started and awaited per search cost more than the rest of a small one."""
    seen = []
    for _ in range(3):
        with Deadline(SystemClock(), 30.0).watchdog():
            seen.append(_watchdog_threads())
    assert all(len(threads) == 1 for threads in seen)
    assert seen[0][0] is seen[1][0] is seen[2][0]
    assert seen[0][0].daemon


def test_an_earlier_alarm_set_later_fires_first_and_a_cancelled_one_never() -> None:
    from notanda_openalex._transport import _ALARMS

    late_fired = threading.Event()
    cancelled_fired = threading.Event()
    soon_fired = threading.Event()
    late = _ALARMS.set(3600.0, late_fired.set)
    cancelled = _ALARMS.set(0.0, cancelled_fired.set)
    _ALARMS.cancel(cancelled)
    _ALARMS.set(0.05, soon_fired.set)
    try:
        # The thread was asleep until the hour-long alarm: the new head woke it.
        assert soon_fired.wait(10)
        # Alarms are taken in time order: the cancelled, earlier one was dropped.
        assert not cancelled_fired.is_set()
        assert not late_fired.is_set()
    finally:
        _ALARMS.cancel(late)


def test_a_deadline_that_runs_out_fires_through_the_shared_thread() -> None:
    deadline = Deadline(SystemClock(), 0.01)
    with deadline.watchdog():
        assert deadline._fired.wait(10)
    assert deadline.expired()
