"""The network layer: one connection to the pinned origin under a total deadline.

The deadline covers name resolution, connect, TLS, request, headers and body.
It is enforced three ways:

* every socket operation's timeout is clamped to the time left;
* name resolution runs in a worker thread that is waited for only as long as
  the time left (``getaddrinfo`` itself cannot be interrupted);
* a watchdog timer shuts down every socket of the exchange when the deadline
  passes, so nothing can hold the call longer, whatever httpcore is doing.

The body is additionally checked against the (injectable) clock between
chunks by the caller.
"""

from __future__ import annotations

import heapq
import itertools
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import httpcore
import httpx

from ._clock import Clock

__all__ = [
    "PINNED_HOST",
    "Deadline",
    "DeadlineBackend",
    "PinnedTransport",
    "Resolver",
    "default_ssl_context",
]

PINNED_HOST = "api.openalex.org"
_PINNED_ORIGIN = httpcore.Origin(b"https", PINNED_HOST.encode("ascii"), 443)

#: ``socket.getaddrinfo``-compatible callable.
Resolver = Callable[..., Sequence[tuple[Any, ...]]]


class Deadline:
    """The total time budget of one exchange, with a watchdog.

    Args:
        clock: Source of monotonic time for the budget.
        total_s: The budget in seconds.
    """

    def __init__(self, clock: Clock, total_s: float) -> None:
        self._clock = clock
        self._end = clock.monotonic() + total_s
        self._fired = threading.Event()
        self._lock = threading.Lock()
        self._streams: list[httpcore.NetworkStream] = []

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self._end - self._clock.monotonic()

    def expired(self) -> bool:
        """Whether the deadline passed or the watchdog fired."""
        return self._fired.is_set() or self.remaining() <= 0

    def clamp(self, timeout: float | None, expired: type[Exception]) -> float:
        """Return *timeout* limited to the time left.

        Raises:
            Exception: An instance of *expired* when no time is left.
        """
        left = self.remaining()
        if self._fired.is_set() or left <= 0:
            raise expired("deadline passed")
        return left if timeout is None else min(timeout, left)

    def register(self, stream: httpcore.NetworkStream) -> None:
        """Put *stream* under the watchdog (shut down at once if it already fired)."""
        with self._lock:
            self._streams.append(stream)
            fired = self._fired.is_set()
        if fired:
            _shutdown(stream)

    def fire(self) -> None:
        """Mark the deadline as passed and shut down every registered socket."""
        with self._lock:
            self._fired.set()
            streams = list(self._streams)
        for stream in streams:
            _shutdown(stream)

    @contextmanager
    def watchdog(self) -> Iterator[None]:
        """Run a timer that calls :meth:`fire` when the time left runs out."""
        alarm = _ALARMS.set(max(self.remaining(), 0.0), self.fire)
        try:
            yield
        finally:
            _ALARMS.cancel(alarm)


class _Alarms:
    """One daemon thread that calls each watchdog's callback when its time comes.

    A ``threading.Timer`` per exchange started a thread and waited for it to
    run, on every search (issue 11); here setting an alarm only wakes the
    thread when the new alarm is the earliest. A cancelled alarm is dropped
    when its time comes and holds no reference to its deadline meanwhile.
    """

    def __init__(self) -> None:
        self._wake = threading.Condition(threading.Lock())
        self._due: list[list[Any]] = []  # heap of [when, sequence, callback or None]
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def set(self, delay_s: float, callback: Callable[[], None]) -> list[Any]:
        """Call *callback* in the alarm thread after *delay_s*; returns the alarm."""
        alarm = [time.monotonic() + delay_s, next(self._order), callback]
        with self._wake:
            heapq.heappush(self._due, alarm)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="notanda-openalex-watchdog", daemon=True
                )
                self._thread.start()
            elif self._due[0] is alarm:
                self._wake.notify()
        return alarm

    def cancel(self, alarm: list[Any]) -> None:
        """Make sure *alarm*'s callback is not called (it may be running already)."""
        with self._wake:
            alarm[2] = None

    def _serve(self) -> None:
        while True:
            with self._wake:
                while True:
                    while self._due and self._due[0][2] is None:
                        heapq.heappop(self._due)
                    left = self._due[0][0] - time.monotonic() if self._due else None
                    if left is not None and left <= 0:
                        alarm = heapq.heappop(self._due)
                        callback, alarm[2] = alarm[2], None
                        break
                    self._wake.wait(left)
            # Outside the lock: fire() shuts sockets down and may take a moment.
            with suppress(Exception):
                callback()
            del callback, alarm


