r"""Trusted time for the log: the server asks an RFC 3161 time-stamp authority to sign its heads.

Off unless ``--timestamp-url`` names a TSA. A background thread wakes every
``--timestamp-every`` seconds and, when something new was logged since the
last stamp, asks the TSA for a timestamp over the SHA-256 of the current
head's checkpoint (``notanda log head v1 <size> <root>\n``, see
``notanda_evidence.checkpoint_bytes``), with a fresh nonce and ``certReq``.
The request is built, and the answer read, with rfc3161-client: status
granted, the imprint is the checkpoint's, the nonce is the request's. Real
TSAs write the token's certificates in their own order, where DER wants a
sorted ``SET OF`` that rfc3161-client insists on: the set is outside the
signature, so rfc3161-client is given the answer with its certificate (and
CRL) sets in DER order (``notanda_evidence.der_ordered_response``), and the
answer is stored as the TSA sent it. The signature is then checked for
consistency with the signer's certificate the answer carries (the signature
over the signed attributes, the message digest of the ``TSTInfo``, the
critical ``timeStamping`` usage and the ESS ``signingCertificate`` or
``signingCertificateV2`` binding), with no chain: trust in the chain is
checked only against a CA bundle, the server's ``--tsa-ca`` (when given, at
stamp time, ``tsa_untrusted``) or the auditor's ``audit --tsa-ca``. An
accepted answer is stored as ``.notanda/timestamps/<size>.tsr``; a token
another server stored first stays.

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

# notanda_evidence's names are read at call time (its lazy ``__getattr__`` loads
# the token store and DER reader on first use). httpx, cryptography and
# rfc3161-client are imported inside the functions that use them, on purpose:
# the server imports this module at start-up, and only a server given
# ``--timestamp-url`` (or ``doctor``) ever needs them.
import notanda_evidence as evidence

from ._errors import NotandaMcpError
from ._guard import LogUnavailable, bounded
from ._logging import LOGGER
from ._version import __version__

if TYPE_CHECKING:
    import httpx
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from notanda_evidence import Head, TokenSignature
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
    "describe",
    "last_stamp",
    "load_tsa_ca",
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
_TST_INFO_OID = "1.2.840.113549.1.9.16.1.4"
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
    #: The signature is not consistent with the signer's certificate the answer carries.
    INCONSISTENT = "tsa_signature_inconsistent"
    #: ``--tsa-ca``: the answer's chain does not lead to a CA in the bundle.
    UNTRUSTED = "tsa_untrusted"
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
    "rfc3161-client cannot read, named in the line): check the URL, or choose another TSA",
    StampCode.REFUSED: "the TSA refused the request (policy, overload or account): check its "
    "terms of use, or choose another TSA",
    StampCode.WRONG_IMPRINT: "the TSA answered for another log head (a faulty or hostile TSA "
    "or proxy): choose another TSA",
    StampCode.WRONG_NONCE: "the TSA answered another request (a replay, or a faulty or hostile "
    "TSA or proxy): choose another TSA",
    StampCode.INCONSISTENT: "the TSA's signature does not check out against the signer's "
    "certificate it sends (it must send it when asked, certReq): choose another TSA",
    StampCode.UNTRUSTED: "the TSA's certificate chain does not lead to a CA in --tsa-ca: give "
    "--tsa-ca the TSA's CA certificates, or check --timestamp-url names the TSA you chose",
    StampCode.NOT_STORED: "make the evidence folder's .notanda/timestamps/ writable, with free "
    "space; the next interval stamps the head then reached",
    StampCode.LOG_UNAVAILABLE: "see the log reason in docs/errors.md; nothing is stamped until "
    "the log can be read",
}


class StampFailure(NotandaMcpError):
    """One attempt at a stamp failed; ``code`` says why, ``detail`` adds an HTTP status.

    ``reason`` says, for ``tsa_unparsable``, which structure could not be
    read, and for the signature's checks which one failed (a sentence of
    this program's, never the TSA's text).
    """

    def __init__(
        self, code: StampCode, detail: int | None = None, *, reason: str | None = None
    ) -> None:
        shown = code.value if detail is None else f"{code.value} ({detail})"
        super().__init__(shown if reason is None else f"{shown} ({reason})")
        self.code = code
        self.detail = detail
        self.reason = reason


# ----------------------------------------------------------------- settings


def check_timestamp_url(text: str) -> str:
    """Return *text* if it can name a TSA: ``http`` or ``https``, a host, nothing secret.

    Raises:
        ValueError: with a one-line message that says what to give instead.
    """
    import httpx  # noqa: PLC0415 - lazy, see the imports

    # The example is not among the answer shapes the tests reproduce: say where they are.
    fix = (
        "give the TSA's RFC 3161 URL, e.g. --timestamp-url http://timestamp.digicert.com "
        "(check it with notanda-mcp doctor --timestamp-url URL --live; the answer shapes "
        "tested are in docs/mcp-clients.md)"
    )
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
            "--timestamp-every must be a decimal number of seconds, at least "
            f"{MINIMUM_TIMESTAMP_EVERY_S:g}: give e.g. --timestamp-every "
            f"{DEFAULT_TIMESTAMP_EVERY_S:g} (the default, {DEFAULT_TIMESTAMP_EVERY_S:g})"
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
    import httpx  # noqa: PLC0415 - lazy, see the imports

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
            return _read_bounded(response, evidence.MAX_TOKEN_BYTES, deadline)
    except httpx.TimeoutException as exc:
        raise StampFailure(StampCode.TIMEOUT) from exc
    except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
        raise StampFailure(StampCode.UNREACHABLE) from exc


#: rfc3161-client's parse errors name the field (``"SignedData::certificates"``) and the kind.
_PARSE_FIELD = re.compile(r'"([A-Za-z][A-Za-z0-9_]{0,40}::[A-Za-z][A-Za-z0-9_]{0,40})"')
_PARSE_KIND = re.compile(r"kind: ([A-Za-z][A-Za-z0-9]{0,40})")


def _unreadable(exc: BaseException) -> str:
    """Which structure rfc3161-client could not read, from its message (its own words only)."""
    message = str(exc)[:1000]
    fields = _PARSE_FIELD.findall(message)
    kind = _PARSE_KIND.search(message)
    where = f"rfc3161-client cannot read {fields[-1] if fields else 'it'}"
    return where if kind is None else f"{where}: {kind.group(1)}"


def _read(step: Callable[[], T], code: StampCode, reason: str | None = None) -> T:
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
        why = reason
        if why is None and code is StampCode.UNPARSABLE:
            why = _unreadable(exc)
        raise StampFailure(code, reason=why) from exc


def load_tsa_ca(path: str | os.PathLike[str]) -> list[x509.Certificate]:
    """The certificates of the PEM bundle at *path* (``--tsa-ca``, as ``audit --tsa-ca`` takes it).

    Raises:
        ValueError: with a one-line message that says what to give instead.
    """
    from cryptography import x509  # noqa: PLC0415 - lazy, see the imports

    fix = "give --tsa-ca the PEM file of the TSA's CA certificates (docs/auditors-guide.md)"
    shown = os.fspath(path)
    try:
        data = evidence.read_ca_bundle(path)  # the rule audit --tsa-ca reads its file by
    except evidence.CaBundleError as exc:
        raise ValueError(f"--tsa-ca {shown}: {exc.problem}: {fix}") from None
    try:
        return x509.load_pem_x509_certificates(data)
    except ValueError:
        raise ValueError(
            f"--tsa-ca {shown}: a PEM certificate in it cannot be read: {fix}"
        ) from None


# ---------------------------------------------------- the signature's check


def _hash(oid: str) -> hashes.HashAlgorithm:
    from cryptography.hazmat.primitives import hashes  # noqa: PLC0415 - lazy, see the imports

    known: dict[str, Callable[[], hashes.HashAlgorithm]] = {
        "1.3.14.3.2.26": hashes.SHA1,
        "2.16.840.1.101.3.4.2.4": hashes.SHA224,
        "2.16.840.1.101.3.4.2.1": hashes.SHA256,
        "2.16.840.1.101.3.4.2.2": hashes.SHA384,
        "2.16.840.1.101.3.4.2.3": hashes.SHA512,
    }
    found = known.get(oid)
    if found is None:
        raise StampFailure(StampCode.INCONSISTENT, reason=f"a hash it does not know ({oid})")
    return found()


#: Signature algorithms by OID: the key type and, when the OID names one, the hash.
_RSA, _EC, _ED = "rsa", "ec", "ed"
_SIGNATURES: dict[str, tuple[str, str | None]] = {
    "1.2.840.113549.1.1.1": (_RSA, None),  # rsaEncryption: the SignerInfo's digest
    "1.2.840.113549.1.1.5": (_RSA, "1.3.14.3.2.26"),
    "1.2.840.113549.1.1.14": (_RSA, "2.16.840.1.101.3.4.2.4"),
    "1.2.840.113549.1.1.11": (_RSA, "2.16.840.1.101.3.4.2.1"),
    "1.2.840.113549.1.1.12": (_RSA, "2.16.840.1.101.3.4.2.2"),
    "1.2.840.113549.1.1.13": (_RSA, "2.16.840.1.101.3.4.2.3"),
    "1.2.840.10045.2.1": (_EC, None),  # ecPublicKey: the SignerInfo's digest
    "1.2.840.10045.4.1": (_EC, "1.3.14.3.2.26"),
    "1.2.840.10045.4.3.1": (_EC, "2.16.840.1.101.3.4.2.4"),
    "1.2.840.10045.4.3.2": (_EC, "2.16.840.1.101.3.4.2.1"),
    "1.2.840.10045.4.3.3": (_EC, "2.16.840.1.101.3.4.2.2"),
    "1.2.840.10045.4.3.4": (_EC, "2.16.840.1.101.3.4.2.3"),
    "1.3.101.112": (_ED, None),
    "1.3.101.113": (_ED, None),
}


def _verify_signature(signer: x509.Certificate, parts: TokenSignature) -> None:
    """The signature over the signed attributes, by the signer's public key (RFC 5652 5.4)."""
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415 - lazy, see the imports
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa  # noqa: PLC0415 - lazy, see the imports

    key = signer.public_key()
    signed, signature = parts.signed_attributes, parts.signature
    try:
        if parts.pss is not None:
            pss_hash, mgf_hash, salt = parts.pss
            if not isinstance(key, rsa.RSAPublicKey):
                raise InvalidSignature
            pss = padding.PSS(mgf=padding.MGF1(_hash(mgf_hash)), salt_length=salt)
            key.verify(signature, signed, pss, _hash(pss_hash))
            return
        kind, hash_oid = _SIGNATURES.get(parts.signature_oid, (None, None))
        digest = _hash(hash_oid or parts.digest_oid)
        if kind == _RSA and isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, signed, padding.PKCS1v15(), digest)
        elif kind == _EC and isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, signed, ec.ECDSA(digest))
        elif kind == _ED and isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
            key.verify(signature, signed)
        else:
            raise StampFailure(
                StampCode.INCONSISTENT,
                reason=f"a signature algorithm unknown for its key ({parts.signature_oid})",
            )
    except InvalidSignature:
        raise StampFailure(
            StampCode.INCONSISTENT, reason="the signature does not verify with the signer's key"
        ) from None


