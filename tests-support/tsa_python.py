"""A second RFC 3161 TSA implementation for the tests: asn1crypto encodes, cryptography signs.

Not OpenSSL: the answer is built field by field as RFC 3161, RFC 5652 and
RFC 5035 say, the way TSAs written on other stacks build it. Its signer
(an RSA key, PKCS #1 v1.5 with SHA-256, or an EC key, ECDSA) is bound by an ``ESSCertIDv2``
(SHA-256, with ``issuerSerial``) in ``signingCertificateV2``, the token
carries the certificates it is given and names the TSA (``tsa``). A
request it cannot read, or one that is not for a SHA-256 imprint, gets
the status ``rejection``, as from a real TSA.

Needs asn1crypto and cryptography (notanda-mcp's and the integration
tests' environments; notanda-evidence's tests, standard library only, never
import it). ``tsa_authority.TimeStampAuthority.reply_to_request`` calls it
for the ``python`` shapes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

from asn1crypto import algos, cms, core, pem, tsp, x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

__all__ = ["python_reply"]


def _certificate(path: Path) -> x509.Certificate:
    _, _, der = pem.unarmor(path.read_bytes())
    return x509.Certificate.load(der)


def _rejection(text: str) -> bytes:
    return tsp.TimeStampResp(
        {"status": {"status": "rejection", "status_string": [text], "fail_info": {"bad_request"}}}
    ).dump()


def python_reply(
    request: bytes,
    *,
    signer_pem: Path,
    key_pem: Path,
    carried: list[Path],
    serial: int,
    policy: str,
    ess_certificate: Path | None = None,
) -> bytes:
    """Answer the DER ``TimeStampReq`` *request*: a granted ``TimeStampResp``, or a rejection.

    *ess_certificate* is the certificate the ``ESSCertIDv2`` names: the
    signer's unless a test asks for a properly signed answer that binds
    another one.
    """
    try:
        query = tsp.TimeStampReq.load(request, strict=True)
        imprint = query["message_imprint"]
        algorithm = imprint["hash_algorithm"]["algorithm"].native
        digest = imprint["hashed_message"].native
        nonce = query["nonce"].native
        cert_req = bool(query["cert_req"].native)
    except (ValueError, TypeError, KeyError):
        return _rejection("the request cannot be read")
    if algorithm != "sha256" or len(digest) != 32:
        return _rejection("only SHA-256 imprints are stamped")
    signer = _certificate(signer_pem)
    key = serialization.load_pem_private_key(key_pem.read_bytes(), password=None)
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise ValueError("the python TSA signs with an RSA or an EC key")
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    info: dict[str, object] = {
        "version": "v1",
        "policy": policy,
        "message_imprint": {"hash_algorithm": {"algorithm": "sha256"}, "hashed_message": digest},
        "serial_number": serial,
        "gen_time": now,
        "accuracy": {"seconds": 1},
        "tsa": x509.GeneralName(name="directory_name", value=signer.subject),
    }
    if nonce is not None:
        info["nonce"] = nonce
    tst_info = tsp.TSTInfo(info)
    content = tst_info.dump()
    named = signer if ess_certificate is None else _certificate(ess_certificate)
    issuer_serial = {
        "issuer": [x509.GeneralName(name="directory_name", value=named.issuer)],
        "serial_number": named.serial_number,
    }
    attributes = cms.CMSAttributes(
        [
            cms.CMSAttribute({"type": "content_type", "values": ["tst_info"]}),
            cms.CMSAttribute({"type": "signing_time", "values": [cms.Time({"utc_time": now})]}),
            cms.CMSAttribute(
                {"type": "message_digest", "values": [hashlib.sha256(content).digest()]}
            ),
            cms.CMSAttribute(
                {
                    "type": "signing_certificate_v2",
                    "values": [
                        {
                            "certs": [
                                {
                                    "cert_hash": hashlib.sha256(named.dump()).digest(),
                                    "issuer_serial": issuer_serial,
                                }
                            ]
                        }
                    ],
                }
            ),
        ]
    )
    # The signature is over the signed attributes' DER as a SET OF (asn1crypto sorts it).
    if isinstance(key, rsa.RSAPrivateKey):
        algorithm_name = "rsassa_pkcs1v15"
        signature = key.sign(attributes.dump(), padding.PKCS1v15(), hashes.SHA256())
    else:
        algorithm_name = "sha256_ecdsa"
        signature = key.sign(attributes.dump(), ec.ECDSA(hashes.SHA256()))
    signer_info = cms.SignerInfo(
        {
            "version": "v1",
            "sid": cms.SignerIdentifier(
                name="issuer_and_serial_number",
                value={"issuer": signer.issuer, "serial_number": signer.serial_number},
            ),
            "digest_algorithm": algos.DigestAlgorithm({"algorithm": "sha256"}),
            "signed_attrs": attributes,
            "signature_algorithm": algos.SignedDigestAlgorithm({"algorithm": algorithm_name}),
            "signature": signature,
        }
    )
    signed: dict[str, object] = {
        "version": "v3",
        "digest_algorithms": [algos.DigestAlgorithm({"algorithm": "sha256"})],
        "encap_content_info": {
            "content_type": "tst_info",
            "content": core.ParsableOctetString(content),
        },
        "signer_infos": [signer_info],
    }
    if cert_req:
        signed["certificates"] = [_certificate(path) for path in carried]
    token = cms.ContentInfo({"content_type": "signed_data", "content": cms.SignedData(signed)})
    return tsp.TimeStampResp({"status": {"status": "granted"}, "time_stamp_token": token}).dump()
