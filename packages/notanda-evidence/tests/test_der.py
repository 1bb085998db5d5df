"""The DER reader of RFC 3161 time-stamp responses (``_der``), on a real token."""

from __future__ import annotations

from notanda_evidence._der import DerProblem, TimeStampResponse, read_time_stamp_response
from tsa_authority import DEFAULT_POLICY, Authorities


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
