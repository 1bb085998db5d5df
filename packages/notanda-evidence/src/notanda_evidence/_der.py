"""A small, total DER reader for RFC 3161 ``TimeStampResp`` files: the one home of DER here.

:func:`read_time_stamp_response` takes any bytes and returns either what an
auditor needs from a time-stamp response (its ``PKIStatus`` and, from the
token's ``TSTInfo``: the message imprint, nonce, ``genTime``, serial number,
TSA name and policy) or a :class:`DerProblem` saying why it cannot. It never
raises, never recurses on input and never allocates more than the input: a
response over :data:`MAX_TOKEN_BYTES` is refused before it is read, every
length is checked against the bytes that hold it, and the reader walks the
fixed shape of RFC 3161 and RFC 5652 instead of following the data.

:func:`read_token_signature` gives, as bytes, what checking a granted
token's signature needs (the certificates carried, the ``TSTInfo``, the
signed attributes as signed, the ESS certificate IDs, the signature), and
:func:`der_ordered_response` puts the token's unsigned ``certificates`` and
``crls`` sets in DER order, moving no other byte, for strict readers such
as rfc3161-client (TSAs write those sets in their own order). Both are as
total as the reader.

It reads; it does not verify. The token's signature and its certificate
chain are checked by ``openssl ts -verify`` (``audit --tsa-ca``), and by
notanda-mcp's stamper with cryptography.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

__all__ = [
    "MAX_TOKEN_BYTES",
    "PKI_STATUS_NAMES",
    "RSASSA_PSS_OID",
    "SHA1_OID",
    "SHA256_OID",
    "DerProblem",
    "EssCertId",
    "TimeStampInfo",
    "TimeStampResponse",
    "TokenSignature",
    "der_ordered_response",
    "read_time_stamp_response",
    "read_token_signature",
]

#: No time-stamp response is larger: a token with a few certificates is 2 to 8 KiB.
MAX_TOKEN_BYTES = 64 * 1024
#: A nonce or serial number longer than this is not one (RFC 3161 serials are 160 bits).
MAX_INTEGER_BYTES = 64
#: The longest OID or status text read; both only ever reach the report.
_MAX_OID_ARCS = 32
_MAX_TEXT_BYTES = 1024

SHA256_OID = "2.16.840.1.101.3.4.2.1"
_SIGNED_DATA_OID = "1.2.840.113549.1.7.2"
_TST_INFO_OID = "1.2.840.113549.1.9.16.1.4"

# Identifier octets (universal class unless said otherwise).
_BOOLEAN, _INTEGER, _BIT_STRING, _OCTET_STRING, _NULL, _OID = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
_UTF8, _PRINTABLE, _T61, _IA5, _BMP, _UNIVERSAL = 0x0C, 0x13, 0x14, 0x16, 0x1E, 0x1C
_GENERALIZED_TIME, _SEQUENCE, _SET = 0x18, 0x30, 0x31
_CONTEXT_0, _CONTEXT_1, _DIRECTORY_NAME = 0xA0, 0xA1, 0xA4

_CONTENT_TYPE_OID = "1.2.840.113549.1.9.3"
_MESSAGE_DIGEST_OID = "1.2.840.113549.1.9.4"
#: ESS ``signingCertificate`` (RFC 2634, ``ESSCertID``: SHA-1) and ``signingCertificateV2``
#: (RFC 5035, ``ESSCertIDv2``: any hash, SHA-256 by default).
_SIGNING_CERTIFICATE_OID = "1.2.840.113549.1.9.16.2.12"
_SIGNING_CERTIFICATE_V2_OID = "1.2.840.113549.1.9.16.2.47"
SHA1_OID = "1.3.14.3.2.26"
RSASSA_PSS_OID = "1.2.840.113549.1.1.10"
_MGF1_OID = "1.2.840.113549.1.1.8"

_NAME_KEYS = {
    "2.5.4.3": "CN",
    "2.5.4.5": "serialNumber",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "1.2.840.113549.1.9.1": "emailAddress",
}
_GENERAL_NAME_TEXT = {0x81: "email", 0x82: "DNS", 0x86: "URI"}
_GENTIME = re.compile(rb"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\.\d{0,8}[1-9])?Z")


#: The ``PKIStatus`` values of RFC 3161 section 2.4.2 by name (any integer may arrive).
PKI_STATUS_NAMES = {
    0: "granted",
    1: "grantedWithMods",
    2: "rejection",
    3: "waiting",
    4: "revocationWarning",
    5: "revocationNotification",
}
_GRANTED = (0, 1)


@dataclass(frozen=True, slots=True)
class DerProblem:
    """Why some bytes are not a readable time-stamp response (one short sentence)."""

    reason: str
    #: True when the input was refused for its size alone, unread.
    too_large: bool = False


@dataclass(frozen=True, slots=True)
class TimeStampInfo:
    """What a granted token's ``TSTInfo`` states (RFC 3161 section 2.4.2)."""

    policy: str
    hash_oid: str
    digest: bytes
    serial: int
    #: ``genTime`` in ISO 8601, UTC, with the fraction the TSA gave: ``2026-12-01T12:46:12Z``.
    gen_time: str
    nonce: int | None
    #: The ``tsa`` field as text (``CN=...,O=...`` for a directory name), or None when absent.
    tsa_name: str | None
    #: How many certificates the token carries (``certReq`` asks for the TSA's).
    certificates: int


