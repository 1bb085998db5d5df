"""Records and logs crafted by whoever controls the folder get documented answers, never a hang.

A record file or a log line nested 100,000 deep, or a FIFO in the log's
place: ``get_evidence`` answers ``integrity_failure`` or
``evidence_log_unavailable``, never ``internal_error``, and a search whose
record was sealed always returns its receipt.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import notanda_evidence
import notanda_mcp._guard
import pytest
from conftest import HEX64, assert_sealed, call, make_server, open_session, seal_record
from notanda_evidence import EvidenceLog, LogReason, canonical_bytes
from notanda_mcp._guard import ServerLogReason

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SEARCH = "search_literature"
GET = "get_evidence"
DEEP = b"[" * 100_000 + b"]" * 100_000
#: The documented log_reason values (docs/errors.md) a hostile log can lead to.
LOG_REASONS = {r.value for r in LogReason} | {r.value for r in ServerLogReason} | {"io_error"}


def _log_path(root: Path) -> Path:
    return root / ".notanda" / "log.jsonl"


def _assert_sealed_but_unlogged(root: Path, content: Any, log_reason: str) -> None:
    """A search answer naming the log's failure, with the receipt of its sealed record."""
    assert content is not None
    assert (content["error"], content["log_reason"]) == ("evidence_log_unavailable", log_reason)
    assert content["persisted"] is True
    assert_sealed(root, content["evidence_id"], content["receipt"])


async def _retrieved(root: Path, evidence_id: str) -> Any:
    """What get_evidence answers for *evidence_id* in a fresh server over *root*."""
    async with open_session(make_server(root), "legacy") as client:
        return (await call(client, GET, {"evidence_id": evidence_id})).structured_content


def _integrity_failure(evidence_id: str) -> dict[str, str]:
    return {"error": "integrity_failure", "evidence_id": evidence_id, "status": "error"}


def _replace_consistently(folder: Path, name: str, data: bytes) -> None:
    """Put *data* in a record file and its size and digest in the manifest."""
    (folder / name).write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_bytes())
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (folder / "manifest.json").write_bytes(canonical_bytes(manifest))


@pytest.mark.parametrize("name", ["manifest.json", "response.json"])
async def test_a_deep_nested_record_file_is_an_integrity_failure(
    evidence_root: Path, name: str
) -> None:
    evidence_id, _ = seal_record(evidence_root)
    folder = evidence_root / evidence_id
    if name == "manifest.json":
        (folder / name).write_bytes(DEEP)
    else:
        _replace_consistently(folder, name, DEEP)
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, GET, {"evidence_id": evidence_id})
        again = await call(client, GET, {"evidence_id": evidence_id})
    for answer in (result, again):
        assert answer.is_error is True
        assert answer.structured_content == _integrity_failure(evidence_id)


@pytest.mark.parametrize(
    "condition",
    [MemoryError(), PermissionError(13, "denied"), UnicodeDecodeError("utf-8", b"", 0, 1, "x")],
    ids=["too-large-for-memory", "unreadable", "undecodable"],
)
async def test_whatever_reading_a_record_raises_is_an_integrity_failure(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch, condition: Exception
) -> None:
    """The server's own guard, whatever the reader lets through."""
    evidence_id, _ = seal_record(evidence_root)

    def raising(*args: Any, **kwargs: Any) -> Any:
        raise condition

    monkeypatch.setattr(notanda_evidence, "open_record", raising)
    assert await _retrieved(evidence_root, evidence_id) == _integrity_failure(evidence_id)


async def test_a_search_after_a_deep_nested_log_line_returns_its_receipt(
    evidence_root: Path,
) -> None:
    known_id, _ = seal_record(evidence_root)
    with _log_path(evidence_root).open("ab") as log:
        log.write(DEEP + b"\n")
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        found = await call(client, SEARCH, {"query": "after a deep line"})
        retrieved = await call(client, GET, {"evidence_id": known_id})
    content = found.structured_content
    assert content is not None
    assert content.get("error") != "internal_error"
    assert HEX64.fullmatch(content["receipt"])
    assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    if content.get("error") is not None:
        assert content["error"] == "evidence_log_unavailable"
        assert content["log_reason"] in LOG_REASONS
    retrieval = retrieved.structured_content
    assert retrieval is not None
    if retrieved.is_error:
        assert retrieval["error"] == "evidence_log_unavailable", retrieval
        assert retrieval["log_reason"] in LOG_REASONS


