"""A collection of sealed, logged records with time-stamp tokens on chosen heads.

Shared by the timestamp audit tests and ``stdlib_check.py`` (which runs it
against the installed wheel alone); the tokens come from the test TSA in
``tests-support/tsa_authority.py``.
"""

from __future__ import annotations

from pathlib import Path

from notanda_evidence import EvidenceLog, EvidenceStore
from notanda_evidence._timestamps import TIMESTAMPS_DIR, checkpoint_digest, token_name
from tsa_authority import Authorities


def seal_and_log(root: Path, log: EvidenceLog) -> None:
    """Write one small sealed record into *root* and append it to *log*."""
    writer = EvidenceStore(root).create()
    writer.write_request({"evidence_id": writer.evidence_id})
    writer.write_provider({})
    writer.write_response({"evidence_id": writer.evidence_id, "status": "ok", "results": []})
    seal = writer.seal()
    log.append(seal.evidence_id, seal.receipt)


def stamped_collection(root: Path, tsa: Authorities, stamp_at: tuple[int, ...], total: int) -> Path:
    """A new root of *total* logged records, with a token for the head at each size in *stamp_at*.

    Each token's nonce is 1000 plus its size.
    """
    root.mkdir()
    log = EvidenceLog(root)
    folder = root / TIMESTAMPS_DIR
    for size in range(1, total + 1):
        seal_and_log(root, log)
        if size in stamp_at:
            head = log.head()
            folder.mkdir(parents=True, exist_ok=True)
            token = tsa.stamp(checkpoint_digest(head.size, head.root), nonce=1000 + size)
            (folder / token_name(size)).write_bytes(token)
    return root
