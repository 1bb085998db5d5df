"""The real-time slow drip: a provider that sends its headers, then one byte per second.

Through the installed notanda_openalex and its built-in transport (the real
deadline and watchdog, not a mock), with its documented ``network_backend``
seam connecting ``api.openalex.org:443`` to a server on 127.0.0.1 without TLS.
Every single read succeeds within any per-read timeout, so only the 20 s total
deadline can end the search: it must end with ``provider_error``/``timeout``
after 20 s, give or take 1 s.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import pytest

DEADLINE_S = 20.0
TOLERANCE_S = 1.0


class DripServer:
    """An HTTP/1.1 server on loopback that answers 200, then drips the body a byte a second."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.bytes_sent = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self._server.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                try:
                    self._drip(conn)
                except OSError:
                    continue  # the client gave up: what the test expects

    def _drip(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        self.requests.append(data)
        body = b'{"meta":{"count":1},"results":[' + b" " * 4096 + b"]}"
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
        )
        for byte in body:
            if self._stop.wait(1.0):
                return
            conn.sendall(bytes([byte]))
            self.bytes_sent += 1

    def close(self) -> None:
        self._stop.set()
        self._server.close()
        self._thread.join(timeout=5)


class _PlainStream(httpcore.NetworkStream):
    """Plain TCP where the transport expects TLS: no certificate is needed on loopback."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, timeout)

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
    """Connects every request to the loopback port; records where it was asked to connect."""

    def __init__(self, port: int) -> None:
        self.port = port
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
        return _PlainStream(self._sync.connect_tcp("127.0.0.1", self.port, timeout=timeout))


@pytest.fixture
def drip() -> Iterator[DripServer]:
    server = DripServer()
    try:
        yield server
    finally:
        server.close()


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_slow_drip_ends_at_the_20_second_deadline(drip: DripServer) -> None:
    from notanda_openalex import Capture, ErrorCode, OpenAlexClient, ProviderReason, prepare_search

    backend = LoopbackBackend(drip.port)
    client = OpenAlexClient(api_key="drip-test-key", network_backend=backend)
    started = time.monotonic()
    result = client.search(prepare_search("Does X improve Y?", 3))
    elapsed = time.monotonic() - started

    assert not result.ok
    assert result.error is not None
    assert (result.error.code, result.error.reason) == (
        ErrorCode.PROVIDER_ERROR,
        ProviderReason.TIMEOUT,
    )
    assert abs(elapsed - DEADLINE_S) <= TOLERANCE_S, f"ended after {elapsed:.2f} s"
    assert backend.connects == [("api.openalex.org", 443)]
    assert len(drip.requests) == 1, "the search retried"
    assert drip.requests[0].startswith(b"GET /works?")
    assert result.observation.capture is Capture.BODY_INCOMPLETE_NOT_RETAINED
    attempt = result.observation.attempt
    assert attempt is not None
    assert attempt.http_status == 200
    # It really was dripping: bytes arrived until the deadline cut the read.
    assert 15 <= drip.bytes_sent <= 21
    assert attempt.wire_bytes is not None
    assert 15 <= attempt.wire_bytes <= drip.bytes_sent