@dataclass(frozen=True, slots=True)
class TimeStampResponse:
    """A ``TimeStampResp``: its status and, when granted, what its token states."""

    status: int
    status_text: str | None
    info: TimeStampInfo | None

    @property
    def granted(self) -> bool:
        """Whether the TSA granted the request (``granted`` or ``grantedWithMods``)."""
        return self.status in _GRANTED


class _Malformed(Exception):
    """Raised inside the reader only; :func:`read_time_stamp_response` turns it into a problem."""


@dataclass(frozen=True, slots=True)
class _Tlv:
    tag: int
    start: int
    end: int
    #: Where the element's identifier octet is (``start`` is its content's first byte).
    head: int = 0


def _tlv(data: bytes, offset: int, limit: int) -> _Tlv:
    """The element at *offset*, which must end by *limit*; definite lengths only (DER)."""
    head = offset
    if offset + 2 > limit:
        raise _Malformed("truncated")
    tag = data[offset]
    if tag & 0x1F == 0x1F:
        raise _Malformed("a high tag number, which no time-stamp uses")
    first = data[offset + 1]
    offset += 2
    if first < 0x80:
        length = first
    elif first == 0x80:
        raise _Malformed("an indefinite length, which DER forbids")
    else:
        count = first & 0x7F
        if count > 3 or offset + count > limit:
            raise _Malformed("a length longer than the response")
        length = int.from_bytes(data[offset : offset + count], "big")
        offset += count
    if offset + length > limit:
        raise _Malformed("truncated")
    return _Tlv(tag, offset, offset + length, head)


def _children(data: bytes, parent: _Tlv) -> list[_Tlv]:
    """The elements inside a constructed element, in order (each at least two bytes)."""
    if not parent.tag & 0x20:
        raise _Malformed("a primitive element where a constructed one belongs")
    found = []
    offset = parent.start
    while offset < parent.end:
        child = _tlv(data, offset, parent.end)
        found.append(child)
        offset = child.end
    return found


def _expect(element: _Tlv, tag: int, what: str) -> _Tlv:
    if element.tag != tag:
        raise _Malformed(f"{what} is not where RFC 3161 puts it")
    return element


def _content(data: bytes, element: _Tlv) -> bytes:
    return data[element.start : element.end]


def _integer(data: bytes, element: _Tlv, what: str) -> int:
    _expect(element, _INTEGER, what)
    raw = _content(data, element)
    if not raw or len(raw) > MAX_INTEGER_BYTES:
        raise _Malformed(f"{what} is not an integer of at most {MAX_INTEGER_BYTES} bytes")
    return int.from_bytes(raw, "big", signed=True)


