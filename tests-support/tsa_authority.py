"""A real RFC 3161 time-stamp authority for the tests: OpenSSL's own, offline.

``create_authorities(directory)`` makes, with the ``openssl`` program (3.0 or
newer), two independent throwaway authorities in *directory*: ``trusted`` (the
one tests hand to ``audit --tsa-ca``) and ``untrusted`` (same shape, another
CA, for the failure tests). Each has a self-signed CA and a TSA certificate
with the critical ``timeStamping`` extended key usage that the CA issued.
The trusted one also has what real TSAs have: an intermediate CA under its
root, a TSA certificate that the intermediate issued, and an RSA TSA
certificate beside each EC one (for the second implementation,
``tsa_python.py``).

``TimeStampAuthority.stamp(digest, nonce=..., cert_req=...)`` returns a DER
``TimeStampResp`` over a SHA-256 *digest*; ``reply_to_request(der)`` answers a
DER ``TimeStampReq`` as an HTTP TSA does (``application/timestamp-query`` in,
``application/timestamp-reply`` out). Both run ``openssl ts -reply``; the
requests ``stamp`` makes come from openssl too (``openssl asn1parse
-genconf``, because ``openssl ts -query`` can only pick a random nonce).

A :class:`Shape` names one way a real TSA answers: which implementation
(``openssl``, or ``python``: asn1crypto and cryptography), a ``direct`` chain
or one through an ``intermediate`` CA, with or without the ``root`` in the
answer, and the ``order`` of the certificates in the answer's ``SET OF``
(OpenSSL writes the signer first and then its ``certs =`` file; other TSAs
write other orders, and no order is signed). :data:`SHAPES` lists every one;
``reply_to_request(der, shape)`` answers in it. ``with_certificate_order``
rewrites an answer's certificate set in a given order, with its own small
DER walk (never the code under test's).

This is a plain module, not a package: each conftest that needs it puts the
``tests-support`` folder on ``sys.path``. No HTTP server lives here.
"""

from __future__ import annotations

import base64
import itertools
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DEFAULT_POLICY",
    "SHAPES",
    "Authorities",
    "Shape",
    "TimeStampAuthority",
    "carried_certificates",
    "certificate_set",
    "create_authorities",
    "create_authority",
    "openssl_program",
    "with_certificate_order",
]

#: The TSA policy OID each test authority stamps under (a private arc: it means nothing).
DEFAULT_POLICY = "1.3.6.1.4.1.55555.1.1"
#: Every openssl call is bounded; a stuck one fails the test instead of hanging it.
_DEADLINE_S = 60.0


def openssl_program() -> str:
    """The ``openssl`` on PATH, or a clear error: the tests need the real program."""
    found = shutil.which("openssl")
    if found is None:
        raise RuntimeError("the test TSA needs the openssl program (3.0 or newer) on PATH")
    return found


def _run(openssl: str, *args: str | Path, stdin: bytes | None = None) -> bytes:
    completed = subprocess.run(
        [openssl, *(str(arg) for arg in args)],
        input=stdin,
        capture_output=True,
        timeout=_DEADLINE_S,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"openssl {args[0]} failed ({completed.returncode}): "
            f"{completed.stderr.decode(errors='replace')[-2000:]}"
        )
    return completed.stdout


_CA_EXTENSIONS = """\
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
"""

_INTERMEDIATE_EXTENSIONS = """\
[intermediate]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
"""


@dataclass(frozen=True)
class Shape:
    """One way a TSA answers: implementation, chain, root carried or not, certificate order.

    ``order`` permutes the certificates the answer carries, listed as
    ``[signer, intermediate (if any), root (if carried)]``: ``(0, 1, 2)`` is
    OpenSSL's own order with an intermediate and the root.
    """

    implementation: str  # "openssl" or "python"
    chain: str  # "direct" or "intermediate"
    root: bool
    order: tuple[int, ...]

    @property
    def id(self) -> str:
        """A short name for test ids: ``openssl-intermediate-root-201``."""
        root = "root" if self.root else "noroot"
        return f"{self.implementation}-{self.chain}-{root}-{''.join(map(str, self.order))}"


def _shapes() -> tuple[Shape, ...]:
    found = []
    for implementation in ("openssl", "python"):
        for chain in ("direct", "intermediate"):
            for root in (False, True):
                count = 1 + (chain == "intermediate") + root
                for order in itertools.permutations(range(count)):
                    found.append(Shape(implementation, chain, root, order))
    return tuple(found)


#: Every shape the tests reproduce: 2 implementations x (1 + 2 + 2 + 6) orders = 22.
SHAPES = _shapes()


