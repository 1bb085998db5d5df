r"""Trusted time for the log: the server asks an RFC 3161 time-stamp authority to sign its heads.

Off unless ``--timestamp-url`` names a TSA. A background thread wakes every
``--timestamp-every`` seconds and, when something new was logged since the
last stamp, asks the TSA for a timestamp over the SHA-256 of the current
head's checkpoint (``notanda log head v1 <size> <root>\n``, see
``notanda_evidence._timestamps``), with a fresh nonce and ``certReq``. The
request is built, and the answer checked, with rfc3161-client: status
granted, the imprint is the checkpoint's, the nonce is the request's, and
the signature is consistent with the certificates the answer carries, used
as the verifier's roots (a consistency check, not trust: trust is the
auditor's ``audit --tsa-ca``). An accepted answer is stored as
``.notanda/timestamps/<size>.tsr``; a token another server stored first stays.

Stamping never delays or fails a search: it runs beside them, and a TSA that
is down, slow, answers garbage or another imprint or nonce, or refuses, is
one stderr line with a :class:`StampCode`, tried again at the next interval.
Only the configured URL is contacted, by its own HTTP client: no redirects,
no proxy or ``.netrc`` from the environment, no credentials in the URL, and
nothing but the request itself in the body.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from ._errors import NotandaMcpError
from ._guard import LogUnavailable, bounded
from ._logging import LOGGER
from ._version import __version__

if TYPE_CHECKING:
    import httpx
    from notanda_evidence import Head
    from rfc3161_client import TimeStampResponse

T = TypeVar("T")

__all__ = [
    "DEFAULT_TIMESTAMP_EVERY_S",
    "MINIMUM_TIMESTAMP_EVERY_S",
    "TIMESTAMP_DEADLINE_S",
    "StampCode",
    "StampFailure",
    "Stamper",
    "ask_tsa",
    "check_answer",
    "check_timestamp_url",
    "last_stamp",
    "parse_every",
]

#: How often, by default, the server looks for something new to stamp.
DEFAULT_TIMESTAMP_EVERY_S = 300.0
#: The shortest interval: no TSA is asked more than once a second.
MINIMUM_TIMESTAMP_EVERY_S = 1.0
#: One exchange with the TSA, from connect to the last byte of its answer.
TIMESTAMP_DEADLINE_S = 10.0
#: At shutdown, less time than this left in the grace is not worth a request.
_SHORTEST_ATTEMPT_S = 0.1
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?")
_SHA256_OID = "2.16.840.1.101.3.4.2.1"
_MEDIA_QUERY = "application/timestamp-query"
_MEDIA_REPLY = "application/timestamp-reply"


class StampCode(StrEnum):
    """Why a log head was not stamped: the code of the server's stderr line (``docs/errors.md``)."""

    @property
    def remedy(self) -> str:
        """What to do about it, in one line."""
        return _REMEDIES[self]

    #: The TSA could not be reached (name resolution, connect refused, reset).
    UNREACHABLE = "tsa_unreachable"
    #: The TSA did not answer completely within the deadline (10 s).
    TIMEOUT = "tsa_timeout"
    #: The TSA answered with an HTTP status other than 200 (redirects are not followed).
    HTTP_STATUS = "tsa_http_status"
    #: The answer is larger than any token (``MAX_TOKEN_BYTES``).
    TOO_LARGE = "tsa_too_large"
    #: The answer is not a ``TimeStampResp`` rfc3161-client can read.
    UNPARSABLE = "tsa_unparsable"
    #: The TSA refused: its status is not ``granted``.
    REFUSED = "tsa_refused"
    #: The token is for another message imprint (or not a SHA-256 one).
    WRONG_IMPRINT = "tsa_wrong_imprint"
    #: The token carries another nonce than the request's (a replayed answer).
    WRONG_NONCE = "tsa_wrong_nonce"
    #: The signature is not consistent with the certificates the answer carries.
    INCONSISTENT = "tsa_signature_inconsistent"
    #: The token could not be stored (the storage reason follows).
    NOT_STORED = "timestamp_not_stored"
    #: The log's head could not be read (the log reason follows).
    LOG_UNAVAILABLE = "timestamp_log_unavailable"


