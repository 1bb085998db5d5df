"""What the tests check a stored token with: the checkpoint recomputed from the log, and openssl.

Independent of the packages on purpose: the log head is recomputed here from
``.notanda/log.jsonl`` with RFC 6962's Merkle tree hash, and the token is
checked by ``openssl ts -verify``, so that a test never takes the code under
test's word for what it stamped.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

__all__ = ["checkpoint_at", "openssl_verifies", "token_path"]


def _tree_hash(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    split = 1
    while split * 2 < len(leaves):
        split *= 2
    left, right = _tree_hash(leaves[:split]), _tree_hash(leaves[split:])
    return hashlib.sha256(b"\x01" + left + right).digest()


def checkpoint_at(root: Path, size: int) -> bytes:
    """The checkpoint text of the head of the first *size* entries of *root*'s log."""
    lines = (root / ".notanda" / "log.jsonl").read_bytes().splitlines()
    if not 0 < size <= len(lines):
        raise ValueError(f"the log has {len(lines)} entries, not {size}")
    leaves = [hashlib.sha256(b"\x00" + line).digest() for line in lines[:size]]
    return f"notanda log head v1 {size} {_tree_hash(leaves).hex()}\n".encode()


def token_path(root: Path, size: int) -> Path:
    """Where the token for *size* is stored in *root*."""
    return root / ".notanda" / "timestamps" / f"{size}.tsr"


def openssl_verifies(root: Path, size: int, ca_pem: Path, scratch: Path) -> bool:
    """Whether ``openssl ts -verify`` accepts *root*'s token for *size* under *ca_pem*."""
    data = scratch / f"checkpoint-{size}"
    data.write_bytes(checkpoint_at(root, size))
    done = subprocess.run(
        ["openssl", "ts", "-verify", "-data", str(data), "-in", str(token_path(root, size)),
         "-CAfile", str(ca_pem)],
        capture_output=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    return done.returncode == 0