def _tlv(data: bytes, offset: int) -> tuple[int, int, int]:
    """(tag, content start, end) of the DER element at *offset* (test inputs are well formed)."""
    tag, first = data[offset], data[offset + 1]
    offset += 2
    if first & 0x80:
        count = first & 0x7F
        length = int.from_bytes(data[offset : offset + count], "big")
        offset += count
    else:
        length = first
    return tag, offset, offset + length


def _elements(data: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    """(tag, head, content start, end) of each element between *start* and *end*."""
    found = []
    while start < end:
        tag, content, stop = _tlv(data, start)
        found.append((tag, start, content, stop))
        start = stop
    return found


def certificate_set(answer: bytes) -> tuple[int, int]:
    """Where the content of a granted answer's ``SignedData.certificates [0]`` lies."""
    _, start, end = _tlv(answer, 0)  # TimeStampResp
    token = _elements(answer, start, end)[1]  # [status, timeStampToken]
    content = _elements(answer, token[2], token[3])[1]  # ContentInfo: [type, [0] content]
    signed = _elements(answer, content[2], content[3])[0]  # SignedData
    for tag, _, first, stop in _elements(answer, signed[2], signed[3]):
        if tag == 0xA0:
            return first, stop
    raise ValueError("the answer carries no certificate")


def _carries(answer: bytes) -> bool:
    """Whether *answer* is granted (status 0) and carries certificates."""
    _, start, end = _tlv(answer, 0)
    status = _elements(answer, start, end)[0]
    if answer[status[2] : status[2] + 3] != b"\x02\x01\x00":
        return False
    try:
        certificate_set(answer)
    except ValueError:
        return False
    return True


def carried_certificates(answer: bytes) -> list[bytes]:
    """The certificates a granted answer carries, each its DER, in the answer's order."""
    start, end = certificate_set(answer)
    return [answer[head:stop] for _, head, _, stop in _elements(answer, start, end)]


def with_certificate_order(answer: bytes, certificates: list[bytes]) -> bytes:
    """*answer* with its certificate set holding *certificates* in that order (the same ones)."""
    start, end = certificate_set(answer)
    if sorted(carried_certificates(answer)) != sorted(certificates):
        raise ValueError("not the certificates the answer carries")
    return answer[:start] + b"".join(certificates) + answer[end:]


_TSA_EXTENSIONS = """\
[tsa]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
"""

_TSA_CONFIG = """\
[tsa]
default_tsa = notanda_test_tsa
"""

_TSA_SECTION = """\

[{section}]
serial = {serial}
crypto_device = builtin
signer_cert = {cert}
{certs}signer_key = {key}
signer_digest = sha256
default_policy = {policy}
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = {ess_chain}
ess_cert_id_alg = {ess_alg}
"""


@dataclass
class TimeStampAuthority:
    """One throwaway TSA: its CA, its certificate and key, and ``openssl ts`` to answer.

    Attributes:
        name: the TSA certificate's common name (also the CA's, with " CA" added).
        directory: where its files live.
        ca_pem: the CA certificate (PEM): the trust anchor for ``audit --tsa-ca``.
        cert_pem: the TSA's own certificate (PEM), issued by the CA.
        openssl: the openssl program used, found once so that tests that empty
            PATH later can still stamp.
    """

    name: str
    directory: Path
    ca_pem: Path
    cert_pem: Path
    key_pem: Path
    config: Path
    openssl: str
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: The serial numbers of the python implementation's tokens (OpenSSL keeps its own file).
    _serial: int = field(default=1 << 32, repr=False)

    def query(self, digest: bytes, *, nonce: int | None = None, cert_req: bool = True) -> bytes:
        """A DER ``TimeStampReq`` for a SHA-256 *digest*, made by openssl."""
        if len(digest) != 32:
            raise ValueError("the test TSA stamps SHA-256 digests (32 bytes)")
        lines = [
            "asn1 = SEQUENCE:request",
            "[request]",
            "version = INTEGER:1",
            "imprint = SEQUENCE:imprint",
        ]
        if nonce is not None:
            if nonce < 0:
                raise ValueError("a nonce is a non-negative integer")
            lines.append(f"nonce = INTEGER:{nonce:#x}")
        if cert_req:
            # certReq is DEFAULT FALSE: DER leaves it out when false.
            lines.append("certReq = BOOLEAN:TRUE")
        lines += [
            "[imprint]",
            "algorithm = SEQUENCE:algorithm",
            f"digest = FORMAT:HEX,OCTETSTRING:{digest.hex()}",
            "[algorithm]",
            "oid = OID:sha256",
            "parameters = NULL",
        ]
        with tempfile.TemporaryDirectory(dir=self.directory) as scratch:
            genconf = Path(scratch) / "request.cnf"
            out = Path(scratch) / "request.tsq"
            genconf.write_text("\n".join(lines) + "\n", encoding="ascii")
            _run(self.openssl, "asn1parse", "-genconf", genconf, "-out", out, "-noout")
            return out.read_bytes()

    def chain(self, shape: Shape) -> tuple[Path, Path, list[Path]]:
        """The signer's certificate and key for *shape*, and the certificates it carries."""
        rsa = "rsa-" if shape.implementation == "python" else ""
        if shape.chain == "direct":
            cert, key, carried = self.directory / f"{rsa}tsa.pem", f"{rsa}tsa.key", []
        else:
            cert = self.directory / f"{rsa}tsa-intermediate.pem"
            key, carried = f"{rsa}tsa-intermediate.key", [self.directory / "intermediate.pem"]
        if not (self.directory / key).exists():
            raise ValueError(f"the authority {self.name!r} has no {shape.chain} chain")
        return cert, self.directory / key, [cert, *carried, *([self.ca_pem] if shape.root else [])]

    def reply_to_request(self, der_request: bytes, shape: Shape | None = None) -> bytes:
        """What an HTTP TSA answers to a DER ``TimeStampReq``: a DER ``TimeStampResp``.

        Without *shape*, OpenSSL's answer with the direct chain and the root,
        signer first. A request the TSA will not grant (garbage, an
        unsupported digest) gets a response with the status ``rejection``
        (2), as from a real TSA.

        Raises:
            RuntimeError: openssl itself failed.
        """
        if shape is None:
            return self._openssl_reply(der_request, "notanda_test_tsa")
        cert, key, carried = self.chain(shape)
        if shape.implementation == "python":
            # Here, not at the top: notanda-evidence's tests have no asn1crypto.
            from tsa_python import python_reply  # noqa: PLC0415

            with self._lock:
                serial = self._next_serial()
            answer = python_reply(
                der_request,
                signer_pem=cert,
                key_pem=key,
                carried=carried,
                serial=serial,
                policy=DEFAULT_POLICY,
            )
        else:
            section = f"tsa_{shape.chain}_{'root' if shape.root else 'noroot'}"
            answer = self._openssl_reply(der_request, section)
        if not _carries(answer):
            return answer  # not granted, or no certReq: no certificates to order
        ders = [_pem_to_der(path) for path in carried]
        return with_certificate_order(answer, [ders[i] for i in shape.order])

    def _next_serial(self) -> int:
        self._serial += 1
        return self._serial

    def _openssl_reply(self, der_request: bytes, section: str) -> bytes:
        with self._lock, tempfile.TemporaryDirectory(dir=self.directory) as scratch:
            request = Path(scratch) / "request.tsq"
            response = Path(scratch) / "response.tsr"
            request.write_bytes(der_request)
            # The lock: openssl ts -reply reads and rewrites the serial file.
            _run(
                self.openssl,
                "ts",
                "-reply",
                "-config",
                self.config,
                "-section",
                section,
                "-queryfile",
                request,
                "-out",
                response,
            )
            return response.read_bytes()

    def stamp(self, digest: bytes, *, nonce: int | None = None, cert_req: bool = True) -> bytes:
        """A DER ``TimeStampResp`` granting a time-stamp over a SHA-256 *digest*."""
        return self.reply_to_request(self.query(digest, nonce=nonce, cert_req=cert_req))


@dataclass(frozen=True)
class Authorities:
    """The trusted test TSA and an independent, untrusted one."""

    trusted: TimeStampAuthority
    untrusted: TimeStampAuthority

    @property
    def ca_pem(self) -> Path:
        """The trusted authority's CA bundle (PEM), for ``--tsa-ca``."""
        return self.trusted.ca_pem

    @property
    def untrusted_ca_pem(self) -> Path:
        """A CA that issued neither TSA the tokens from ``trusted`` come from."""
        return self.untrusted.ca_pem

    def stamp(self, digest: bytes, *, nonce: int | None = None, cert_req: bool = True) -> bytes:
        """``trusted.stamp``."""
        return self.trusted.stamp(digest, nonce=nonce, cert_req=cert_req)

    def reply_to_request(self, der_request: bytes, shape: Shape | None = None) -> bytes:
        """``trusted.reply_to_request``."""
        return self.trusted.reply_to_request(der_request, shape)


def create_authority(directory: Path, name: str) -> TimeStampAuthority:
    """One more authority whose CA and TSA certificate are named after *name* (any text)."""
    return _authority(directory, name, openssl_program())


def _certificate(
    openssl: str,
    directory: Path,
    stem: str,
    subject: str,
    issuer: str | None,
    *,
    extensions: str | None = None,
    serial: int = 2,
    rsa: bool = False,
) -> Path:
    """Make ``<stem>.key`` and ``<stem>.pem`` (extensions from ``<extensions>.ext``), by *issuer*.

    *issuer* is the stem of the issuing CA in the same folder, or None for a
    self-signed certificate (serial number 1); *extensions* defaults to *stem*.
    """
    extensions = extensions or stem
    key, csr, pem = (directory / f"{stem}.{suffix}" for suffix in ("key", "csr", "pem"))
    algorithm = (
        ["RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        if rsa
        else ["EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
    )
    _run(openssl, "genpkey", "-algorithm", *algorithm, "-out", key)
    _run(openssl, "req", "-new", "-utf8", "-key", key, "-subj", subject, "-out", csr)
    signer: list[str | Path] = (
        ["-signkey", key]
        if issuer is None
        else ["-CA", directory / f"{issuer}.pem", "-CAkey", directory / f"{issuer}.key"]
    )
    _run(openssl, "x509", "-req", "-in", csr, *signer, "-days", "3650",
         "-set_serial", "1" if issuer is None else str(serial),
         "-extfile", directory / f"{extensions}.ext", "-extensions", extensions,
         "-out", pem)  # fmt: skip
    return pem


def _pem_to_der(path: Path) -> bytes:
    text = path.read_text(encoding="ascii")
    body = text.split("-----BEGIN CERTIFICATE-----", 1)[1].split("-----END CERTIFICATE-----")[0]
    return base64.b64decode("".join(body.split()))


def _authority(
    directory: Path, name: str, openssl: str, *, chains: bool = False
) -> TimeStampAuthority:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ca.ext").write_text(_CA_EXTENSIONS, encoding="ascii")
    (directory / "tsa.ext").write_text(_TSA_EXTENSIONS, encoding="ascii")
    ca_pem = _certificate(openssl, directory, "ca", f"/O=Notanda tests/CN={name} CA", None)
    cert_pem = _certificate(openssl, directory, "tsa", f"/O=Notanda tests/CN={name}", "ca")
    key_pem = directory / "tsa.key"
    serial = directory / "serial"
    serial.write_text("01\n", encoding="ascii")
    # OpenSSL's answers bind the signer with ESSCertIDv2 (SHA-256) by default; the
    # direct shapes bind it with an ESSCertID (SHA-1), the intermediate ones list
    # the whole chain in their ESSCertIDv2s.
    sections = {"notanda_test_tsa": (cert_pem, key_pem, [ca_pem], "no", "sha256")}
    if chains:
        (directory / "intermediate.ext").write_text(_INTERMEDIATE_EXTENSIONS, encoding="ascii")
        _certificate(openssl, directory, "intermediate", f"/O=Notanda tests/CN={name} Issuing CA",
                     "ca", serial=3)  # fmt: skip
        made = {
            "tsa-intermediate": ("intermediate", False, 4),
            "rsa-tsa": ("ca", True, 5),
            "rsa-tsa-intermediate": ("intermediate", True, 6),
        }
        for stem, (issuer, rsa, number) in made.items():
            subject = f"/O=Notanda tests/OU={stem}/CN={name}"
            _certificate(openssl, directory, stem, subject, issuer, extensions="tsa",
                         serial=number, rsa=rsa)  # fmt: skip
        for chain, (stem, via) in {
            "direct": ("tsa", []),
            "intermediate": ("tsa-intermediate", [directory / "intermediate.pem"]),
        }.items():
            for root in (False, True):
                carried = via + ([ca_pem] if root else [])
                section = f"tsa_{chain}_{'root' if root else 'noroot'}"
                pem, key = directory / f"{stem}.pem", directory / f"{stem}.key"
                ess = ("no", "sha1") if chain == "direct" else ("yes", "sha256")
                sections[section] = (pem, key, carried, *ess)
    text = _TSA_CONFIG
    for section, (pem, key, carried, ess_chain, ess_alg) in sections.items():
        certs = ""
        if carried:
            bundle = directory / f"{section}-certs.pem"
            bundle.write_text("".join(p.read_text(encoding="ascii") for p in carried), "ascii")
            certs = f"certs = {bundle}\n"
        text += _TSA_SECTION.format(
            section=section,
            serial=serial,
            cert=pem,
            certs=certs,
            key=key,
            policy=DEFAULT_POLICY,
            ess_chain=ess_chain,
            ess_alg=ess_alg,
        )
    config = directory / "tsa.cnf"
    config.write_text(text, encoding="utf-8")
    return TimeStampAuthority(name, directory, ca_pem, cert_pem, key_pem, config, openssl)


def create_authorities(directory: Path) -> Authorities:
    """Make the trusted and the untrusted test TSA in *directory* (a fresh or empty folder)."""
    openssl = openssl_program()
    return Authorities(
        trusted=_authority(directory / "trusted", "Notanda Test TSA", openssl, chains=True),
        untrusted=_authority(directory / "untrusted", "Notanda Untrusted TSA", openssl),
    )