def _binds(cert_id: object, certificate: x509.Certificate) -> bool:
    """Whether one ``ESSCertID`` (v1 or v2) names *certificate*: its hash, and issuer and serial."""
    from cryptography.hazmat.primitives import hashes  # noqa: PLC0415 - lazy, see the imports
    from cryptography.hazmat.primitives.serialization import Encoding  # noqa: PLC0415 - lazy, see the imports

    if not isinstance(cert_id, evidence.EssCertId):
        return False
    digest = hashes.Hash(_hash(cert_id.hash_oid))
    digest.update(certificate.public_bytes(Encoding.DER))
    if digest.finalize() != cert_id.cert_hash:
        return False
    if cert_id.issuer is None:
        return True
    return (
        cert_id.issuer == certificate.issuer.public_bytes()
        and cert_id.serial == certificate.serial_number
    )


def _check_signer(
    response: TimeStampResponse,
    parts: TokenSignature,
    chain: list[x509.Certificate],
    anchors: list[x509.Certificate],
) -> x509.Certificate:
    """The signer's certificate, once the signature is consistent with it; else ``INCONSISTENT``.

    A consistency check, no trust: the signer is the carried certificate the
    ``SignerInfo`` names (its ``sid``, covered by nothing, so the signature
    and the ESS binding, which are, decide), its usage must be the critical
    ``timeStamping``, the signed ``messageDigest`` must be the digest of the
    ``TSTInfo`` read, and the first ESS certificate ID must name the signer
    (RFC 5035 section 5.4); with *anchors* (the ``--tsa-ca`` bundle) every
    further ID must name a certificate carried or of the bundle, as
    ``openssl ts -verify`` requires of the chain it builds.
    """
    from cryptography import x509  # noqa: PLC0415 - lazy, see the imports
    from cryptography.hazmat.primitives import hashes  # noqa: PLC0415 - lazy, see the imports
    from cryptography.x509.oid import ExtendedKeyUsageOID  # noqa: PLC0415 - lazy, see the imports

    def failed(reason: str) -> StampFailure:
        return StampFailure(StampCode.INCONSISTENT, reason=reason)

    signer_infos = list(response.signed_data.signer_infos)
    if len(signer_infos) != 1 or parts.signers != 1:
        raise failed("a token has one signer")
    [info] = signer_infos
    signer = next(
        (c for c in chain if c.issuer == info.issuer and c.serial_number == info.serial_number),
        None,
    )
    if signer is None:
        raise failed("the answer does not carry the signer's certificate")
    try:
        usage = signer.extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    except x509.ExtensionNotFound:
        usage = None
    if usage is None or not usage.critical or ExtendedKeyUsageOID.TIME_STAMPING not in usage.value:
        raise failed("the signer's certificate lacks the critical timeStamping usage")
    if parts.content_type != _TST_INFO_OID:
        raise failed("the signed contentType is not a TSTInfo")

    digest = hashes.Hash(_hash(parts.digest_oid))
    digest.update(parts.content)
    if parts.message_digest != digest.finalize():
        raise failed("the signed messageDigest is not the TSTInfo's")
    _verify_signature(signer, parts)
    if parts.ess_v1 is None and parts.ess_v2 is None:
        raise failed("no ESS signingCertificate binds the signer's certificate")
    for cert_ids in (parts.ess_v1, parts.ess_v2):
        if cert_ids is None:
            continue
        if not _binds(cert_ids[0], signer):
            raise failed("the ESS signingCertificate names another certificate than the signer's")
        # The further IDs name the chain: checked where the chain is, with --tsa-ca.
        if anchors and not all(any(_binds(i, c) for c in chain + anchors) for i in cert_ids[1:]):
            raise failed("the ESS signingCertificate names a certificate outside the chain")
    return signer


