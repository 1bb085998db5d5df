"""Evidence as MCP resources: the list, the template, reading a record or the head, the links.

Every session kind runs each test (both protocol eras); caching hints are
checked on the 2026-07-28 wire, where they are required, and proved absent
on the handshake wire, where they do not exist.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from conftest import (
    KEY,
    SESSION_KINDS,
    SESSIONS,
    call,
    make_server,
    open_session,
    raw_jsonrpc,
    reseal,
    seal_record,
    search,
)
from fake_openalex import FakeOpenAlex, bibliography, json_response, page_body, synthetic_work
from mcp import MCPError
from notanda_evidence import EvidenceLog, EvidenceStore
from notanda_mcp._resources import (
    EVIDENCE_TEMPLATE,
    HEAD_URI,
    PAGE_SIZE,
    RECORD_TTL_MS,
    evidence_link,
    evidence_uri,
    record_name,
)
from notanda_mcp._schemas import REMEDIES

pytestmark = pytest.mark.anyio

NO_CACHE: Any = "bypass"


def _modern(kind: str) -> bool:
    return SESSION_KINDS[kind][0] != "legacy"


def _text(result: types.ReadResourceResult, uri: str) -> Any:
    (contents,) = result.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.uri == uri
    assert contents.mime_type == "application/json"
    return json.loads(contents.text)


def _sealed_with_request(root: Path, request: dict[str, Any]) -> str:
    """A sealed, logged record whose request.json is *request* (plus its ID)."""
    writer = EvidenceStore(root).create()
    evidence_id = writer.evidence_id
    writer.write_request({**request, "evidence_id": evidence_id, "schema_version": 1})
    writer.write_provider({"attempts": [], "capture": "not_attempted", "provider": "openalex"})
    writer.write_response({"evidence_id": evidence_id, "results": [], "status": "ok"})
    EvidenceLog(root).append(evidence_id, writer.seal().receipt)
    return evidence_id


async def _read_error(client: Any, uri: str) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await client.read_resource(uri, cache_mode=NO_CACHE)
    return caught.value


# ------------------------------------------------------------------ names


def test_record_names_say_what_was_asked_and_when() -> None:
    at = "2026-12-01T10:00:00.000Z"
    search_request = {
        "tool": "search_literature",
        "requested_at": at,
        "supplied": {"query": "a\n b"},
    }
    assert record_name(search_request, "0" * 32) == f"search: a b ({at})"
    # A check's request.json keeps what was read under parsed.references (spec 2.6).
    check = {
        "tool": "check_references",
        "requested_at": at,
        "parsed": {"detected": "bibtex", "format": "auto", "references": [{}, {}, {}]},
    }
    assert record_name(check, "0" * 32) == f"check of 3 references ({at})"
    one = {"tool": "check_references", "parsed": {"references": ["x"]}}
    assert record_name(one, "0" * 32) == "check of 1 reference"
    assert record_name({"tool": "check_references", "parsed": None}, "0" * 32) == (
        "check, nothing read"
    )
    assert record_name(None, "1" * 32) == f"evidence {'1' * 32}"
    long = record_name({"supplied": {"query": "x" * 500}}, "0" * 32)
    assert long == "search: " + "x" * 119 + "\u2026"


# ---------------------------------------------------------------- listing


@pytest.mark.parametrize("kind", SESSIONS)
async def test_the_capability_and_the_template_are_declared(evidence_root: Path, kind: str) -> None:
    async with open_session(make_server(evidence_root), kind) as client:
        if not _modern(kind):  # the 2026-07-28 client learns capabilities only on demand
            assert client.server_capabilities.resources is not None
        templates = await client.list_resource_templates(cache_mode=NO_CACHE)
    (template,) = templates.resource_templates
    assert template.uri_template == EVIDENCE_TEMPLATE
    assert template.mime_type == "application/json"
    if _modern(kind):
        assert (templates.ttl_ms, templates.cache_scope) == (0, "private")


@pytest.mark.parametrize("kind", SESSIONS)
async def test_the_list_pages_from_the_head_to_the_oldest_record(
    evidence_root: Path, kind: str
) -> None:
    made = [seal_record(evidence_root)[0] for _ in range(PAGE_SIZE + 3)]
    async with open_session(make_server(evidence_root), kind) as client:
        first = await client.list_resources(cache_mode=NO_CACHE)
        assert first.next_cursor is not None
        second = await client.list_resources(cursor=first.next_cursor, cache_mode=NO_CACHE)
    assert second.next_cursor is None
    assert first.resources[0].uri == HEAD_URI
    listed = [r.uri for r in first.resources[1:] + second.resources]
    assert listed == [evidence_uri(evidence_id) for evidence_id in reversed(made)]
    assert len(first.resources) == PAGE_SIZE + 1
    assert all(r.mime_type == "application/json" for r in first.resources + second.resources)
    if _modern(kind):
        assert (first.ttl_ms, first.cache_scope) == (0, "private")


@pytest.mark.parametrize("kind", ["legacy", "modern-jsonrpc"])
async def test_an_unknown_cursor_is_refused(evidence_root: Path, kind: str) -> None:
    async with open_session(make_server(evidence_root), kind) as client:
        with pytest.raises(MCPError) as caught:
            await client.list_resources(cursor="not-a-cursor", cache_mode=NO_CACHE)
    assert caught.value.code == types.INVALID_PARAMS


async def _refused(client: Any, cursor: str) -> bool:
    try:
        await client.list_resources(cursor=cursor, cache_mode=NO_CACHE)
    except MCPError as exc:
        return exc.code == types.INVALID_PARAMS and exc.data is None
    return False


def _flipped(cursor: str, at: int) -> str:
    swap = "A" if cursor[at] != "A" else "B"
    return cursor[:at] + swap + cursor[at + 1 :]


@pytest.mark.parametrize("kind", ["legacy", "modern-jsonrpc"])
async def test_only_cursors_this_server_start_gave_are_accepted(
    evidence_root: Path, kind: str
) -> None:
    for _ in range(2 * PAGE_SIZE + 3):
        seal_record(evidence_root)
    async with open_session(make_server(evidence_root), kind) as client:
        first = await client.list_resources(cache_mode=NO_CACHE)
        given = first.next_cursor
        assert given is not None
        second = await client.list_resources(cursor=given, cache_mode=NO_CACHE)
        assert second.next_cursor is not None
        # Log positions (what the cursor used to be), forgeries and edits of a real one.
        made_up = ["0", "3", "9" * 20, str(2 * PAGE_SIZE), "", " ", given + "A", given[:-1]]
        made_up += [_flipped(given, 0), _flipped(given, 7), _flipped(given, len(given) - 1)]
        made_up += [given.replace("-", "+").replace("_", "/") + "=", given.upper()]
        for cursor in made_up:
            if cursor != given:
                assert await _refused(client, cursor), cursor
        # The cursors it gave still work after the refusals.
        again = await client.list_resources(cursor=given, cache_mode=NO_CACHE)
        assert [r.uri for r in again.resources] == [r.uri for r in second.resources]
    # Another start of the server over the same folder: the old cursor is not its own.
    async with open_session(make_server(evidence_root), kind) as client:
        assert await _refused(client, given)
        fresh = await client.list_resources(cache_mode=NO_CACHE)
        assert fresh.next_cursor is not None
        assert fresh.next_cursor != given
        listed = await client.list_resources(cursor=fresh.next_cursor, cache_mode=NO_CACHE)
        assert [r.uri for r in listed.resources] == [r.uri for r in second.resources]


async def test_names_are_scrubbed_escaped_and_follow_the_tool(evidence_root: Path) -> None:
    at = "2026-12-01T10:00:00.000Z"
    leaky = _sealed_with_request(
        evidence_root,
        {"tool": "search_literature", "requested_at": at, "supplied": {"query": f"{KEY} \u202e"}},
    )
    checked = _sealed_with_request(
        evidence_root,
        {
            "tool": "check_references",
            "requested_at": at,
            "parsed": {"references": [{"doi": "10.1/x"}] * 2},
        },
    )
    async with open_session(make_server(evidence_root), "legacy") as client:
        listed = await client.list_resources(cache_mode=NO_CACHE)
    names = {r.uri: r.name for r in listed.resources}
    assert names[evidence_uri(checked)] == f"check of 2 references ({at})"
    leaked = names[evidence_uri(leaky)]
    assert KEY not in leaked
    assert "\u202e" not in leaked
    assert "\\u202e" in leaked
    assert leaked.startswith("search: ")


async def test_a_real_check_record_is_named_for_its_references(evidence_root: Path) -> None:
    """The name comes from request.json as the server's own check writes it."""
    bibtex = (
        "@article{a, title={Sketch of the Analytical Engine}, author={Lovelace, Ada}, year={2021},"
        " doi={10.5555/notanda.test.1}}\n"
        "@article{b, title={A treatise nobody ever wrote}, author={Nobody, Ann}, year={2019}}\n"
        "@article{c, title={On computable numbers}, author={Turing, Alan}, year={2023}}\n"
    )
    server = make_server(evidence_root, FakeOpenAlex(bibliography()), toolsets=("references",))
    async with open_session(server, "legacy") as client:
        answer = (await call(client, "check_references", {"references": bibtex})).structured_content
        assert answer is not None
        assert answer["status"] == "ok"
        listed = await client.list_resources(cache_mode=NO_CACHE)
    evidence_id = answer["evidence_id"]
    request = json.loads((evidence_root / evidence_id / "request.json").read_text("utf-8"))
    assert len(request["parsed"]["references"]) == 3
    names = {r.uri: r.name for r in listed.resources}
    assert names[evidence_uri(evidence_id)] == f"check of 3 references ({request['requested_at']})"


