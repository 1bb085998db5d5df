"""The test TSA on loopback HTTP: ``tsa_authority`` behind ``http.server``, as a real TSA serves.

``LoopbackTSA(authorities)`` listens on ``127.0.0.1`` (nothing leaves the
machine) and answers each POSTed ``application/timestamp-query`` with the
trusted authority's ``openssl ts -reply``, or, as :attr:`LoopbackTSA.mode`
says, the way a faulty or hostile TSA would: ``http_500``, ``garbage``,
``refuse`` (openssl's own rejection), ``other_imprint`` (a real token for
another message), ``wrong_nonce`` (a real token for the same message and
another nonce), ``redirect``, ``too_large`` (65 KiB), ``untrusted`` (a real token from the other
authority) or ``hold`` (nothing until :meth:`release`, for deadlines and
races). :attr:`LoopbackTSA.shape` (a ``tsa_authority.Shape``, None for
OpenSSL's own answer) says how a granted answer looks: which
implementation, which chain, root or not, and the certificates' order.
Every request is kept, with its headers, so that tests see what the server
sent. :func:`closed_port_url` names a TSA that is down.

Test code, not a package: a conftest puts ``tests-support`` on ``sys.path``.
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tsa_authority import Authorities, Shape

__all__ = ["MODES", "LoopbackTSA", "Received", "closed_port_url", "request_digest"]

MODES = (
    "grant",
    "http_500",
    "garbage",
    "refuse",
    "other_imprint",
    "wrong_nonce",
    "redirect",
    "too_large",
    "untrusted",
    "hold",
)
#: ``AlgorithmIdentifier { sha256, NULL }`` then ``OCTET STRING`` of 32 bytes.
_SHA256_IMPRINT = bytes.fromhex("300d06096086480165030402010500") + b"\x04\x20"
#: How long a held request waits at most for :meth:`LoopbackTSA.release`.
_HOLD_LIMIT_S = 120.0


def request_digest(query: bytes) -> bytes:
    """The SHA-256 imprint a DER ``TimeStampReq`` asks to be stamped."""
    at = query.find(_SHA256_IMPRINT)
    if at < 0:
        raise ValueError("not a SHA-256 time-stamp request")
    start = at + len(_SHA256_IMPRINT)
    return query[start : start + 32]


@dataclass(frozen=True)
class Received:
    """One request as the TSA saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class LoopbackTSA:
    """An HTTP TSA on ``127.0.0.1`` in a thread; use as a context manager."""

    def __init__(
        self, authorities: Authorities, mode: str = "grant", *, delay_s: float = 0.0
    ) -> None:
        self.authorities = authorities
        self.mode = mode
        #: The shape of each granted answer (None: OpenSSL's, direct chain, root, signer first).
        self.shape: Shape | None = None
        #: How long each answer waits first (the benchmark's distant TSA; tests leave it 0).
        self.delay_s = delay_s
        self.received: list[Received] = []
        self.answered: list[bytes] = []
        self._changed = threading.Condition()
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Where the TSA listens."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/tsa"

    def __enter__(self) -> LoopbackTSA:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def release(self) -> None:
        """Let every held request (and later ones in ``hold``) be answered."""
        self._released.set()

    def wait_for_requests(self, count: int, timeout: float = 60.0) -> bool:
        """Wait until *count* requests have arrived in all; False if they did not in *timeout*."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self.received) >= count, timeout)

    def wait_for_answers(self, count: int, timeout: float = 60.0) -> bool:
        """Wait until *count* answers have been sent in all."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self.answered) >= count, timeout)

    def answer(self, query: bytes) -> tuple[int, bytes, dict[str, str]]:
        """The status, body and headers the current mode answers *query* with."""
        authority = self.authorities.trusted
        mode = self.mode
        if self.delay_s:
            time.sleep(self.delay_s)
        if mode == "hold":
            self._released.wait(_HOLD_LIMIT_S)
            mode = "grant"
        reply = {"Content-Type": "application/timestamp-reply"}
        if mode == "grant":
            return 200, authority.reply_to_request(query, self.shape), reply
        if mode == "untrusted":
            return 200, self.authorities.untrusted.reply_to_request(query), reply
        if mode == "http_500":
            return 500, b"internal error", {"Content-Type": "text/plain"}
        if mode == "garbage":
            return 200, b"<html>not a time-stamp</html>", reply
        if mode == "refuse":
            return 200, authority.reply_to_request(b"\x30\x03garbage"), reply
        if mode == "other_imprint":
            return 200, authority.stamp(hashlib.sha256(b"another head").digest(), nonce=7), reply
        if mode == "wrong_nonce":
            return 200, authority.stamp(request_digest(query), nonce=7), reply
        if mode == "too_large":
            return 200, bytes(65 * 1024), reply
        if mode == "redirect":
            return 302, b"", {"Location": "http://127.0.0.1:9/elsewhere"}
        raise ValueError(f"unknown mode {mode!r}")

    def _record(self, received: Received | None = None, answer: bytes | None = None) -> None:
        with self._changed:
            if received is not None:
                self.received.append(received)
            if answer is not None:
                self.answered.append(answer)
            self._changed.notify_all()


def _handler(tsa: LoopbackTSA) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            headers = {key.lower(): value for key, value in self.headers.items()}
            tsa._record(Received("POST", self.path, headers, body))
            status, answer, extra = tsa.answer(body)
            tsa._record(answer=answer)
            try:
                self.send_response(status)
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except OSError:
                pass  # the client gave up waiting (a deadline test): nobody to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def closed_port_url() -> str:
    """The URL of a TSA that is down: a loopback port nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/tsa"