def _oid(data: bytes, element: _Tlv, what: str) -> str:
    _expect(element, _OID, what)
    raw = _content(data, element)
    arcs: list[int] = []
    value = 0
    pending = False
    for byte in raw:
        if not pending and byte == 0x80:
            raise _Malformed(f"{what} is not a DER object identifier")
        value = (value << 7) | (byte & 0x7F)
        pending = bool(byte & 0x80)
        if not pending:
            arcs.append(value)
            value = 0
            if len(arcs) > _MAX_OID_ARCS:
                raise _Malformed(f"{what} is longer than any object identifier in use")
        elif value.bit_length() > 64:
            raise _Malformed(f"{what} has an arc beyond 64 bits")
    if not arcs or pending:
        raise _Malformed(f"{what} is not a DER object identifier")
    head = arcs[0]
    first, second = (head // 40, head % 40) if head < 80 else (2, head - 80)
    return ".".join(str(arc) for arc in (first, second, *arcs[1:]))


def _text(data: bytes, element: _Tlv) -> str | None:
    """A directory string as text, or None for a string type this reader does not decode."""
    raw = _content(data, element)[:_MAX_TEXT_BYTES]
    codec = {
        _UTF8: "utf-8",
        _PRINTABLE: "ascii",
        _IA5: "ascii",
        _T61: "latin-1",
        _BMP: "utf-16-be",
        _UNIVERSAL: "utf-32-be",
    }.get(element.tag)
    return None if codec is None else raw.decode(codec, errors="replace")


def _name(data: bytes, element: _Tlv) -> str:
    """An X.501 Name as ``CN=...,O=...`` (RFC 4514 order: the last RDN first)."""
    parts = []
    for rdn in _children(data, _expect(element, _SEQUENCE, "the TSA name")):
        values = []
        for attribute in _children(data, _expect(rdn, _SET, "a name's component")):
            pair = _children(data, _expect(attribute, _SEQUENCE, "a name's attribute"))
            if len(pair) != 2:
                raise _Malformed("a name's attribute is not a type and a value")
            oid = _oid(data, pair[0], "a name attribute's type")
            text = _text(data, pair[1])
            shown = text if text is not None else "#" + _content(data, pair[1]).hex()
            values.append(f"{_NAME_KEYS.get(oid, oid)}={shown}")
        parts.append("+".join(values))
    return ",".join(reversed(parts))


def _general_name(data: bytes, wrapper: _Tlv) -> str:
    """The TSTInfo ``tsa [0] GeneralName`` (a CHOICE, so explicitly tagged)."""
    inner = _children(data, wrapper)
    if len(inner) != 1:
        raise _Malformed("the TSA name is not one GeneralName")
    [choice] = inner
    if choice.tag == 0xA4:  # directoryName [4] Name
        names = _children(data, choice)
        if len(names) != 1:
            raise _Malformed("the TSA's directory name is not one Name")
        return _name(data, names[0])
    if choice.tag in _GENERAL_NAME_TEXT:
        text = _content(data, choice)[:_MAX_TEXT_BYTES].decode("ascii", errors="replace")
        return f"{_GENERAL_NAME_TEXT[choice.tag]}:{text}"
    return f"(a GeneralName of tag {choice.tag:#04x})"


def _gen_time(data: bytes, element: _Tlv) -> str:
    match = _GENTIME.fullmatch(_content(data, _expect(element, _GENERALIZED_TIME, "genTime")))
    if match is None:
        raise _Malformed("genTime is not YYYYMMDDHHMMSS[.f]Z")
    year, month, day, hour, minute, second = (int(group) for group in match.groups()[:6])
    try:
        dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.UTC)
    except ValueError as exc:
        raise _Malformed("genTime is not a real time") from exc
    fraction = (match.group(7) or b"").decode("ascii")
    return f"{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{fraction}Z"


def _tst_info(data: bytes, element: _Tlv, certificates: int) -> TimeStampInfo:
    fields = _children(data, _expect(element, _SEQUENCE, "the TSTInfo"))
    if len(fields) < 5:
        raise _Malformed("the TSTInfo lacks required fields")
    if _integer(data, fields[0], "the TSTInfo version") != 1:
        raise _Malformed("the TSTInfo version is not 1")
    policy = _oid(data, fields[1], "the policy")
    imprint = _children(data, _expect(fields[2], _SEQUENCE, "the message imprint"))
    if len(imprint) != 2:
        raise _Malformed("the message imprint is not an algorithm and a digest")
    algorithm = _children(data, _expect(imprint[0], _SEQUENCE, "the imprint's algorithm"))
    if not algorithm or len(algorithm) > 2:
        raise _Malformed("the imprint's algorithm is not an AlgorithmIdentifier")
    hash_oid = _oid(data, algorithm[0], "the imprint's algorithm")
    digest = _content(data, _expect(imprint[1], _OCTET_STRING, "the imprint's digest"))
    serial = _integer(data, fields[3], "the serial number")
    gen_time = _gen_time(data, fields[4])
    nonce: int | None = None
    tsa_name: str | None = None
    # The optional fields, each at most once and in the order RFC 3161 lists them.
    order = [_SEQUENCE, _BOOLEAN, _INTEGER, _CONTEXT_0, _CONTEXT_1]
    position = 0
    for optional in fields[5:]:
        while position < len(order) and order[position] != optional.tag:
            position += 1
        if position == len(order):
            raise _Malformed("the TSTInfo holds a field out of place")
        if optional.tag == _INTEGER:
            nonce = _integer(data, optional, "the nonce")
        elif optional.tag == _CONTEXT_0:
            tsa_name = _general_name(data, optional)
        position += 1
    return TimeStampInfo(policy, hash_oid, digest, serial, gen_time, nonce, tsa_name, certificates)