async def test_a_pruned_record_leaves_the_list(evidence_root: Path) -> None:
    kept, _ = seal_record(evidence_root)
    gone, _ = seal_record(evidence_root)
    from notanda_evidence import EntryType

    EvidenceLog(evidence_root).append(gone, None, EntryType.TOMBSTONE, reason="pruned")
    async with open_session(make_server(evidence_root), "legacy") as client:
        listed = await client.list_resources(cache_mode=NO_CACHE)
    assert [r.uri for r in listed.resources] == [HEAD_URI, evidence_uri(kept)]


# ---------------------------------------------------------------- reading


@pytest.mark.parametrize("kind", SESSIONS)
async def test_reading_a_record_answers_what_get_evidence_answers(
    evidence_root: Path, kind: str
) -> None:
    evidence_id, _ = seal_record(evidence_root)
    async with open_session(make_server(evidence_root), kind) as client:
        read = await client.read_resource(evidence_uri(evidence_id), cache_mode=NO_CACHE)
        retrieved = await call(client, "get_evidence", {"evidence_id": evidence_id})
    assert _text(read, evidence_uri(evidence_id)) == retrieved.structured_content
    if _modern(kind):
        assert (read.ttl_ms, read.cache_scope) == (RECORD_TTL_MS, "private")


@pytest.mark.parametrize("kind", SESSIONS)
async def test_reading_the_head(evidence_root: Path, kind: str) -> None:
    seal_record(evidence_root)
    head = EvidenceLog(evidence_root).head()
    async with open_session(make_server(evidence_root), kind) as client:
        read = await client.read_resource(HEAD_URI, cache_mode=NO_CACHE)
    assert _text(read, HEAD_URI) == {"head": str(head), "root": head.root, "size": 1}
    if _modern(kind):
        assert (read.ttl_ms, read.cache_scope) == (0, "private")