async def test_a_fifo_as_the_log_is_reported_never_waited_on(evidence_root: Path) -> None:
    evidence_id, receipt = seal_record(evidence_root, log=False)
    _log_path(evidence_root).parent.mkdir()
    os.mkfifo(_log_path(evidence_root))
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        retrieved = await call(client, GET, {"evidence_id": evidence_id, "receipt": receipt})
        found = await call(client, SEARCH, {"query": "beside a fifo"})
        later = await call(client, SEARCH, {"query": "and another"})
    assert retrieved.is_error is True
    assert retrieved.structured_content == {
        "error": "evidence_log_unavailable",
        "evidence_id": evidence_id,
        "log_reason": "log_not_a_file",
        "status": "error",
    }
    for result in (found, later):
        _assert_sealed_but_unlogged(evidence_root, result.structured_content, "log_not_a_file")


async def test_a_log_that_never_answers_is_reported_after_the_deadline(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backstop for a FIFO swapped in after the check: the log call has a deadline."""
    evidence_id, _ = seal_record(evidence_root)
    release = threading.Event()

    def stuck(self: EvidenceLog, *args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        raise AssertionError("released: the answer must not have waited for this")

    monkeypatch.setattr(notanda_mcp._guard, "LOG_DEADLINE_S", 0.2)
    monkeypatch.setattr(EvidenceLog, "lookup", stuck)
    monkeypatch.setattr(EvidenceLog, "append", stuck)
    server = make_server(evidence_root)
    try:
        async with open_session(server, "legacy") as client:
            retrieved = await call(client, GET, {"evidence_id": evidence_id})
            found = await call(client, SEARCH, {"query": "stuck log"})
    finally:
        release.set()
    assert retrieved.structured_content == {
        "error": "evidence_log_unavailable",
        "evidence_id": evidence_id,
        "log_reason": "log_timeout",
        "status": "error",
    }
    _assert_sealed_but_unlogged(evidence_root, found.structured_content, "log_timeout")


async def test_the_log_lookup_overlaps_the_record_check(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lookup is handed to the log worker before the record is verified (issue 11)."""
    evidence_id, receipt = seal_record(evidence_root)
    looked_up = threading.Event()
    real_lookup = EvidenceLog.lookup
    real_open = notanda_evidence.open_record

    def lookup(self: EvidenceLog, *args: Any, **kwargs: Any) -> Any:
        looked_up.set()
        return real_lookup(self, *args, **kwargs)

    def open_record(*args: Any, **kwargs: Any) -> Any:
        # Answered internal_error when the lookup only starts after the check.
        if not looked_up.wait(20):
            raise AssertionError("the record was verified before the log lookup started")
        return real_open(*args, **kwargs)

    monkeypatch.setattr(EvidenceLog, "lookup", lookup)
    monkeypatch.setattr(notanda_evidence, "open_record", open_record)
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, GET, {"evidence_id": evidence_id, "receipt": receipt})
    assert result.is_error is False, result.structured_content
    assert result.structured_content is not None
    assert result.structured_content["logged"] is True
    assert result.structured_content["receipt"] == receipt


async def test_a_broken_record_is_answered_before_a_broken_log(evidence_root: Path) -> None:
    """The lookup starts first, but the record's own failure still decides the answer."""
    evidence_id, _ = seal_record(evidence_root, log=False)
    (evidence_root / evidence_id / "response.json").write_bytes(b"{}\n")
    _log_path(evidence_root).parent.mkdir()
    os.mkfifo(_log_path(evidence_root))
    assert await _retrieved(evidence_root, evidence_id) == _integrity_failure(evidence_id)