_ALARMS = _Alarms()


def _shutdown(stream: httpcore.NetworkStream) -> None:
    # shutdown(), unlike close(), is safe while another thread is blocked in
    # recv() on the same socket: the recv returns at once. The base-class
    # method is called so that an SSLSocket keeps its state for that thread.
    sock = stream.get_extra_info("socket")
    if isinstance(sock, socket.socket):
        with suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _WatchedStream(httpcore.NetworkStream):
    """A network stream whose every operation is bounded by the deadline.

    ``connect_floor`` is the value of ``deadline.remaining()`` at which the
    connect timeout (name resolution, TCP connect and TLS together) runs out.
    """

    def __init__(
        self,
        inner: httpcore.NetworkStream,
        deadline: Deadline,
        connect_floor: float | None = None,
    ) -> None:
        self._inner = inner
        self._deadline = deadline
        self._connect_floor = connect_floor
        deadline.register(self)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        try:
            if self._connect_floor is not None:
                left = self._deadline.remaining() - self._connect_floor
                if left <= 0:
                    raise httpcore.ConnectTimeout("connect timeout")
                timeout = left if timeout is None else min(timeout, left)
            bounded = self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        except httpcore.ConnectTimeout:
            self._inner.close()
            raise
        inner = self._inner.start_tls(ssl_context, server_hostname, bounded)
        return _WatchedStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _resolve(resolver: Resolver, host: str, port: int, timeout: float) -> list[str]:
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["infos"] = resolver(host, port, type=socket.SOCK_STREAM)
        except Exception as exc:  # handed to the waiting thread
            outcome["error"] = exc
        finally:
            done.set()

    # A daemon thread: if resolution hangs past the deadline it is abandoned
    # (getaddrinfo cannot be cancelled) and finishes, or not, on its own.
    threading.Thread(target=run, name="notanda-openalex-resolve", daemon=True).start()
    if not done.wait(timeout):
        raise httpcore.ConnectTimeout("name resolution did not finish within the deadline")
    if "error" in outcome:
        raise httpcore.ConnectError("name resolution failed") from outcome["error"]
    addresses: list[str] = []
    for info in outcome.get("infos", ()):
        try:
            address = str(info[4][0])
        except (IndexError, TypeError):
            continue
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise httpcore.ConnectError("name resolution returned no address")
    return addresses


