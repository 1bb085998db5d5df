"""A provider body a record could not hold is refused as ``provider_error``, and sealed as such.

The record's depth limit (``MAX_JSON_DEPTH``) applies to ``provider.json``,
which holds the body one level down: a body may nest 63 levels, and one that
nests deeper is ``too_deep``, checked before it is parsed (100,000 levels
would otherwise stop the parser) and not kept. A check's bodies sit three
levels down (in their entry of ``attempts``): each may nest 61 levels, and
one deeper leaves its references ``unchecked`` with ``too_deep`` in a sealed
record, never a record the writer refuses.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from conftest import assert_sealed, call, make_server, open_session, read_json
from fake_openalex import FakeOpenAlex
from notanda_evidence import verify_file
from notanda_evidence.verify_file import MAX_JSON_DEPTH

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def _page_nesting(depth: int) -> bytes:
    """A works page whose deepest value sits *depth* levels down (the page itself is one)."""
    inner = depth - 1
    return b'{"meta":{"count":0},"results":[],"pad":' + b"[" * inner + b"]" * inner + b"}"


def _provider(body: bytes) -> FakeOpenAlex:
    return FakeOpenAlex(lambda request: httpx.Response(200, content=body))


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"results":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        _page_nesting(MAX_JSON_DEPTH),
    ],
    ids=["100000-deep", "100000-deep-results", "one-level-past-the-record"],
)
async def test_a_body_deeper_than_a_record_holds_is_too_deep_and_sealed(
    evidence_root: Path, body: bytes
) -> None:
    server = make_server(evidence_root, _provider(body))
    async with open_session(server, "legacy") as client:
        result = await call(client, "search_literature", {"query": "deep"})
    content = result.structured_content
    assert content is not None
    assert result.is_error is True
    assert (content["error"], content["reason"], content["http_status"]) == (
        "provider_error",
        "too_deep",
        200,
    )
    stored = assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    assert stored["reason"] == "too_deep"
    provider = read_json(evidence_root / content["evidence_id"] / "provider.json")
    assert "observed_json" not in provider
    assert provider["attempts"][0]["error_type"] == "too_deep"
    assert verify_file.main([str(evidence_root / content["evidence_id"])]) == 0


async def test_a_body_at_the_limit_is_kept_and_verifies(
    evidence_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = _page_nesting(MAX_JSON_DEPTH - 1)
    server = make_server(evidence_root, _provider(body))
    async with open_session(server, "legacy") as client:
        result = await call(client, "search_literature", {"query": "at the limit"})
    content = result.structured_content
    assert content is not None
    assert result.is_error is False, content
    assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    path = evidence_root / content["evidence_id"] / "provider.json"
    assert not verify_file.json_depth_exceeds(path.read_bytes(), MAX_JSON_DEPTH)
    assert verify_file.json_depth_exceeds(path.read_bytes(), MAX_JSON_DEPTH - 1)
    assert verify_file.main([str(evidence_root / content["evidence_id"])]) == 0
    capsys.readouterr()


#: ``provider.json`` holds a check's body three levels down (the object, its
#: ``attempts`` list, the attempt's entry): such a body may nest 61 levels.
CHECK_BODY_DEPTH = MAX_JSON_DEPTH - 3
ONE_TITLE = "@article{a, title={A treatise on imaginary engines}, year={2020}}"


async def test_a_check_body_a_record_could_not_hold_is_too_deep_and_the_check_sealed(
    evidence_root: Path,
) -> None:
    # Deep enough for a search's record, one level too deep for a check's.
    server = make_server(
        evidence_root,
        _provider(_page_nesting(CHECK_BODY_DEPTH + 1)),
        toolsets=("search", "references"),
    )
    async with open_session(server, "legacy") as client:
        result = await call(client, "check_references", {"references": ONE_TITLE})
    content = result.structured_content
    assert content is not None
    assert result.is_error is False, content
    (entry,) = content["references"]
    assert (entry["verdict"], entry["error"]) == ("unchecked", "too_deep")
    assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    provider = read_json(evidence_root / content["evidence_id"] / "provider.json")
    (attempt,) = provider["attempts"]
    assert attempt["error_type"] == "too_deep"
    assert "observed_json" not in attempt
    assert verify_file.main([str(evidence_root / content["evidence_id"])]) == 0


async def test_a_check_body_at_the_limit_is_kept_and_verifies(
    evidence_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = make_server(
        evidence_root,
        _provider(_page_nesting(CHECK_BODY_DEPTH)),
        toolsets=("search", "references"),
    )
    async with open_session(server, "legacy") as client:
        result = await call(client, "check_references", {"references": ONE_TITLE})
    content = result.structured_content
    assert content is not None
    assert result.is_error is False, content
    assert content["references"][0]["verdict"] == "not_found"
    assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    path = evidence_root / content["evidence_id"] / "provider.json"
    assert "observed_json" in read_json(path)["attempts"][0]
    assert not verify_file.json_depth_exceeds(path.read_bytes(), MAX_JSON_DEPTH)
    assert verify_file.json_depth_exceeds(path.read_bytes(), MAX_JSON_DEPTH - 1)
    assert verify_file.main([str(evidence_root / content["evidence_id"])]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    ("pad_bytes", "trimmed"), [(1 << 20, 1), ((1 << 20) - 200, 0)], ids=["1-mib", "under"]
)
async def test_a_page_of_a_mebibyte_or_more_gives_its_freed_memory_back(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch, pad_bytes: int, trimmed: int
) -> None:
    """After a large page the heaps' free pages go back to the system, once (issue 23)."""
    calls: list[int] = []
    monkeypatch.setattr("notanda_mcp._service._return_freed_pages", lambda: calls.append(1))
    body = b'{"meta":{"count":0},"results":[],"pad":"' + b"x" * pad_bytes + b'"}'
    server = make_server(evidence_root, _provider(body))
    async with open_session(server, "legacy") as client:
        result = await call(client, "search_literature", {"query": "large"})
    assert result.is_error is False, result.structured_content
    assert (len(body) >= 1 << 20) is bool(trimmed)
    assert len(calls) == trimmed
