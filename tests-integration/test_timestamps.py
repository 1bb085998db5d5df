"""Stamping through the installed wheels: a real TSA (OpenSSL's) on loopback, a fake provider.

The launcher injects the OpenAlex transport; the TSA is still reached over
real HTTP. Search, stop (the shutdown stamps), restart, search, stop again:
``openssl ts -verify`` accepts every stored token for its checkpoint, the
collection audits clean (``audit --tsa-ca`` with the TSA's CA, and not with
another), and a copy of the folder carries the tokens. Then every answer
shape real TSAs send (``tsa_authority.SHAPES``: two implementations, direct
and intermediate chains, with and without the root, every certificate
order) through the installed server with ``--tsa-ca``, and a TSA outside it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from harness import audit_json, session
from tsa_authority import SHAPES, Authorities, Shape
from tsa_checks import openssl_verifies, token_path
from tsa_http import LoopbackTSA

pytestmark = pytest.mark.timeout(180)


def test_search_stamp_restart_stamp_again_through_the_installed_server(
    root: Path, loopback_tsa: LoopbackTSA, tsa: Authorities, tmp_path: Path
) -> None:
    options = ("--timestamp-url", loopback_tsa.url, "--log-level", "info")
    for run in range(2):
        with session(root, *options) as raw:
            for n in range(run + 1):
                content, is_error = raw.search(f"stamped search {run}.{n}")
                assert is_error is False, content
        assert b"stamped by the time-stamp authority" in raw.stderr
    tokens = sorted(p.name for p in (root / ".notanda" / "timestamps").iterdir())
    assert tokens == ["1.tsr", "3.tsr"]
    for size in (1, 3):
        assert openssl_verifies(root, size, tsa.ca_pem, tmp_path), size
        assert not openssl_verifies(root, size, tsa.untrusted_ca_pem, tmp_path), size
    assert len(loopback_tsa.received) == 2
    code, report = audit_json(root)
    assert code == 0, report
    # The auditor's own check of the server's tokens: trusted under their CA only.
    code, report = audit_json(root, "--tsa-ca", str(tsa.ca_pem))
    assert code == 0, report
    code, report = audit_json(root, "--tsa-ca", str(tsa.untrusted_ca_pem))
    assert code == 1, report
    # A plain copy carries the tokens, and they still verify there.
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    assert openssl_verifies(copy, 3, tsa.ca_pem, tmp_path)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: shape.id)
def test_every_answer_shape_is_stamped_stored_as_sent_and_audits_under_its_root(
    root: Path, loopback_tsa: LoopbackTSA, tsa: Authorities, tmp_path: Path, shape: Shape
) -> None:
    # The server checks the chain at stamp time too (--tsa-ca): it must lead to the root.
    loopback_tsa.shape = shape
    options = ("--timestamp-url", loopback_tsa.url, "--tsa-ca", str(tsa.ca_pem))
    with session(root, *options, "--log-level", "info") as raw:
        content, is_error = raw.search(f"stamped in shape {shape.id}")
        assert is_error is False, content
    assert b"log head 1 stamped by the time-stamp authority" in raw.stderr, raw.stderr[-2000:]
    [answered] = loopback_tsa.answered
    assert token_path(root, 1).read_bytes() == answered  # the TSA's own bytes, its order
    assert openssl_verifies(root, 1, tsa.ca_pem, tmp_path)
    code, report = audit_json(root, "--tsa-ca", str(tsa.ca_pem))
    assert code == 0, report
    [token] = report["timestamps"]["tokens"]
    assert token["signature"] == "verified"


def test_a_tsa_outside_tsa_ca_is_refused_at_stamp_time_through_the_installed_server(
    root: Path, loopback_tsa: LoopbackTSA, tsa: Authorities
) -> None:
    loopback_tsa.mode = "untrusted"
    options = ("--timestamp-url", loopback_tsa.url, "--tsa-ca", str(tsa.ca_pem))
    with session(root, *options) as raw:
        content, is_error = raw.search("a search the wrong TSA cannot stamp")
        assert is_error is False, content
    assert b"log head 1 not stamped: tsa_untrusted (" in raw.stderr
    assert not token_path(root, 1).exists()