_CHECK_TSA = "nothing to do now: the server asks again at the next interval"
_REMEDIES = {
    StampCode.UNREACHABLE: "check --timestamp-url and the network (DNS, proxy, firewall); "
    f"{_CHECK_TSA}",
    StampCode.TIMEOUT: f"the TSA was slow or is overloaded; {_CHECK_TSA}; if it keeps "
    "happening, choose another TSA",
    StampCode.HTTP_STATUS: "check that --timestamp-url is the TSA's RFC 3161 endpoint (a "
    f"redirect means another URL); {_CHECK_TSA}",
    StampCode.TOO_LARGE: "--timestamp-url does not answer like a TSA: check the URL",
    StampCode.UNPARSABLE: "--timestamp-url does not answer like a TSA (or answers in a form "
    "rfc3161-client cannot read): check the URL, or choose another TSA",
    StampCode.REFUSED: "the TSA refused the request (policy, overload or account): check its "
    "terms of use, or choose another TSA",
    StampCode.WRONG_IMPRINT: "the TSA answered for another log head (a faulty or hostile TSA "
    "or proxy): choose another TSA",
    StampCode.WRONG_NONCE: "the TSA answered another request (a replay, or a faulty or hostile "
    "TSA or proxy): choose another TSA",
    StampCode.INCONSISTENT: "the TSA's signature does not check out against the certificates "
    "it sends (it must send its chain when asked, certReq): choose another TSA",
    StampCode.NOT_STORED: "make the evidence folder's .notanda/timestamps/ writable, with free "
    "space; the next interval stamps the head then reached",
    StampCode.LOG_UNAVAILABLE: "see the log reason in docs/errors.md; nothing is stamped until "
    "the log can be read",
}


class StampFailure(NotandaMcpError):
    """One attempt at a stamp failed; ``code`` says why, ``detail`` adds an HTTP status."""

    def __init__(self, code: StampCode, detail: int | None = None) -> None:
        super().__init__(code.value if detail is None else f"{code.value} ({detail})")
        self.code = code
        self.detail = detail


# ----------------------------------------------------------------- settings