@dataclass(frozen=True, slots=True)
class _SignedData:
    """Where the parts of a token's ``SignedData`` lie in the response's bytes."""

    tst_info: _Tlv
    certificates: _Tlv | None
    crls: _Tlv | None
    signer_infos: _Tlv


def _signed_data(data: bytes, element: _Tlv) -> _SignedData:
    """A ``TimeStampToken``: CMS ``ContentInfo`` with ``SignedData`` over a ``TSTInfo``."""
    content_info = _children(data, _expect(element, _SEQUENCE, "the token"))
    if len(content_info) != 2:
        raise _Malformed("the token is not a content type and a content")
    if _oid(data, content_info[0], "the token's content type") != _SIGNED_DATA_OID:
        raise _Malformed("the token is not CMS SignedData")
    wrapped = _children(data, _expect(content_info[1], _CONTEXT_0, "the SignedData"))
    if len(wrapped) != 1:
        raise _Malformed("the token's content is not one SignedData")
    signed = _children(data, _expect(wrapped[0], _SEQUENCE, "the SignedData"))
    if len(signed) < 4:
        raise _Malformed("the SignedData lacks required fields")
    _integer(data, signed[0], "the SignedData version")
    _expect(signed[1], _SET, "the digest algorithms")
    encapsulated = _children(data, _expect(signed[2], _SEQUENCE, "the encapsulated content"))
    if len(encapsulated) != 2:
        raise _Malformed("the token's SignedData carries no content")
    if _oid(data, encapsulated[0], "the encapsulated content type") != _TST_INFO_OID:
        raise _Malformed("the token's content is not a TSTInfo")
    octets = _children(data, _expect(encapsulated[1], _CONTEXT_0, "the TSTInfo"))
    if len(octets) != 1:
        raise _Malformed("the TSTInfo is not one OCTET STRING")
    inner = _expect(octets[0], _OCTET_STRING, "the TSTInfo's OCTET STRING")
    rest = signed[3:]
    certificates = crls = None
    if rest and rest[0].tag == _CONTEXT_0:
        certificates = rest[0]
        _children(data, certificates)
        rest = rest[1:]
    if rest and rest[0].tag == _CONTEXT_1:
        crls = rest[0]
        _children(data, crls)
        rest = rest[1:]
    if len(rest) != 1 or not _children(data, _expect(rest[0], _SET, "the signer infos")):
        raise _Malformed("the SignedData has no signer")
    tst = _tlv(data, inner.start, inner.end)
    if tst.end != inner.end:
        raise _Malformed("bytes after the TSTInfo")
    return _SignedData(tst, certificates, crls, rest[0])


def _token(data: bytes, element: _Tlv) -> TimeStampInfo:
    parts = _signed_data(data, element)
    carried = 0 if parts.certificates is None else len(_children(data, parts.certificates))
    return _tst_info(data, parts.tst_info, carried)


def _status_and_token(data: bytes) -> tuple[list[_Tlv], list[_Tlv]]:
    """A ``TimeStampResp``'s PKIStatusInfo elements and its parts (status, optional token)."""
    outer = _tlv(data, 0, len(data))
    if outer.end != len(data):
        raise _Malformed("bytes after the TimeStampResp")
    parts = _children(data, _expect(outer, _SEQUENCE, "the TimeStampResp"))
    if not parts or len(parts) > 2:
        raise _Malformed("the TimeStampResp is not a status and an optional token")
    status_info = _children(data, _expect(parts[0], _SEQUENCE, "the PKIStatusInfo"))
    if not status_info:
        raise _Malformed("the PKIStatusInfo holds no status")
    return status_info, parts


