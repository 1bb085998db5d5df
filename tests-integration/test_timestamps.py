"""Stamping through the installed wheels: a real TSA (OpenSSL's) on loopback, a fake provider.

The launcher injects the OpenAlex transport; the TSA is still reached over
real HTTP. Search, stop (the shutdown stamps), restart, search, stop again:
``openssl ts -verify`` accepts every stored token for its checkpoint, the
collection audits clean, and a copy of the folder carries the tokens.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import REPO_ROOT, audit_json, session

sys.path.insert(0, str(REPO_ROOT / "tests-support"))
from tsa_authority import Authorities, create_authorities
from tsa_http import LoopbackTSA

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def tsa(tmp_path_factory: pytest.TempPathFactory) -> Authorities:
    return create_authorities(tmp_path_factory.mktemp("tsa"))


@pytest.fixture
def loopback_tsa(tsa: Authorities) -> Iterator[LoopbackTSA]:
    with LoopbackTSA(tsa) as served:
        yield served


def _leaf(line: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + line).digest()


def _root(leaves: list[bytes]) -> bytes:
    """RFC 6962's Merkle tree hash, written out here: the test does not trust the package's."""
    if len(leaves) == 1:
        return leaves[0]
    split = 1
    while split * 2 < len(leaves):
        split *= 2
    return hashlib.sha256(b"\x01" + _root(leaves[:split]) + _root(leaves[split:])).digest()


def _openssl_verifies(root: Path, size: int, ca_pem: Path, scratch: Path) -> bool:
    lines = (root / ".notanda" / "log.jsonl").read_bytes().splitlines()[:size]
    checkpoint = scratch / f"checkpoint-{size}"
    text = f"notanda log head v1 {size} {_root([_leaf(line) for line in lines]).hex()}\n"
    checkpoint.write_bytes(text.encode())
    token = root / ".notanda" / "timestamps" / f"{size}.tsr"
    done = subprocess.run(
        ["openssl", "ts", "-verify", "-data", str(checkpoint), "-in", str(token),
         "-CAfile", str(ca_pem)],
        capture_output=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    return done.returncode == 0


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
        assert _openssl_verifies(root, size, tsa.ca_pem, tmp_path), size
        assert not _openssl_verifies(root, size, tsa.untrusted_ca_pem, tmp_path), size
    assert len(loopback_tsa.received) == 2
    code, report = audit_json(root)
    assert code == 0, report
    # A plain copy carries the tokens, and they still verify there.
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    assert _openssl_verifies(copy, 3, tsa.ca_pem, tmp_path)
