"""Export intact records, their log and its time-stamp tokens as a BagIt (RFC 8493) bag.

Every byte copied is read once, checked against the digest its record's
manifest was sealed with, and written; ``audit`` checks the bag as it checks a
root.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from . import _merkle
from ._der import MAX_TOKEN_BYTES
from ._log import Head, parse_log, read_log
from ._timestamp_audit import read_token, token_names
from ._timestamps import TIMESTAMPS_DIR, token_size
from ._version import __version__
from .verify_file import (
    MANIFEST,
    MAX_MANIFEST_BYTES,
    MAX_PAYLOAD_BYTES,
    PAYLOADS,
    Outcome,
    format_timestamp,
    read_regular_file,
    verify_record,
    verify_root,
)

__all__ = ["export_bagit"]


def _export_tokens(base: Path, out: Path) -> dict[str, bytes]:
    """Copy the root's token files into *out*; their bytes by tag-file name, sorted.

    Only names that are tokens' are copied, each read as a regular file within
    the token limit; anything else is left for ``audit`` of the root to report.
    """
    source = base / TIMESTAMPS_DIR
    names, _ = token_names(source)
    copied: dict[str, bytes] = {}
    for name in names:
        if token_size(name) is None:
            continue  # not a token: audit of the root reports it
        data = read_token(source / name)
        if isinstance(data, str) or len(data) > MAX_TOKEN_BYTES:
            continue  # a link, a FIFO, unreadable or too large: likewise
        out.mkdir(exist_ok=True)
        (out / name).write_bytes(data)
        copied[f"notanda/timestamps/{name}"] = data
    return copied


def export_bagit(
    root: str | os.PathLike[str], out: str | os.PathLike[str], *, ids: Sequence[str] = ()
) -> tuple[int, list[tuple[str, Outcome]]]:
    """Export intact records as a BagIt (RFC 8493) bag whose manifests agree with ours.

    The payload is ``data/<evidence_id>/*.json``, byte for byte. The SHA-256
    of each payload file is the one its record's manifest states, and the line
    for ``manifest.json`` is the record's receipt. The log goes in as the tag
    file ``notanda/log.jsonl`` with its head in ``notanda/head.json``, and
    every time-stamp token (``.notanda/timestamps/<size>.tsr``) as a tag file
    under ``notanda/timestamps/``, so that ``audit`` checks them in the bag.

    Returns:
        The number of records exported and the ``(evidence_id, outcome)`` of
        those left out because they did not verify.

    Raises:
        FileExistsError: *out* exists.
        ValueError: A record's bytes changed while it was being copied.
    """
    base, bag = Path(root), Path(out)
    bag.mkdir(parents=False, exist_ok=False)
    results = [verify_record(base / i) for i in ids] if ids else list(verify_root(base).records)
    skipped: list[tuple[str, Outcome]] = [
        (r.evidence_id, r.outcome) for r in results if r.outcome is not Outcome.OK
    ]
    manifest_lines: list[str] = []
    octets = files = 0
    for result in sorted(
        (r for r in results if r.outcome is Outcome.OK), key=lambda r: r.evidence_id
    ):
        source, target = base / result.evidence_id, bag / "data" / result.evidence_id
        target.mkdir(parents=True)
        manifest = read_regular_file(source / MANIFEST, MAX_MANIFEST_BYTES)
        sealed = json.loads(manifest)
        expected = {name: sealed["files"][name]["sha256"] for name in PAYLOADS}
        expected[MANIFEST] = result.receipt or ""
        for name in (*PAYLOADS, MANIFEST):
            # Read once, never through a link; the bytes hashed are the bytes written.
            content = (
                manifest
                if name == MANIFEST
                else read_regular_file(source / name, MAX_PAYLOAD_BYTES)
            )
            digest = hashlib.sha256(content).hexdigest()
            if digest != expected[name]:
                raise ValueError(f"{result.evidence_id}/{name} changed while it was exported")
            (target / name).write_bytes(content)
            manifest_lines.append(f"{digest}  data/{result.evidence_id}/{name}")
            octets += len(content)
            files += 1
    (bag / "data").mkdir(exist_ok=True)
    data, _ = read_log(base)
    _, leaves, _ = parse_log(data)
    head = Head(len(leaves), _merkle.root_of(leaves).hex())
    (bag / "notanda").mkdir()
    tags: dict[str, bytes] = {}

    def tag(name: str, content: bytes) -> None:
        (bag / name).write_bytes(content)
        tags[name] = content

    tokens = _export_tokens(base, bag / "notanda" / "timestamps")
    tag("bagit.txt", b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n")
    info = {
        "Bag-Software-Agent": f"notanda-evidence {__version__}",
        "Bagging-Date": format_timestamp(dt.datetime.now(dt.UTC))[:10],
        "External-Description": "Notanda evidence records and their log; "
        "audit the bag with: notanda-evidence audit <this folder>",
        "Notanda-Log-Root": head.root,
        "Notanda-Log-Size": str(head.size),
        "Payload-Oxum": f"{octets}.{files}",
    }
    tag("bag-info.txt", "".join(f"{k}: {v}\n" for k, v in info.items()).encode())
    tag("manifest-sha256.txt", "".join(f"{line}\n" for line in manifest_lines).encode())
    tag("notanda/head.json", (json.dumps(head.to_json(), sort_keys=True) + "\n").encode())
    tag("notanda/log.jsonl", data)
    tags.update(tokens)
    (bag / "tagmanifest-sha256.txt").write_text(
        "".join(
            f"{hashlib.sha256(content).hexdigest()}  {name}\n" for name, content in tags.items()
        )
    )
    for path in bag.rglob("*"):
        if not path.is_symlink():
            path.chmod(stat.S_IRWXU if path.is_dir() else stat.S_IRUSR | stat.S_IWUSR)
    return len(manifest_lines) // 4, skipped