async def test_the_handshake_wire_carries_no_caching_hints(evidence_root: Path) -> None:
    server = make_server(evidence_root)
    async with raw_jsonrpc(server) as (send, receive):
        await send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        initialized = await receive()
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await send(
            {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": HEAD_URI}}
        )
        answer = await receive()
    assert "resources" in initialized["result"]["capabilities"]
    assert "ttlMs" not in answer["result"]
    assert "cacheScope" not in answer["result"]


@pytest.mark.parametrize("kind", SESSIONS)
async def test_a_search_answer_links_to_its_record(evidence_root: Path, kind: str) -> None:
    async with open_session(make_server(evidence_root), kind) as client:
        result = await call(client, "search_literature", {"query": "linked"})
        _, link = result.content
        assert isinstance(link, types.ResourceLink)
        content = result.structured_content
        assert content is not None
        assert link == evidence_link(content["evidence_id"])
        read = await client.read_resource(link.uri, cache_mode=NO_CACHE)
        listed = await client.list_resources(cache_mode=NO_CACHE)
    stored = _text(read, link.uri)
    added = {"head", "log_head", "log_index", "receipt", "remedy"}
    assert {k: v for k, v in content.items() if k not in added} == {
        k: v for k, v in stored.items() if k != "logged"
    }
    assert stored["logged"] is True
    (record,) = listed.resources[1:]
    assert record.uri == link.uri
    assert record.name.startswith("search: linked (")


async def test_a_failed_search_has_no_link(evidence_root: Path) -> None:
    failing = FakeOpenAlex(lambda request: json_response({"error": "no"}, status=500))
    async with open_session(make_server(evidence_root, failing), "legacy") as client:
        result = await call(client, "search_literature", {"query": "fails"})
    assert result.is_error is True
    assert len(result.content) == 1


# ----------------------------------------------------------------- errors


def _assert_error(error: MCPError, code: str, jsonrpc_code: int) -> dict[str, Any]:
    assert error.code == jsonrpc_code
    data: dict[str, Any] = error.data
    assert data["error"] == code
    assert data["remedy"] == REMEDIES[code]
    return data


@pytest.mark.parametrize("kind", SESSIONS)
async def test_a_tampered_record_is_never_content(evidence_root: Path, kind: str) -> None:
    evidence_id, _ = seal_record(evidence_root)
    response = evidence_root / evidence_id / "response.json"
    response.write_bytes(response.read_bytes().replace(b'"ok"', b'"OK"'))
    async with open_session(make_server(evidence_root), kind) as client:
        error = await _read_error(client, evidence_uri(evidence_id))
    data = _assert_error(error, "integrity_failure", types.INTERNAL_ERROR)
    assert data["evidence_id"] == evidence_id


@pytest.mark.parametrize("kind", SESSIONS)
async def test_an_unknown_id_is_not_found(evidence_root: Path, kind: str) -> None:
    async with open_session(make_server(evidence_root), kind) as client:
        unknown = await _read_error(client, evidence_uri("0" * 32))
        invalid = await _read_error(client, evidence_uri("../etc"))
        elsewhere = await _read_error(client, "notanda://nothing")
    _assert_error(unknown, "not_found", types.INVALID_PARAMS)
    _assert_error(invalid, "invalid_evidence_id", types.INVALID_PARAMS)
    _assert_error(elsewhere, "not_found", types.INVALID_PARAMS)


async def test_a_replaced_record_and_an_unsealed_one_give_their_codes(evidence_root: Path) -> None:
    replaced, _ = seal_record(evidence_root)
    reseal(evidence_root / replaced, {"total_count": 99})
    unsealed = EvidenceStore(evidence_root).create()
    unsealed.write_request({"evidence_id": unsealed.evidence_id, "schema_version": 1})
    async with open_session(make_server(evidence_root), "legacy") as client:
        mismatch = await _read_error(client, evidence_uri(replaced))
        incomplete = await _read_error(client, evidence_uri(unsealed.evidence_id))
    _assert_error(mismatch, "log_mismatch", types.INTERNAL_ERROR)
    _assert_error(incomplete, "incomplete", types.INTERNAL_ERROR)
    unsealed.close()


async def test_an_unreadable_log_fails_the_list_and_the_head(evidence_root: Path) -> None:
    seal_record(evidence_root)
    log_file = evidence_root / ".notanda" / "log.jsonl"
    log_file.unlink()
    log_file.mkdir()
    async with open_session(make_server(evidence_root), "legacy") as client:
        head = await _read_error(client, HEAD_URI)
        with pytest.raises(MCPError) as listed:
            await client.list_resources(cache_mode=NO_CACHE)
    for error in (head, listed.value):
        data = _assert_error(error, "evidence_log_unavailable", types.INTERNAL_ERROR)
        assert data["log_reason"] == "log_not_a_file"


# ------------------------------------------------------------ concurrency


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", SESSIONS)
async def test_a_read_during_a_slow_search_is_answered(evidence_root: Path, kind: str) -> None:
    """The search holds the only worker thread the SDK's default limiter allows; reads go on.

    The provider blocks until the reads are done, so the reads cannot have
    waited for the search: had they queued behind its thread, the test hangs
    (and the timeout fails it).
    """
    known, _ = seal_record(evidence_root)
    hold, entered, release = threading.Event(), threading.Event(), threading.Event()

    def slow(request: httpx.Request) -> httpx.Response:
        if hold.is_set():
            entered.set()
            release.wait(50)
        return json_response(page_body([synthetic_work(1)]))

    server = make_server(evidence_root, FakeOpenAlex(slow))
    async with open_session(server, kind) as client:
        await search(client)  # warm up: the first search loads the evidence and provider code
        anyio.to_thread.current_default_thread_limiter().total_tokens = 1
        hold.set()
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call, client, "search_literature", {"query": "slow"})
                while not entered.is_set():
                    await anyio.sleep(0.01)
                read = await client.read_resource(evidence_uri(known), cache_mode=NO_CACHE)
                listed = await client.list_resources(cache_mode=NO_CACHE)
                head = await client.read_resource(HEAD_URI, cache_mode=NO_CACHE)
                release.set()
        finally:
            release.set()
    assert _text(read, evidence_uri(known))["evidence_id"] == known
    assert evidence_uri(known) in [r.uri for r in listed.resources]
    assert _text(head, HEAD_URI)["size"] == 2