def _check_trust(
    response: TimeStampResponse, checkpoint: bytes, nonce: int, trusted: list[x509.Certificate]
) -> None:
    """``--tsa-ca``: the chain from the signer to a CA of the bundle, as ``openssl ts -verify``.

    rfc3161-client's verifier, given the bundle as its only roots: OpenSSL
    builds the chain from the certificates the token carries, with the
    ``timeStamping`` purpose, at the token's ``genTime``.
    """
    from rfc3161_client import VerifierBuilder  # noqa: PLC0415 - lazy, see the imports

    def verify() -> None:
        builder = VerifierBuilder(nonce=nonce)
        for certificate in trusted:
            builder = builder.add_root_certificate(certificate)
        builder.build().verify_message(response, checkpoint)

    _read(verify, StampCode.UNTRUSTED, "its chain does not lead to a CA in --tsa-ca")


def check_answer(
    body: bytes,
    nonce: int,
    checkpoint: bytes,
    trusted: list[x509.Certificate] | None = None,
) -> TimeStampResponse:
    """Check a TSA's answer to the request for *checkpoint* with *nonce*.

    *body* is read as the TSA sent it by the total DER reader, and with its
    certificate and CRL sets in DER order by rfc3161-client; nothing in the
    signed part is re-encoded. With *trusted* (``--tsa-ca``), the chain must
    also lead to one of those CAs.

    Returns:
        rfc3161-client's reading of the answer (sets in DER order).

    Raises:
        StampFailure: ``tsa_unparsable``, ``tsa_refused``, ``tsa_wrong_imprint``,
            ``tsa_wrong_nonce``, ``tsa_signature_inconsistent`` or ``tsa_untrusted``.
    """
    from cryptography import x509  # noqa: PLC0415 - lazy, see the imports
    from rfc3161_client import PKIStatus, decode_timestamp_response  # noqa: PLC0415 - lazy, see the imports

    read = evidence.read_time_stamp_response(body)
    ordered = evidence.der_ordered_response(body)
    if isinstance(read, evidence.DerProblem):
        raise StampFailure(StampCode.UNPARSABLE, reason=f"not a DER TimeStampResp: {read.reason}")
    if isinstance(ordered, evidence.DerProblem):
        raise StampFailure(
            StampCode.UNPARSABLE, reason=f"not a DER TimeStampResp: {ordered.reason}"
        )
    response = _read(partial(decode_timestamp_response, ordered), StampCode.UNPARSABLE)
    status = _read(lambda: response.status, StampCode.UNPARSABLE)
    if status != PKIStatus.GRANTED or read.info is None:
        raise StampFailure(StampCode.REFUSED)

    def fields() -> tuple[str, bytes, int, list[bytes]]:
        info = response.tst_info
        imprint = info.message_imprint
        carried = list(response.signed_data.certificates)
        return imprint.hash_algorithm.dotted_string, imprint.message, info.nonce, carried

    algorithm, message, answered_nonce, carried = _read(fields, StampCode.UNPARSABLE)
    digest = hashlib.sha256(checkpoint).digest()
    # Both readers must agree with the request: the signature below covers the total reader's.
    if algorithm != _SHA256_OID or message != digest:
        raise StampFailure(StampCode.WRONG_IMPRINT)
    if read.info.hash_oid != _SHA256_OID or read.info.digest != digest:
        raise StampFailure(StampCode.WRONG_IMPRINT)
    if answered_nonce != nonce or read.info.nonce != nonce:
        raise StampFailure(StampCode.WRONG_NONCE)
    parts = evidence.read_token_signature(ordered)
    if parts is None or isinstance(parts, evidence.DerProblem):
        why = "the SignerInfo" if parts is None else parts.reason
        raise StampFailure(StampCode.UNPARSABLE, reason=why)
    if set(parts.certificates) != set(carried):
        raise StampFailure(StampCode.UNPARSABLE, reason="the readers disagree on its certificates")
    chain = _read(
        lambda: [x509.load_der_x509_certificate(der) for der in parts.certificates],
        StampCode.UNPARSABLE,
        "cryptography cannot read a certificate it carries",
    )
    if not chain:
        raise StampFailure(
            StampCode.INCONSISTENT, reason="the answer carries no certificate (certReq)"
        )
    _check_signer(response, parts, chain, list(trusted or ()))
    if trusted is not None:
        _check_trust(response, checkpoint, nonce, trusted)
    return response