def _granted_token(data: bytes) -> _Tlv | None:
    """The token of a granted response, or None for a refusal (which has none to rely on)."""
    status_info, parts = _status_and_token(data)
    if _integer(data, status_info[0], "the status") not in _GRANTED:
        return None
    if len(parts) != 2:
        raise _Malformed("granted, but no token")
    return parts[1]


def _response(data: bytes) -> TimeStampResponse:
    status_info, parts = _status_and_token(data)
    status = _integer(data, status_info[0], "the status")
    status_text = None
    if len(status_info) > 1 and status_info[1].tag == _SEQUENCE:
        texts = [_text(data, t) for t in _children(data, status_info[1])]
        status_text = "; ".join(t for t in texts if t is not None)[:_MAX_TEXT_BYTES] or None
    response = TimeStampResponse(status, status_text, None)
    if not response.granted:
        return response  # A refusal carries no token, or one nobody may rely on.
    if len(parts) != 2:
        raise _Malformed("granted, but no token")
    return TimeStampResponse(status, status_text, _token(data, parts[1]))


def read_time_stamp_response(data: bytes) -> TimeStampResponse | DerProblem:
    """Read a DER ``TimeStampResp``; any bytes give an answer, never an exception.

    Returns:
        The response (with its token's contents when granted), or a
        :class:`DerProblem` naming the first thing that is not DER of the
        shape RFC 3161 defines.
    """
    if len(data) > MAX_TOKEN_BYTES:
        return DerProblem(f"over {MAX_TOKEN_BYTES} bytes", too_large=True)
    try:
        return _response(bytes(data))
    except _Malformed as exc:
        return DerProblem(str(exc))


# ------------------------------------------------------- the unsigned sets


def der_ordered_response(data: bytes) -> bytes | DerProblem:
    """*data* with its token's ``certificates`` and ``crls`` in DER order; all else unchanged.

    Both are a ``SET OF``, which DER sorts by encoding, but many TSAs write
    them as a sequence (OpenSSL: the signer's certificate, then its chain).
    Neither set is covered by the signature (RFC 5652 section 5.4 signs the
    content and the signed attributes), and sorting a set's elements leaves
    every length as it was: only the bytes inside the two sets move, and a
    response already in DER order (or a refusal) comes back equal to *data*.

    Returns:
        The re-ordered response (as long as *data*), or a :class:`DerProblem`
        when *data* is not a response of RFC 3161's shape.
    """
    if len(data) > MAX_TOKEN_BYTES:
        return DerProblem(f"over {MAX_TOKEN_BYTES} bytes", too_large=True)
    data = bytes(data)
    try:
        token = _granted_token(data)
        if token is None:
            return data
        parts = _signed_data(data, token)
    except _Malformed as exc:
        return DerProblem(str(exc))
    ordered = bytearray(data)
    for field in (parts.certificates, parts.crls):
        if field is not None:
            elements = sorted(data[child.head : child.end] for child in _children(data, field))
            ordered[field.start : field.end] = b"".join(elements)
    return bytes(ordered)


# ------------------------------------------------------------ the signer


@dataclass(frozen=True, slots=True)
class EssCertId:
    """One ``ESSCertID`` (RFC 2634) or ``ESSCertIDv2`` (RFC 5035) of a signed attribute."""

    #: The hash the certificate's DER is hashed with (SHA-1 for an ``ESSCertID``).
    hash_oid: str
    cert_hash: bytes
    #: The DER of the issuer's directory name, and the serial, when ``issuerSerial`` is given.
    issuer: bytes | None
    serial: int | None


