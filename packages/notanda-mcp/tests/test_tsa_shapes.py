"""The answers real TSAs send: every certificate order, chains, roots, two implementations.

Each :data:`tsa_authority.SHAPES` answer (OpenSSL's ``ts -reply``, or the
asn1crypto-and-cryptography TSA of ``tsa_python.py``; a direct chain or one
through an intermediate CA; with or without the root; the certificates in
every order) is checked as the server checks it, stamped over loopback HTTP
and stored as the TSA's own bytes, which ``openssl ts -verify`` accepts
under the root CA. The signed part is never relaxed: a broken signature, a
signer the ESS attribute does not name, a token without certificates and a
chain outside ``--tsa-ca`` are each refused with their code.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from conftest import clean_env, make_server, open_session, search
from cryptography import x509
from notanda_evidence import TokenSignature, read_token_signature
from notanda_mcp import NotandaServer
from notanda_mcp._stamper import (
    StampCode,
    StampFailure,
    check_answer,
    describe,
    load_tsa_ca,
)
from rfc3161_client import HashAlgorithm, TimestampRequestBuilder
from tsa_authority import (
    DEFAULT_POLICY,
    SHAPES,
    Authorities,
    Shape,
    carried_certificates,
    with_certificate_order,
)
from tsa_checks import openssl_verifies, token_path
from tsa_http import LoopbackTSA
from tsa_python import python_reply

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

CHECKPOINT = b"notanda log head v1 0 " + b"0" * 64 + b"\n"


def _request() -> tuple[bytes, int]:
    request = (
        TimestampRequestBuilder()
        .data(CHECKPOINT)
        .hash_algorithm(HashAlgorithm.SHA256)
        .nonce(nonce=True)
        .cert_request(cert_request=True)
        .build()
    )
    assert request.nonce is not None
    return request.as_bytes(), request.nonce


def _refusal(body: bytes, nonce: int, trusted: list[x509.Certificate] | None = None) -> str:
    with pytest.raises(StampFailure) as raised:
        check_answer(body, nonce, CHECKPOINT, trusted)
    return describe(raised.value)


@pytest.fixture(scope="module")
def trust(tsa: Authorities) -> tuple[list[x509.Certificate], list[x509.Certificate]]:
    """The trusted root as ``--tsa-ca`` loads it, and the other authority's."""
    return load_tsa_ca(tsa.ca_pem), load_tsa_ca(tsa.untrusted_ca_pem)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: shape.id)
def test_every_shape_is_accepted_and_trusted_only_under_its_root(
    tsa: Authorities, shape: Shape, trust: tuple[list[x509.Certificate], ...]
) -> None:
    query, nonce = _request()
    answer = tsa.reply_to_request(query, shape)
    carried = carried_certificates(answer)
    assert len(carried) == len(shape.order)
    trusted, untrusted = trust
    check_answer(answer, nonce, CHECKPOINT)
    check_answer(answer, nonce, CHECKPOINT, trusted)
    assert _refusal(answer, nonce, untrusted) == (
        "tsa_untrusted (its chain does not lead to a CA in --tsa-ca)"
    )


def test_every_permutation_of_three_certificates_is_stored_as_the_tsa_sent_it(
    tsa: Authorities, tmp_path: Path
) -> None:
    query, nonce = _request()
    answer = tsa.reply_to_request(query, Shape("openssl", "intermediate", True, (0, 1, 2)))
    carried = carried_certificates(answer)
    seen = set()
    for order in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        permuted = with_certificate_order(answer, [carried[i] for i in order])
        seen.add(permuted)
        check_answer(permuted, nonce, CHECKPOINT)
    assert len(seen) == 6


def _shape_id(shape: Shape) -> str:
    return shape.id


@pytest.fixture
def served(tsa: Authorities) -> Iterator[LoopbackTSA]:
    with LoopbackTSA(tsa) as loopback:
        yield loopback


async def _one_search(server: NotandaServer) -> None:
    async with open_session(server, "legacy") as client:
        await search(client, query="stamped in every shape")