def check_timestamp_url(text: str) -> str:
    """Return *text* if it can name a TSA: ``http`` or ``https``, a host, nothing secret.

    Raises:
        ValueError: with a one-line message that says what to give instead.
    """
    import httpx

    fix = "give the TSA's RFC 3161 URL, e.g. --timestamp-url http://timestamp.digicert.com"
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, TypeError):
        raise ValueError(f"--timestamp-url is not a URL: {fix}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"--timestamp-url must be an http:// or https:// URL with a host: {fix}")
    if url.userinfo:
        raise ValueError(
            "--timestamp-url must not carry a user name or password (argv is visible to "
            f"every user): {fix}"
        )
    if url.fragment:
        raise ValueError(f"--timestamp-url must not have a #fragment: {fix}")
    return text


def parse_every(text: str) -> float:
    """``--timestamp-every``: a decimal number of seconds, at least 1.

    Raises:
        ValueError: with a one-line message that says what to give instead.
    """
    if _DECIMAL.fullmatch(text) is None or float(text) < MINIMUM_TIMESTAMP_EVERY_S:
        raise ValueError(
            "--timestamp-every must be a decimal number of seconds, at least 1: "
            f"give e.g. --timestamp-every 300 (the default, {DEFAULT_TIMESTAMP_EVERY_S:g})"
        )
    return float(text)


# ------------------------------------------------------------- one exchange


def _read_bounded(response: httpx.Response, limit: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_raw():
        size += len(chunk)
        if size > limit:
            raise StampFailure(StampCode.TOO_LARGE)
        if time.monotonic() > deadline:
            raise StampFailure(StampCode.TIMEOUT)
        chunks.append(chunk)
    return b"".join(chunks)


def _exchange(url: str, query: bytes, deadline_s: float) -> bytes:
    """POST *query* to *url* once; the answer's body, or :class:`StampFailure`."""
    import httpx
    from notanda_evidence._timestamps import MAX_TOKEN_BYTES

    deadline = time.monotonic() + deadline_s
    headers = {
        "Content-Type": _MEDIA_QUERY,
        "Accept": _MEDIA_REPLY,
        "User-Agent": f"notanda-mcp/{__version__}",
    }
    # Its own client: never the provider's transport, no proxy or .netrc from
    # the environment, no redirect, no retry, nothing kept between attempts.
    transport = httpx.HTTPTransport(retries=0, trust_env=False)
    try:
        with (
            httpx.Client(
                transport=transport,
                timeout=httpx.Timeout(deadline_s),
                follow_redirects=False,
                trust_env=False,
            ) as client,
            client.stream("POST", url, content=query, headers=headers) as response,
        ):
            if response.status_code != 200:
                raise StampFailure(StampCode.HTTP_STATUS, response.status_code)
            return _read_bounded(response, MAX_TOKEN_BYTES, deadline)
    except httpx.TimeoutException as exc:
        raise StampFailure(StampCode.TIMEOUT) from exc
    except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
        raise StampFailure(StampCode.UNREACHABLE) from exc


def _read(step: Callable[[], T], code: StampCode) -> T:
    """Run one step of reading an answer; whatever it raises becomes *code*.

    rfc3161-client raises ValueError on bytes it cannot read, and a panic in
    its Rust parser would surface as ``pyo3_runtime.PanicException``, which
    derives from BaseException: only an interrupt or an exit passes through.
    """
    try:
        return step()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        raise StampFailure(code) from exc


def check_answer(body: bytes, nonce: int, checkpoint: bytes) -> TimeStampResponse:
    """Check a TSA's answer to the request for *checkpoint* with *nonce*, with rfc3161-client.

    Raises:
        StampFailure: ``tsa_unparsable``, ``tsa_refused``, ``tsa_wrong_imprint``,
            ``tsa_wrong_nonce`` or ``tsa_signature_inconsistent``.
    """
    from cryptography import x509
    from rfc3161_client import PKIStatus, VerifierBuilder, decode_timestamp_response

    response = _read(partial(decode_timestamp_response, body), StampCode.UNPARSABLE)
    if _read(lambda: response.status, StampCode.UNPARSABLE) != PKIStatus.GRANTED:
        raise StampFailure(StampCode.REFUSED)

    def fields() -> tuple[str, bytes, int, list[bytes]]:
        info = response.tst_info
        imprint = info.message_imprint
        carried = list(response.signed_data.certificates)
        return imprint.hash_algorithm.dotted_string, imprint.message, info.nonce, carried

    algorithm, message, answered_nonce, carried = _read(fields, StampCode.UNPARSABLE)
    if algorithm != _SHA256_OID or message != hashlib.sha256(checkpoint).digest():
        raise StampFailure(StampCode.WRONG_IMPRINT)
    if answered_nonce != nonce:
        raise StampFailure(StampCode.WRONG_NONCE)

    def consistent() -> None:
        builder = VerifierBuilder(nonce=nonce)
        for der in carried:
            builder = builder.add_root_certificate(x509.load_der_x509_certificate(der))
        builder.build().verify_message(response, checkpoint)

    _read(consistent, StampCode.INCONSISTENT)
    return response


def ask_tsa(url: str, checkpoint: bytes, deadline_s: float) -> bytes:
    """Ask the TSA at *url* once for a timestamp over *checkpoint*; the checked DER answer.

    The whole exchange and check run in a daemon thread that is waited for
    *deadline_s* at most: nothing the TSA does can hold the caller longer.

    Raises:
        StampFailure: The TSA could not be reached in time, or its answer
            failed a check; ``code`` says which.
    """
    from rfc3161_client import HashAlgorithm, TimestampRequestBuilder

    request = (
        TimestampRequestBuilder()
        .data(checkpoint)
        .hash_algorithm(HashAlgorithm.SHA256)
        .nonce(nonce=True)
        .cert_request(cert_request=True)
        .build()
    )
    nonce = request.nonce
    if nonce is None:  # pragma: no cover - the builder always draws one when asked
        raise StampFailure(StampCode.WRONG_NONCE)
    query = request.as_bytes()

    def attempt() -> bytes:
        body = _exchange(url, query, deadline_s)
        check_answer(body, nonce, checkpoint)
        return body

    try:
        return bounded(attempt, deadline_s, name="notanda-tsa")
    except TimeoutError as exc:
        raise StampFailure(StampCode.TIMEOUT) from exc


def _tokens_folder(root: str | os.PathLike[str]) -> str:
    from notanda_evidence._timestamps import TIMESTAMPS_DIR

    return os.path.join(os.fspath(root), *TIMESTAMPS_DIR.split("/"))


def last_stamp(root: str | os.PathLike[str]) -> int:
    """The largest size a token is stored for in *root* (0 when none is)."""
    from notanda_evidence._timestamps import token_size

    try:
        names = os.listdir(_tokens_folder(root))
    except OSError:
        return 0
    sizes = [size for size in map(token_size, names) if size is not None]
    return max(sizes, default=0)


# ----------------------------------------------------------------- stamper


class Stamper:
    """Stamps the log's head beside the searches: now and then, and once more at shutdown.

    Args:
        root: The evidence root.
        url: The TSA (checked by :func:`check_timestamp_url`).
        every_s: Seconds between two looks for something new to stamp.
        deadline_s: The most one exchange with the TSA may take.
        head: Returns the log's current head; raises ``LogUnavailable``.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        url: str,
        *,
        every_s: float,
        deadline_s: float,
        head: Callable[[], Head],
    ) -> None:
        self.root = root
        self.url = url
        self.every_s = every_s
        self.deadline_s = deadline_s
        self._head = head
        self._stamped = last_stamp(root)
        self._stop = threading.Event()
        self._busy = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def stamped(self) -> int:
        """The size of the newest head stamped (by this server or found stored)."""
        return self._stamped

    def stamp_once(self, deadline_s: float | None = None) -> bool:
        """Stamp the current head if it is new; True when a token for it is stored now.

        Every failure is logged as one line with its :class:`StampCode` and
        returns False; the next call tries again.
        """
        from notanda_evidence._timestamps import checkpoint_bytes, token_name

        with self._busy:
            try:
                head = self._head()
            except LogUnavailable as exc:
                LOGGER.warning(
                    "log head not stamped: %s (%s)", StampCode.LOG_UNAVAILABLE.value, exc.reason
                )
                return False
            if head.size <= self._stamped:
                return False
            if os.path.lexists(os.path.join(_tokens_folder(self.root), token_name(head.size))):
                self._stamped = head.size
                LOGGER.info("log head %d already stamped by another server", head.size)
                return True
            try:
                der = ask_tsa(
                    self.url,
                    checkpoint_bytes(head.size, head.root),
                    self.deadline_s if deadline_s is None else deadline_s,
                )
            except StampFailure as failure:
                if failure.detail is None:
                    LOGGER.warning("log head %d not stamped: %s", head.size, failure.code.value)
                else:
                    LOGGER.warning(
                        "log head %d not stamped: %s (HTTP %d)",
                        head.size,
                        failure.code.value,
                        failure.detail,
                    )
                return False
            return self._store(head.size, der)

    def _store(self, size: int, der: bytes) -> bool:
        from notanda_evidence import EvidenceStorageError
        from notanda_evidence._timestamps import store_token

        try:
            stored = store_token(self.root, size, der)
        except EvidenceStorageError as exc:
            LOGGER.warning(
                "log head %d not stamped: %s (%s)",
                size,
                StampCode.NOT_STORED.value,
                exc.reason.value,
            )
            return False
        self._stamped = size
        if stored:
            LOGGER.info("log head %d stamped by the time-stamp authority", size)
        else:
            LOGGER.info("log head %d already stamped by another server", size)
        return True

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.stamp_once()
            except Exception as exc:  # a bug must not end stamping for the server's life
                LOGGER.error(
                    "unexpected %s while stamping; tried again at the next interval",
                    type(exc).__name__,
                )

    def start(self) -> None:
        """Start the background thread (a daemon: it never keeps the process alive)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="notanda-stamper", daemon=True)
            self._thread.start()

    def stop(self, until: float) -> None:
        """Stop the thread, then stamp once more if that fits before ``time.monotonic()`` *until*.

        A stamp that does not fit (an attempt still running, or too little
        time left) is left to the next start, which stamps the head then.
        """
        if self._stop.is_set():
            return
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(max(until - time.monotonic(), 0.0))
        left = until - time.monotonic()
        if (thread is not None and thread.is_alive()) or left < _SHORTEST_ATTEMPT_S:
            LOGGER.info("the last stamp is left to the next start (%s)", "no time left")
            return
        self.stamp_once(min(self.deadline_s, left))