def describe(failure: StampFailure) -> str:
    """The failure as the stderr line names it: its code, then the HTTP status or the reason."""
    if failure.detail is not None:
        return f"{failure.code.value} (HTTP {failure.detail})"
    if failure.reason is not None:
        return f"{failure.code.value} ({failure.reason})"
    return failure.code.value


def ask_tsa(
    url: str,
    checkpoint: bytes,
    deadline_s: float,
    trusted: list[x509.Certificate] | None = None,
) -> bytes:
    """Ask the TSA at *url* once for a timestamp over *checkpoint*; the checked DER answer.

    The whole exchange and check run in a daemon thread that is waited for
    *deadline_s* at most: nothing the TSA does can hold the caller longer.
    The bytes returned are the TSA's own, as it sent them; with *trusted*
    (``--tsa-ca``) their chain leads to one of those CAs.

    Raises:
        StampFailure: The TSA could not be reached in time, or its answer
            failed a check; ``code`` says which.
    """
    from rfc3161_client import HashAlgorithm, TimestampRequestBuilder  # noqa: PLC0415 - lazy, see the imports

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
        check_answer(body, nonce, checkpoint, trusted)
        return body

    try:
        return bounded(attempt, deadline_s, name="notanda-tsa")
    except TimeoutError as exc:
        raise StampFailure(StampCode.TIMEOUT) from exc