class DeadlineBackend(httpcore.NetworkBackend):
    """An httpcore network backend that keeps connect and I/O inside a deadline.

    Args:
        deadline: The exchange's deadline.
        connect_timeout_s: Limit for name resolution plus TCP connect plus TLS.
        inner: A backend to connect through instead of resolving and connecting
            here (a test seam: e.g. one that connects to a loopback server).
            Its streams are still bounded and watched.
        resolver: ``getaddrinfo``-compatible name resolution (tests only).
    """

    def __init__(
        self,
        deadline: Deadline,
        connect_timeout_s: float,
        *,
        inner: httpcore.NetworkBackend | None = None,
        resolver: Resolver = socket.getaddrinfo,
    ) -> None:
        self._deadline = deadline
        self._connect_timeout_s = connect_timeout_s
        self._inner = inner
        self._resolver = resolver
        self._sync = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        limit = (
            self._connect_timeout_s if timeout is None else min(self._connect_timeout_s, timeout)
        )
        connect_budget = self._deadline.clamp(limit, httpcore.ConnectTimeout)
        # The connect timeout runs out when remaining() falls to this floor.
        floor = self._deadline.remaining() - connect_budget
        if self._inner is not None:
            stream = self._inner.connect_tcp(
                host,
                port,
                timeout=connect_budget,
                local_address=local_address,
                socket_options=socket_options,
            )
            return _WatchedStream(stream, self._deadline, floor)
        addresses = _resolve(self._resolver, host, port, connect_budget)
        last_error: Exception | None = None
        for address in addresses:
            budget = self._deadline.clamp(
                self._deadline.remaining() - floor, httpcore.ConnectTimeout
            )
            if budget <= 0:
                raise httpcore.ConnectTimeout("connect timeout")
            try:
                stream = self._sync.connect_tcp(
                    address,
                    port,
                    timeout=budget,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                last_error = exc
                continue
            return _WatchedStream(stream, self._deadline, floor)
        raise httpcore.ConnectError("no address could be connected") from last_error

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are never used")

    def sleep(self, seconds: float) -> None:
        self._sync.sleep(seconds)


_EXCEPTIONS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _httpx_exceptions() -> Iterator[None]:
    try:
        yield
    except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as exc:
        for source, target in _EXCEPTIONS:
            if isinstance(exc, source):
                # A fixed message: the original text is never carried forward.
                raise target(f"{target.__name__} during the OpenAlex exchange") from exc
        raise httpx.TransportError("transport failure") from exc  # pragma: no cover


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_exceptions():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            with _httpx_exceptions():
                close()


def default_ssl_context() -> ssl.SSLContext:
    """Return TLS settings for OpenAlex: certifi's CA bundle, hostname checks on."""
    # certifi's bundle, not SSL_CERT_FILE/SSL_CERT_DIR: the request must not
    # depend on the environment.
    return httpx.create_ssl_context(trust_env=False)


class PinnedTransport(httpx.BaseTransport):
    """An httpx transport that can only reach ``https://api.openalex.org``.

    One HTTP/1.1 connection, no proxy, no retry, no keep-alive beyond the
    single exchange; every socket under a :class:`DeadlineBackend`.

    Args:
        deadline: The exchange's deadline.
        connect_timeout_s: Limit for name resolution, TCP connect and TLS.
        network_backend: Optional inner backend (see :class:`DeadlineBackend`).
        ssl_context: TLS settings; certifi's bundle by default.
    """

    def __init__(
        self,
        deadline: Deadline,
        connect_timeout_s: float,
        *,
        network_backend: httpcore.NetworkBackend | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._deadline = deadline
        self._connect_timeout_s = connect_timeout_s
        self._connection = httpcore.HTTPConnection(
            origin=_PINNED_ORIGIN,
            ssl_context=ssl_context if ssl_context is not None else default_ssl_context(),
            keepalive_expiry=None,
            http1=True,
            http2=False,
            retries=0,
            network_backend=DeadlineBackend(deadline, connect_timeout_s, inner=network_backend),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send *request*, which must target the pinned origin.

        Raises:
            httpx.UnsupportedProtocol: The request is for any other origin.
            httpx.TransportError: A network failure (timeouts included).
        """
        url = request.url
        if (url.scheme, url.host, url.port or 443) != ("https", PINNED_HOST, 443):
            raise httpx.UnsupportedProtocol("only the pinned OpenAlex origin can be reached")
        left = max(self._deadline.remaining(), 0.0)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions={
                "timeout": {
                    "connect": min(self._connect_timeout_s, left),
                    "read": left,
                    "write": left,
                    "pool": left,
                }
            },
        )
        with _httpx_exceptions():
            response = self._connection.handle_request(core_request)
        if not isinstance(response.stream, Iterable):  # pragma: no cover - sync pool
            raise httpx.TransportError("unexpected asynchronous response stream")
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close the connection."""
        with _httpx_exceptions():
            self._connection.close()