@dataclass(frozen=True, slots=True)
class TokenSignature:
    """What checking a granted token's signature needs, as the response holds it (RFC 5652)."""

    #: Each certificate the token carries, its DER, in the order of the response's bytes.
    certificates: tuple[bytes, ...]
    #: The encapsulated content: the DER ``TSTInfo`` the signature's message digest covers.
    content: bytes
    #: How many ``SignerInfo`` it holds (a time-stamp token has one); the rest is the first's.
    signers: int
    digest_oid: str
    #: The signed ``contentType`` and ``messageDigest`` attributes (None when absent).
    content_type: str | None
    message_digest: bytes | None
    #: The bytes the signature is over: the signed attributes, tagged as a ``SET OF``.
    signed_attributes: bytes
    signature_oid: str
    signature: bytes
    #: For RSASSA-PSS: the hash, the MGF1 hash and the salt length (RFC 4055 defaults filled in).
    pss: tuple[str, str, int] | None
    #: The ESS ``signingCertificate`` and ``signingCertificateV2`` lists (None when absent).
    ess_v1: tuple[EssCertId, ...] | None
    ess_v2: tuple[EssCertId, ...] | None


def _algorithm(data: bytes, element: _Tlv, what: str) -> tuple[str, _Tlv | None]:
    fields = _children(data, _expect(element, _SEQUENCE, what))
    if not fields or len(fields) > 2:
        raise _Malformed(f"{what} is not an AlgorithmIdentifier")
    return _oid(data, fields[0], what), (fields[1] if len(fields) == 2 else None)


def _single_value(data: bytes, values: _Tlv, what: str) -> _Tlv:
    found = _children(data, _expect(values, _SET, what))
    if len(found) != 1:
        raise _Malformed(f"{what} does not hold exactly one value")
    return found[0]


def _ess_cert_ids(data: bytes, value: _Tlv, v2: bool) -> tuple[EssCertId, ...]:
    what = "the signingCertificateV2" if v2 else "the signingCertificate"
    fields = _children(data, _expect(value, _SEQUENCE, what))
    if not fields:
        raise _Malformed(f"{what} lists no certificate")
    found = []
    for entry in _children(data, _expect(fields[0], _SEQUENCE, f"{what}'s certificates")):
        parts = _children(data, _expect(entry, _SEQUENCE, f"an ESSCertID of {what}"))
        hash_oid = SHA256_OID if v2 else SHA1_OID
        if v2 and parts and parts[0].tag == _SEQUENCE:
            hash_oid = _algorithm(data, parts[0], "an ESSCertIDv2's hash")[0]
            parts = parts[1:]
        if not parts or len(parts) > 2:
            raise _Malformed(f"an ESSCertID of {what} is not a hash and an issuerSerial")
        cert_hash = _content(data, _expect(parts[0], _OCTET_STRING, "an ESSCertID's hash"))
        issuer = serial = None
        if len(parts) == 2:
            issuer_serial = _children(data, _expect(parts[1], _SEQUENCE, "an issuerSerial"))
            if len(issuer_serial) != 2:
                raise _Malformed("an ESSCertID's issuerSerial is not an issuer and a serial")
            names = _children(data, _expect(issuer_serial[0], _SEQUENCE, "the issuer's names"))
            if len(names) != 1 or names[0].tag != _DIRECTORY_NAME:
                raise _Malformed("an ESSCertID's issuer is not one directory name")
            inner = _children(data, names[0])
            if len(inner) != 1:
                raise _Malformed("an ESSCertID's issuer is not one directory name")
            name = _expect(inner[0], _SEQUENCE, "an ESSCertID's issuer")
            issuer = data[name.head : name.end]
            serial = _integer(data, issuer_serial[1], "an ESSCertID's serial")
        found.append(EssCertId(hash_oid, cert_hash, issuer, serial))
    if not found:
        raise _Malformed(f"{what} lists no certificate")
    return tuple(found)


def _pss(data: bytes, parameters: _Tlv | None) -> tuple[str, str, int]:
    """RSASSA-PSS-params (RFC 4055): each field explicitly tagged, each with a default."""
    hash_oid, mgf_hash, salt = SHA1_OID, SHA1_OID, 20
    if parameters is None:
        return hash_oid, mgf_hash, salt
    for field in _children(data, _expect(parameters, _SEQUENCE, "the RSASSA-PSS parameters")):
        inner = _children(data, field)
        if len(inner) != 1:
            raise _Malformed("an RSASSA-PSS parameter is not one value")
        if field.tag == 0xA0:
            hash_oid = _algorithm(data, inner[0], "the RSASSA-PSS hash")[0]
        elif field.tag == 0xA1:
            mgf, mgf_parameters = _algorithm(data, inner[0], "the RSASSA-PSS mask generation")
            if mgf != _MGF1_OID or mgf_parameters is None:
                raise _Malformed("the RSASSA-PSS mask generation is not MGF1 with a hash")
            mgf_hash = _algorithm(data, mgf_parameters, "the MGF1 hash")[0]
        elif field.tag == 0xA2:
            salt = _integer(data, inner[0], "the RSASSA-PSS salt length")
        elif field.tag == 0xA3:
            if _integer(data, inner[0], "the RSASSA-PSS trailer field") != 1:
                raise _Malformed("the RSASSA-PSS trailer field is not 1")
        else:
            raise _Malformed("the RSASSA-PSS parameters hold a field out of place")
    return hash_oid, mgf_hash, salt