@pytest.mark.parametrize("shape", SHAPES, ids=_shape_id)
async def test_every_shape_is_stamped_over_http_and_stored_byte_for_byte(
    evidence_root: Path, served: LoopbackTSA, tsa: Authorities, tmp_path: Path, shape: Shape
) -> None:
    served.shape = shape
    server = make_server(
        evidence_root, timestamp_url=served.url, timestamp_every=300, tsa_ca=tsa.ca_pem
    )
    await _one_search(server)
    assert server.stamper is not None
    assert server.stamper.stamp_once() is True
    [answered] = served.answered
    assert token_path(evidence_root, 1).read_bytes() == answered  # the TSA's own bytes
    assert openssl_verifies(evidence_root, 1, tsa.ca_pem, tmp_path)


async def test_an_answer_outside_tsa_ca_is_refused_at_stamp_time(
    evidence_root: Path, served: LoopbackTSA, tsa: Authorities, caplog: pytest.LogCaptureFixture
) -> None:
    served.mode = "untrusted"
    server = make_server(
        evidence_root, timestamp_url=served.url, timestamp_every=300, tsa_ca=tsa.ca_pem
    )
    await _one_search(server)
    assert server.stamper is not None
    with caplog.at_level("WARNING", logger="notanda_mcp"):
        assert server.stamper.stamp_once() is False
    assert (
        "log head 1 not stamped: tsa_untrusted (its chain does not lead to a CA in --tsa-ca)"
        in (caplog.messages)
    )
    assert not token_path(evidence_root, 1).exists()
    served.mode = "grant"
    assert server.stamper.stamp_once() is True


# --------------------------------------------- the signed part, not relaxed


def _flip(answer: bytes, part: bytes) -> bytes:
    at = answer.index(part) + len(part) // 2
    return answer[:at] + bytes((answer[at] ^ 0x01,)) + answer[at + 1 :]


@pytest.mark.parametrize("implementation", ["openssl", "python"])
def test_a_broken_signature_or_signed_attribute_is_inconsistent(
    tsa: Authorities, implementation: str
) -> None:
    query, nonce = _request()
    answer = tsa.reply_to_request(query, Shape(implementation, "intermediate", False, (1, 0)))
    parts = read_token_signature(answer)
    assert isinstance(parts, TokenSignature)
    assert _refusal(_flip(answer, parts.signature), nonce) == (
        "tsa_signature_inconsistent (the signature does not verify with the signer's key)"
    )
    # A changed signed attribute: the ESS hash, here (the signature covers it).
    signed = parts.signed_attributes[2:]
    assert _refusal(_flip(answer, signed[-20:]), nonce).startswith("tsa_signature_inconsistent")


def test_a_signer_the_ess_attribute_does_not_name_is_inconsistent(tsa: Authorities) -> None:
    query, nonce = _request()
    cert, key, carried = tsa.trusted.chain(Shape("python", "direct", True, (0, 1)))
    answer = python_reply(
        query,
        signer_pem=cert,
        key_pem=key,
        carried=carried,
        serial=7,
        policy=DEFAULT_POLICY,
        ess_certificate=tsa.ca_pem,  # a properly signed answer naming the root, not the signer
    )
    assert _refusal(answer, nonce) == (
        "tsa_signature_inconsistent (the ESS signingCertificate names another certificate "
        "than the signer's)"
    )


def test_a_signer_without_the_time_stamping_usage_is_inconsistent(tsa: Authorities) -> None:
    query, nonce = _request()
    directory = tsa.trusted.directory
    answer = python_reply(  # properly signed and bound, by the root CA's own key
        query,
        signer_pem=tsa.ca_pem,
        key_pem=directory / "ca.key",
        carried=[tsa.ca_pem],
        serial=8,
        policy=DEFAULT_POLICY,
    )
    assert _refusal(answer, nonce) == (
        "tsa_signature_inconsistent (the signer's certificate lacks the critical "
        "timeStamping usage)"
    )