def _tokens_folder(root: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(root), *evidence.TIMESTAMPS_DIR.split("/"))


def last_stamp(root: str | os.PathLike[str]) -> int:
    """The largest size a token is stored for in *root* (0 when none is)."""
    try:
        names = os.listdir(_tokens_folder(root))
    except OSError:
        return 0
    sizes = [size for size in map(evidence.token_size, names) if size is not None]
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
        trusted: The ``--tsa-ca`` certificates each answer's chain must lead
            to before it is stored; None to leave trust to the auditor.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        url: str,
        *,
        every_s: float,
        deadline_s: float,
        head: Callable[[], Head],
        trusted: list[x509.Certificate] | None = None,
    ) -> None:
        self.root = root
        self.trusted = trusted
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
            if os.path.lexists(
                os.path.join(_tokens_folder(self.root), evidence.token_name(head.size))
            ):
                self._stamped = head.size
                LOGGER.info("log head %d already stamped by another server", head.size)
                return True
            try:
                der = ask_tsa(
                    self.url,
                    evidence.checkpoint_bytes(head.size, head.root),
                    self.deadline_s if deadline_s is None else deadline_s,
                    self.trusted,
                )
            except StampFailure as failure:
                LOGGER.warning("log head %d not stamped: %s", head.size, describe(failure))
                return False
            return self._store(head.size, der)

    def _store(self, size: int, der: bytes) -> bool:
        try:
            stored = evidence.store_token(self.root, size, der)
        except evidence.EvidenceStorageError as exc:
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
