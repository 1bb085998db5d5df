"""A real RFC 3161 time-stamp authority for the tests: OpenSSL's own, offline.

``create_authorities(directory)`` makes, with the ``openssl`` program (3.0 or
newer), two independent throwaway authorities in *directory*: ``trusted`` (the
one tests hand to ``audit --tsa-ca``) and ``untrusted`` (same shape, another
CA, for the failure tests). Each has a self-signed CA and a TSA certificate
with the critical ``timeStamping`` extended key usage that the CA issued.

``TimeStampAuthority.stamp(digest, nonce=..., cert_req=...)`` returns a DER
``TimeStampResp`` over a SHA-256 *digest*; ``reply_to_request(der)`` answers a
DER ``TimeStampReq`` as an HTTP TSA does (``application/timestamp-query`` in,
``application/timestamp-reply`` out). Both run ``openssl ts -reply``; the
requests ``stamp`` makes come from openssl too (``openssl asn1parse
-genconf``, because ``openssl ts -query`` can only pick a random nonce).

This is a plain module, not a package: each conftest that needs it puts the
``tests-support`` folder on ``sys.path``. No HTTP server lives here.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DEFAULT_POLICY",
    "Authorities",
    "TimeStampAuthority",
    "create_authorities",
    "create_authority",
    "openssl_program",
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


#: The CA's longer name makes its certificate longer than the TSA's, so that
#: ``openssl ts -reply``, which writes the signer first and then the chain (a
#: SEQUENCE, where CMS wants a DER-sorted SET OF), happens to write the two in
#: DER order: rfc3161-client, which the server checks answers with, refuses a
#: certificate set out of order (``tsa_unparsable``), as it would from any TSA.
_CA_UNIT = "Throwaway certification authority for the offline tests only"

_CA_EXTENSIONS = """\
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
"""

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

[notanda_test_tsa]
serial = {serial}
crypto_device = builtin
signer_cert = {cert}
certs = {ca}
signer_key = {key}
signer_digest = sha256
default_policy = {policy}
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
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

    def reply_to_request(self, der_request: bytes) -> bytes:
        """What an HTTP TSA answers to a DER ``TimeStampReq``: a DER ``TimeStampResp``.

        A request openssl will not grant (garbage, an unsupported digest) gets a
        response with the status ``rejection`` (2), as from a real TSA.

        Raises:
            RuntimeError: openssl itself failed.
        """
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

    def reply_to_request(self, der_request: bytes) -> bytes:
        """``trusted.reply_to_request``."""
        return self.trusted.reply_to_request(der_request)


def create_authority(directory: Path, name: str) -> TimeStampAuthority:
    """One more authority whose CA and TSA certificate are named after *name* (any text)."""
    return _authority(directory, name, openssl_program())


def _certificate(
    openssl: str, directory: Path, stem: str, subject: str, issuer: str | None
) -> Path:
    """Make ``<stem>.key`` and ``<stem>.pem`` (extensions from ``<stem>.ext``), issued by *issuer*.

    *issuer* is the stem of the issuing CA in the same folder, or None for a
    self-signed certificate; the serial number is 1 self-signed, 2 otherwise.
    """
    key, csr, pem = (directory / f"{stem}.{suffix}" for suffix in ("key", "csr", "pem"))
    _run(openssl, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-out", key)  # fmt: skip
    _run(openssl, "req", "-new", "-utf8", "-key", key, "-subj", subject, "-out", csr)
    signer: list[str | Path] = (
        ["-signkey", key]
        if issuer is None
        else ["-CA", directory / f"{issuer}.pem", "-CAkey", directory / f"{issuer}.key"]
    )
    _run(openssl, "x509", "-req", "-in", csr, *signer, "-days", "3650",
         "-set_serial", "1" if issuer is None else "2", "-extfile", directory / f"{stem}.ext",
         "-extensions", stem, "-out", pem)  # fmt: skip
    return pem


def _authority(directory: Path, name: str, openssl: str) -> TimeStampAuthority:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ca.ext").write_text(_CA_EXTENSIONS, encoding="ascii")
    (directory / "tsa.ext").write_text(_TSA_EXTENSIONS, encoding="ascii")
    ca_subject = f"/O=Notanda tests/OU={_CA_UNIT}/CN={name} CA"
    ca_pem = _certificate(openssl, directory, "ca", ca_subject, None)
    cert_pem = _certificate(openssl, directory, "tsa", f"/O=Notanda tests/CN={name}", "ca")
    key_pem = directory / "tsa.key"
    serial = directory / "serial"
    serial.write_text("01\n", encoding="ascii")
    config = directory / "tsa.cnf"
    config.write_text(
        _TSA_CONFIG.format(
            serial=serial, cert=cert_pem, ca=ca_pem, key=key_pem, policy=DEFAULT_POLICY
        ),
        encoding="utf-8",
    )
    return TimeStampAuthority(name, directory, ca_pem, cert_pem, key_pem, config, openssl)


def create_authorities(directory: Path) -> Authorities:
    """Make the trusted and the untrusted test TSA in *directory* (a fresh or empty folder)."""
    openssl = openssl_program()
    return Authorities(
        trusted=_authority(directory / "trusted", "Notanda Test TSA", openssl),
        untrusted=_authority(directory / "untrusted", "Notanda Untrusted TSA", openssl),
    )
