"""The test TSA (tests-support/tsa_authority.py) grants real tokens that openssl accepts."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from tsa_authority import Authorities

DIGEST = hashlib.sha256(b"notanda log head v1 0 " + b"0" * 64 + b"\n").digest()


def _verify(token: bytes, tmp_path: Path, ca_pem: Path, *extra: str) -> bool:
    path = tmp_path / "token.tsr"
    path.write_bytes(token)
    completed = subprocess.run(
        ["openssl", "ts", "-verify", "-digest", DIGEST.hex(), "-in", str(path),
         "-CAfile", str(ca_pem), *extra],
        capture_output=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    return completed.returncode == 0


def test_a_token_verifies_under_its_own_ca_only(tsa: Authorities, tmp_path: Path) -> None:
    token = tsa.stamp(DIGEST, nonce=2**64 - 1)
    assert _verify(token, tmp_path, tsa.ca_pem)
    assert not _verify(token, tmp_path, tsa.untrusted_ca_pem)
    assert not _verify(tsa.untrusted.stamp(DIGEST), tmp_path, tsa.ca_pem)


def test_without_cert_req_the_token_needs_the_tsa_certificate(
    tsa: Authorities, tmp_path: Path
) -> None:
    token = tsa.stamp(DIGEST, cert_req=False)
    assert not _verify(token, tmp_path, tsa.ca_pem)
    assert _verify(token, tmp_path, tsa.ca_pem, "-untrusted", str(tsa.trusted.cert_pem))


def test_a_request_openssl_cannot_parse_is_rejected(tsa: Authorities) -> None:
    # TimeStampResp { PKIStatusInfo { status INTEGER 2 (rejection), ... } }
    assert tsa.reply_to_request(b"\x30\x03garbage")[4:7] == b"\x02\x01\x02"
    assert tsa.stamp(DIGEST)[4:9] == b"\x30\x03\x02\x01\x00"  # a long SEQUENCE: granted