def _signature(data: bytes, token: _Tlv) -> TokenSignature:
    parts = _signed_data(data, token)
    certificates = (
        ()
        if parts.certificates is None
        else tuple(data[c.head : c.end] for c in _children(data, parts.certificates))
    )
    signers = _children(data, parts.signer_infos)
    fields = _children(data, _expect(signers[0], _SEQUENCE, "the SignerInfo"))
    if len(fields) < 5:
        raise _Malformed("the SignerInfo lacks required fields")
    digest_oid = _algorithm(data, fields[2], "the SignerInfo's digest algorithm")[0]
    if fields[3].tag != _CONTEXT_0:
        raise _Malformed("the SignerInfo has no signed attributes")
    signed = fields[3]
    attributes: dict[str, _Tlv] = {}
    for attribute in _children(data, signed):
        pair = _children(data, _expect(attribute, _SEQUENCE, "a signed attribute"))
        if len(pair) != 2:
            raise _Malformed("a signed attribute is not a type and values")
        kind = _oid(data, pair[0], "a signed attribute's type")
        if kind in attributes:
            raise _Malformed("a signed attribute is given twice")
        attributes[kind] = pair[1]
    content_type = message_digest = None
    if _CONTENT_TYPE_OID in attributes:
        value = _single_value(data, attributes[_CONTENT_TYPE_OID], "the contentType")
        content_type = _oid(data, value, "the contentType")
    if _MESSAGE_DIGEST_OID in attributes:
        value = _single_value(data, attributes[_MESSAGE_DIGEST_OID], "the messageDigest")
        message_digest = _content(data, _expect(value, _OCTET_STRING, "the messageDigest"))
    ess: list[tuple[EssCertId, ...] | None] = []
    for oid, v2 in ((_SIGNING_CERTIFICATE_OID, False), (_SIGNING_CERTIFICATE_V2_OID, True)):
        values = attributes.get(oid)
        what = "the signingCertificateV2" if v2 else "the signingCertificate"
        ess.append(
            None if values is None else _ess_cert_ids(data, _single_value(data, values, what), v2)
        )
    signature_oid, parameters = _algorithm(data, fields[4], "the signature algorithm")
    if len(fields) < 6:
        raise _Malformed("the SignerInfo holds no signature")
    signature = _content(data, _expect(fields[5], _OCTET_STRING, "the signature"))
    pss = _pss(data, parameters) if signature_oid == RSASSA_PSS_OID else None
    return TokenSignature(
        certificates=certificates,
        content=data[parts.tst_info.head : parts.tst_info.end],
        signers=len(signers),
        digest_oid=digest_oid,
        content_type=content_type,
        message_digest=message_digest,
        signed_attributes=bytes((_SET,)) + data[signed.head + 1 : signed.end],
        signature_oid=signature_oid,
        signature=signature,
        pss=pss,
        ess_v1=ess[0],
        ess_v2=ess[1],
    )


def read_token_signature(data: bytes) -> TokenSignature | DerProblem | None:
    """The parts of a granted response's signature; any bytes give an answer, never an exception.

    Returns:
        The signer's parts, None for a response that is not granted (it has
        no token to rely on), or a :class:`DerProblem` naming the first thing
        that is not of RFC 3161's and RFC 5652's shape.
    """
    if len(data) > MAX_TOKEN_BYTES:
        return DerProblem(f"over {MAX_TOKEN_BYTES} bytes", too_large=True)
    data = bytes(data)
    try:
        token = _granted_token(data)
        return None if token is None else _signature(data, token)
    except _Malformed as exc:
        return DerProblem(str(exc))
