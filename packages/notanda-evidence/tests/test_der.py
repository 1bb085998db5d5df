"""The DER reader of RFC 3161 time-stamp responses (``_der``), on real tokens of every shape."""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notanda_evidence import (
    DerProblem,
    TimeStampResponse,
    TokenSignature,
    der_ordered_response,
    read_time_stamp_response,
    read_token_signature,
)
from tsa_authority import (
    DEFAULT_POLICY,
    SHAPES,
    Authorities,
    Shape,
    carried_certificates,
    certificate_set,
    with_certificate_order,
)


def test_the_reader_gives_what_the_token_states(real_token: bytes, tsa: Authorities) -> None:
    answer = read_time_stamp_response(real_token)
    assert isinstance(answer, TimeStampResponse)
    assert answer.status == 0
    assert answer.info is not None
    assert answer.info.digest == bytes(range(32))
    assert answer.info.hash_oid == "2.16.840.1.101.3.4.2.1"
    assert answer.info.nonce == 2**63 + 5
    assert answer.info.policy == DEFAULT_POLICY
    assert answer.info.tsa_name == "CN=Notanda Test TSA,O=Notanda tests"
    assert answer.info.certificates == 2  # the TSA's and its CA's: certReq was set
    refused = read_time_stamp_response(tsa.reply_to_request(b"\x30\x00"))
    assert isinstance(refused, TimeStampResponse)
    assert (refused.status, refused.info) == (2, None)
    assert refused.status_text is not None
    too_large = read_time_stamp_response(real_token + b"\x00" * (64 * 1024))
    assert isinstance(too_large, DerProblem)
    assert too_large.too_large


# ------------------------------------------- certificate sets in any order

DIGEST = bytes(range(32))
THREE = [s for s in SHAPES if s.implementation == "openssl" and len(s.order) == 3]


def _outside_the_set(answer: bytes) -> tuple[bytes, bytes]:
    """The bytes before and after the certificates' content (the test TSA's own DER walk)."""
    start, end = certificate_set(answer)
    return answer[:start], answer[end:]


def _openssl_accepts(answer: bytes, tmp_path: Path, ca_pem: Path) -> bool:
    path = tmp_path / "answer.tsr"
    path.write_bytes(answer)
    done = subprocess.run(
        ["openssl", "ts", "-verify", "-digest", DIGEST.hex(), "-in", str(path),
         "-CAfile", str(ca_pem)],
        capture_output=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    return done.returncode == 0


@pytest.mark.parametrize("shape", THREE, ids=lambda shape: shape.id)
def test_every_order_of_three_certificates_is_put_in_der_order_and_nothing_else_moves(
    tsa: Authorities, tmp_path: Path, shape: Shape
) -> None:
    answer = tsa.reply_to_request(tsa.trusted.query(DIGEST, nonce=9), shape)
    carried = carried_certificates(answer)
    assert len(carried) == 3
    ordered = der_ordered_response(answer)
    assert isinstance(ordered, bytes)
    assert len(ordered) == len(answer)
    assert carried_certificates(ordered) == sorted(carried)
    assert _outside_the_set(ordered) == _outside_the_set(answer)
    assert der_ordered_response(ordered) == ordered  # already in DER order: unchanged
    if carried != sorted(carried):
        assert ordered != answer
    # Both read alike, and openssl accepts the TSA's bytes and the re-ordered ones.
    assert read_time_stamp_response(ordered) == read_time_stamp_response(answer)
    assert _openssl_accepts(answer, tmp_path, tsa.ca_pem)
    assert _openssl_accepts(ordered, tmp_path, tsa.ca_pem)


@settings(
    derandomize=True,
    database=None,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_re_encoding_never_changes_the_signed_bytes(tsa: Authorities, data: st.DataObject) -> None:
    answer = _three_certificates(tsa)
    carried = carried_certificates(answer)
    shuffled = with_certificate_order(answer, data.draw(st.permutations(carried)))
    ordered = der_ordered_response(shuffled)
    assert isinstance(ordered, bytes)
    # Only the unsigned set moved: every other byte, the signed content and
    # signed attributes among them, is where the TSA put it.
    assert _outside_the_set(ordered) == _outside_the_set(shuffled) == _outside_the_set(answer)
    assert ordered == der_ordered_response(answer)
    signature = read_token_signature(shuffled)
    assert isinstance(signature, TokenSignature)
    assert read_token_signature(ordered) == replace(signature, certificates=tuple(sorted(carried)))


@settings(
    derandomize=True,
    database=None,
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_re_encoding_any_bytes_is_total_and_only_moves_bytes(
    tsa: Authorities, data: st.DataObject
) -> None:
    answer = bytearray(_three_certificates(tsa))
    for _ in range(data.draw(st.integers(0, 4))):
        answer[data.draw(st.integers(0, len(answer) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(answer)))
    mutated = bytes(answer[:cut]) if data.draw(st.booleans()) else bytes(answer)
    ordered = der_ordered_response(mutated)
    signature = read_token_signature(mutated)
    assert isinstance(signature, TokenSignature | DerProblem | type(None))
    if isinstance(ordered, bytes):
        assert len(ordered) == len(mutated)
        assert sorted(ordered) == sorted(mutated)
    else:
        assert isinstance(ordered, DerProblem)


_CACHE: dict[str, bytes] = {}


def _three_certificates(tsa: Authorities) -> bytes:
    """One answer with the signer, the intermediate and the root (OpenSSL's order)."""
    if "answer" not in _CACHE:
        shape = Shape("openssl", "intermediate", True, (0, 1, 2))
        _CACHE["answer"] = tsa.reply_to_request(tsa.trusted.query(DIGEST, nonce=9), shape)
    return _CACHE["answer"]


def test_the_signer_parts_are_read_as_the_token_holds_them(
    real_token: bytes, tsa: Authorities
) -> None:
    signature = read_token_signature(real_token)
    assert isinstance(signature, TokenSignature)
    assert signature.signers == 1
    assert signature.content_type == "1.2.840.113549.1.9.16.1.4"
    assert signature.message_digest == hashlib.sha256(signature.content).digest()
    assert signature.signed_attributes[0] == 0x31  # signed as a SET OF, sent as [0]
    assert signature.signed_attributes[1:] in real_token
    assert signature.ess_v1 is None
    assert signature.ess_v2 is not None
    [signer_id] = signature.ess_v2  # OpenSSL's default: the signer alone, SHA-256
    assert signer_id.hash_oid == "2.16.840.1.101.3.4.2.1"
    assert signer_id.cert_hash == hashlib.sha256(carried_certificates(real_token)[0]).digest()
    assert read_token_signature(tsa.reply_to_request(b"\x30\x00")) is None  # a refusal
    assert isinstance(read_token_signature(b"<html>"), DerProblem)
    sha1 = read_token_signature(
        tsa.reply_to_request(tsa.trusted.query(DIGEST), Shape("openssl", "direct", False, (0,)))
    )
    assert isinstance(sha1, TokenSignature)
    assert sha1.ess_v2 is None
    assert sha1.ess_v1 is not None
    assert sha1.ess_v1[0].hash_oid == "1.3.14.3.2.26"