def test_a_token_without_the_tsa_certificate_is_inconsistent(tsa: Authorities) -> None:
    digest = hashlib.sha256(CHECKPOINT).digest()
    answer = tsa.stamp(digest, nonce=11, cert_req=False)
    assert _refusal(answer, 11) == (
        "tsa_signature_inconsistent (the answer carries no certificate (certReq))"
    )


def test_an_unreadable_structure_is_named_in_the_line(tsa: Authorities) -> None:
    query, nonce = _request()
    answer = tsa.reply_to_request(query)
    # The TSTInfo's content cut short: neither reader can read the token.
    assert _refusal(answer[: len(answer) // 2], nonce).startswith(
        "tsa_unparsable (not a DER TimeStampResp: "
    )


# ------------------------------------------------------- command line, doctor


def _command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "notanda_mcp", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=90,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--tsa-ca", "CA"], "notanda-mcp: --tsa-ca needs --timestamp-url"),
        (["--timestamp-url", "http://127.0.0.1:9/", "--tsa-ca", "missing.pem"],
         "notanda-mcp: --tsa-ca missing.pem: cannot be read"),
        (["--timestamp-url", "http://127.0.0.1:9/", "--tsa-ca", "EMPTY"],
         "notanda-mcp: --tsa-ca "),
    ],
    ids=["without-url", "missing", "no-pem"],
)  # fmt: skip
def test_a_bad_tsa_ca_exits_2_with_one_line_and_a_remedy(
    tmp_path: Path, args: list[str], start: str
) -> None:
    empty = tmp_path / "empty.pem"
    empty.write_text("not a certificate\n", encoding="ascii")
    args = [str(empty) if arg == "EMPTY" else arg for arg in args]
    done = subprocess.run(
        [sys.executable, "-m", "notanda_mcp", "--evidence-dir", str(tmp_path / "root"), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=90,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith(start), line
    assert ": give " in line
    assert not (tmp_path / "root" / ".notanda").exists()


def test_the_test_seam_takes_tsa_ca_only_with_a_tsa(evidence_root: Path, tsa: Authorities) -> None:
    with pytest.raises(ValueError, match="tsa_ca is given without timestamp_url"):
        make_server(evidence_root, tsa_ca=tsa.ca_pem)


@pytest.mark.parametrize("shape", [SHAPES[0], SHAPES[-1]], ids=_shape_id)
async def test_the_doctor_names_the_tsa_its_chain_and_the_checks_that_passed(
    served: LoopbackTSA, tsa: Authorities, shape: Shape
) -> None:
    served.shape = shape
    done = await anyio.to_thread.run_sync(
        _command, "doctor", "--timestamp-url", served.url, "--live", "--tsa-ca", str(tsa.ca_pem)
    )
    assert done.returncode == 0, done.stdout
    out = done.stdout
    assert "ok    the TSA names itself " in out
    [answered] = served.answered
    for number, der in enumerate(carried_certificates(answered), start=1):
        loaded = x509.load_der_x509_certificate(der)
        expires = loaded.not_valid_after_utc.date().isoformat()
        assert f"ok    certificate {number} it sent: {loaded.subject.rfc4514_string()}" in out
        assert f"expires {expires}" in out
    assert (
        "the TSA answered with a token that checks out (status granted, imprint, nonce, the "
        "signature by the signer's certificate it sent, the ESS signingCertificate binding); "
        f"its chain leads to a CA in {tsa.ca_pem}" in out
    )
    untrusted = await anyio.to_thread.run_sync(
        _command,
        "doctor",
        "--timestamp-url",
        served.url,
        "--live",
        "--tsa-ca",
        str(tsa.untrusted_ca_pem),
    )
    assert "warn  the TSA did not give a usable stamp: tsa_untrusted (" in untrusted.stdout


def test_the_new_code_is_stable_and_its_remedy_names_the_bundle() -> None:
    assert StampCode.UNTRUSTED == "tsa_untrusted"
    assert "--tsa-ca" in StampCode.UNTRUSTED.remedy
    docs = (Path(__file__).resolve().parents[3] / "docs" / "errors.md").read_text("utf-8")
    assert "| `tsa_untrusted` | " in docs
    assert StampCode.UNTRUSTED.remedy in docs
