"""The two tools as a client sees them, in memory, on both protocol eras.

Published definitions and annotations, client attribution in ``request.json``,
the untrusted-content notice, real OpenAlex pages end to end, lone surrogates.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from importlib import metadata
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from conftest import (
    HANDSHAKE_VERSION,
    HEX64,
    MODERN_VERSION,
    NOTICE,
    SESSION_KINDS,
    SESSIONS,
    assert_sealed,
    call,
    make_server,
    open_session,
    raw_jsonrpc,
    raw_modern_call,
    read_json,
    record_ids,
    search,
    text_of,
    write_b3_record,
)
from fake_openalex import (
    FakeOpenAlex,
    fixture_bytes,
    fixture_names,
    fixture_page,
    synthetic_work,
    works_page,
)
from mcp import MCPError
from notanda_evidence.verify_file import parse_timestamp
from notanda_mcp import build_server
from notanda_mcp._client import ADDED_AFTER_SEALING
from notanda_mcp._schemas import CHECK_REFERENCES, DEFAULT_TOOLSETS, TOOLS, tool_names

pytestmark = pytest.mark.anyio

SEARCH_ANNOTATIONS = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": False,
    "openWorldHint": True,
}
GET_ANNOTATIONS = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


def _wire(tool: types.Tool) -> dict[str, Any]:
    return tool.model_dump(mode="json", by_alias=True, exclude_none=True)


# ----------------------------------------------------------- definitions


@pytest.mark.parametrize("kind", SESSIONS)
async def test_tools_list_publishes_exactly_the_two_definitions(
    evidence_root: Path, kind: str
) -> None:
    server = make_server(evidence_root)
    async with open_session(server, kind) as client:
        tools = {t.name: t for t in (await client.list_tools(cache_mode="bypass")).tools}
    assert sorted(tools) == ["get_evidence", "search_literature"]
    for name, tool in tools.items():
        wire = _wire(tool)
        published = TOOLS[name]
        for field in ("name", "title", "description", "inputSchema", "outputSchema"):
            assert wire[field] == published[field], field
    assert _wire(tools["search_literature"])["annotations"] == SEARCH_ANNOTATIONS
    assert _wire(tools["get_evidence"])["annotations"] == GET_ANNOTATIONS
    # Sent explicitly: without destructiveHint false, clients assume a destructive tool.
    annotations = tools["search_literature"].annotations
    assert annotations is not None
    assert annotations.destructive_hint is False


@pytest.mark.parametrize(
    ("toolsets", "expected"),
    [
        ((), ["get_evidence", "search_literature"]),
        (("search",), ["get_evidence", "search_literature"]),
        (("references",), ["check_references", "get_evidence", "search_literature"]),
        (
            ("references", "search", "references"),
            ["check_references", "get_evidence", "search_literature"],
        ),
    ],
    ids=["none", "search", "references-alone", "order-and-repeats"],
)
async def test_toolsets_choose_the_tools_and_search_is_always_offered(
    evidence_root: Path, toolsets: tuple[str, ...], expected: list[str]
) -> None:
    server = make_server(evidence_root, toolsets=toolsets)
    async with open_session(server, "legacy") as client:
        tools = {t.name: t for t in (await client.list_tools(cache_mode="bypass")).tools}
    assert sorted(tools) == expected
    for name, tool in tools.items():
        assert _wire(tool)["inputSchema"] == TOOLS[name]["inputSchema"]


@pytest.mark.parametrize("toolsets", [("bogus",), ("search", "Search"), ("",)])
def test_build_server_refuses_an_unknown_toolset(evidence_root: Path, toolsets: tuple[str]) -> None:
    with pytest.raises(ValueError, match="unknown toolset"):
        make_server(evidence_root, toolsets=toolsets)


async def test_a_tool_outside_the_toolsets_is_unknown_and_leaves_no_record(
    evidence_root: Path,
) -> None:
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider)
    async with open_session(server, "legacy") as client:
        with pytest.raises(MCPError):
            await client.session.call_tool("check_references", {"references": "10.1000/x"})
    assert record_ids(evidence_root) == []
    assert provider.requests == []


def test_the_check_input_schema_leaves_size_and_format_to_the_server() -> None:
    schema = TOOLS["check_references"]["inputSchema"]
    assert schema["required"] == ["references"]
    assert schema["additionalProperties"] is False
    for name in ("references", "format"):
        assert schema["properties"][name]["type"] == "string"
        assert not {"maxLength", "minLength", "enum"} & set(schema["properties"][name])
    assert schema["properties"]["format"]["default"] == "auto"


def test_input_schemas_state_every_limit() -> None:
    search_input = TOOLS["search_literature"]["inputSchema"]
    assert search_input["required"] == ["query"]
    assert search_input["additionalProperties"] is False
    query, limit = search_input["properties"]["query"], search_input["properties"]["limit"]
    assert (query["type"], query["minLength"], query["maxLength"]) == ("string", 1, 1000)
    assert (limit["type"], limit["minimum"], limit["maximum"], limit["default"]) == (
        "integer",
        1,
        10,
        5,
    )
    filters = search_input["properties"]["filters"]
    assert filters["additionalProperties"] is False
    for name in ("from_year", "to_year"):
        year = filters["properties"][name]
        assert (year["type"], year["minimum"], year["maximum"]) == ("integer", 1000, 2100)
    for name in ("oa_status", "types", "languages"):
        array = filters["properties"][name]
        assert array["type"] == "array"
        assert array["uniqueItems"] is True
        assert array["minItems"] == 1
        assert array["maxItems"] >= 1
    get_input = TOOLS["get_evidence"]["inputSchema"]
    assert get_input["required"] == ["evidence_id"]
    assert get_input["additionalProperties"] is False
    assert get_input["properties"]["evidence_id"]["maxLength"] == 128
    assert get_input["properties"]["receipt"]["type"] == ["string", "null"]


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_output_schema_is_one_object_discriminated_by_status(tool: str) -> None:
    schema = TOOLS[tool]["outputSchema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["status"]
    assert "oneOf" not in schema
    assert "anyOf" not in schema
    assert schema["properties"]["status"]["enum"][:2] == ["ok", "error"]


def _subschemas(node: Any, container: bool = False) -> int:
    """How many schemas a metaschema check walks (``properties`` maps names to schemas)."""
    if isinstance(node, list):
        return sum(_subschemas(item) for item in node)
    if not isinstance(node, dict):
        return 0
    if container:
        return sum(_subschemas(value) for value in node.values())
    return 1 + sum(_subschemas(value, key == "properties") for key, value in node.items())


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_output_schemas_stay_small_enough_to_check_on_every_call(tool: str) -> None:
    # Changed on purpose (issue 11): the mcp 1.x SDK client checks the output
    # schema against the 2020-12 metaschema on every call, at about a
    # millisecond per subschema; the status-conditional branches and the
    # per-field schemas (37 and 32 subschemas before) cost it 11-13 ms a call.
    schema = TOOLS[tool]["outputSchema"]
    assert "allOf" not in schema
    assert _subschemas(schema) <= 8
    listed = "references" if tool == CHECK_REFERENCES else "results"
    assert schema["properties"][listed]["type"] == "array"


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_both_descriptions_carry_the_untrusted_content_notice(tool: str) -> None:
    assert NOTICE in TOOLS[tool]["description"]


async def test_tools_list_never_waits_for_the_warm_up(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_server(evidence_root)
    release = threading.Event()
    monkeypatch.setattr("notanda_mcp._server._WARM_UP_AFTER_S", 0)
    monkeypatch.setattr(server.service, "warm_up", lambda: release.wait(30))
    async with open_session(server, "legacy") as client:
        listed = await client.session.list_tools()  # answered while the warm-up is stuck
        assert {tool.name for tool in listed.tools} == set(tool_names(DEFAULT_TOOLSETS))
        warming = server._warming
        assert warming is not None
        assert warming.is_alive()
        await client.session.list_tools()
        assert server._warming is warming  # started once
    release.set()
    warming.join()


async def test_a_failing_warm_up_is_harmless_and_the_first_search_answers(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_server(evidence_root)
    monkeypatch.setattr("notanda_mcp._server._WARM_UP_AFTER_S", 0)
    raised: list[object] = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    loads = server._validators.load
    calls: list[int] = []

    def load_fails_once() -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise ImportError("jsonschema is missing")
        return loads()

    monkeypatch.setattr(server._validators, "load", load_fails_once)
    async with open_session(server, "legacy") as client:
        await client.session.list_tools()
        warming = server._warming
        assert warming is not None
        warming.join(30)
        assert not warming.is_alive()
        content = await search(client)  # the first search loads the validators itself
    assert content["status"] == "ok"
    assert raised == []  # nothing escaped the warm-up thread
    assert len(calls) >= 2


def test_the_warm_up_never_holds_up_the_process_exit(tmp_path: Path) -> None:
    """A warm-up stuck for good (a hung disk) does not keep the process from ending."""
    code = textwrap.dedent(
        """
        import sys, threading, time
        import anyio
        from mcp import Client
        import notanda_mcp
        import notanda_mcp._server

        notanda_mcp._server._WARM_UP_AFTER_S = 0
        server = notanda_mcp.build_server(sys.argv[1], config={"HARVESTER_OPENALEX_API_KEY": "k"})
        server.service.warm_up = lambda: threading.Event().wait()  # never returns

        async def session():
            async with Client(server.lowlevel, mode="legacy") as client:
                await client.session.list_tools()
                time.sleep(0.2)
                assert server._warming.is_alive()

        anyio.run(session)
        print("done", flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"


async def test_a_server_that_owns_its_process_settles_the_heap_after_the_warm_up(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once loaded, what lives as long as the process leaves the collector's later passes.

    Only a server that owns its process (``serve_stdio`` sets it) does this: a
    server inside a test or a host program leaves that program's collector as it is.
    """
    monkeypatch.setattr("notanda_mcp._server._WARM_UP_AFTER_S", 0)
    settled: list[str] = []
    monkeypatch.setattr("notanda_mcp._server._settle_heap", lambda: settled.append("settled"))
    for owns in (False, True):
        server = make_server(evidence_root)
        server._owns_process = owns
        async with open_session(server, "legacy") as client:
            await client.session.list_tools()
            assert server._warming is not None
            server._warming.join(30)
            await search(client)
        assert settled == (["settled"] if owns else [])


async def test_the_warm_up_readies_the_log_worker_and_rehearses_offline(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first search finds a log worker waiting; the rehearsal sends and writes nothing."""
    from notanda_mcp import _guard

    monkeypatch.setattr(_guard, "_IDLE", {})
    monkeypatch.setattr("notanda_mcp._server._WARM_UP_AFTER_S", 0)
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider)
    async with open_session(server, "legacy") as client:
        await client.session.list_tools()
        assert server._warming is not None
        server._warming.join(30)
        ready = list(_guard._IDLE["notanda-log"])
        assert len(ready) == 1
        assert provider.requests == []  # the rehearsal never reached the provider
        assert record_ids(evidence_root) == []  # nor left a record
        await search(client)
        assert _guard._IDLE["notanda-log"] == ready  # the search used the worker made ready


async def test_the_warm_up_reads_the_log_so_the_first_search_reads_only_what_is_new(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restarted server's first search does not read the collection's whole log."""
    monkeypatch.setattr("notanda_mcp._server._WARM_UP_AFTER_S", 0)
    first = make_server(evidence_root, FakeOpenAlex())
    async with open_session(first, "legacy") as client:
        for _ in range(3):
            await search(client)
    log_bytes = (evidence_root / ".notanda" / "log.jsonl").stat().st_size
    server = make_server(evidence_root, FakeOpenAlex())
    async with open_session(server, "legacy") as client:
        await client.session.list_tools()
        assert server._warming is not None
        server._warming.join(30)
        # Nothing but the warm-up has touched the log in this server: without it, 0.
        log = server.service.evidence_log()
        assert log._state.offset == log_bytes
        await search(client)
        assert log._state.offset > log_bytes


def test_settling_the_heap_freezes_what_is_alive() -> None:
    code = textwrap.dedent(
        """
        import gc, json
        from notanda_mcp._server import _settle_heap

        before = gc.get_freeze_count()
        _settle_heap()
        print(json.dumps([before, gc.get_freeze_count(), gc.get_count()[0]]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    before, frozen, young = json.loads(done.stdout)
    # Python 3.12 starts with a few hundred objects in the permanent generation.
    assert before < 1_000
    assert frozen - before > 10_000  # the modules, classes and schemas loaded so far
    assert young < 100


async def test_server_instructions_carry_the_notice(evidence_root: Path) -> None:
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        assert client.server_info is not None
        assert client.server_info.name == "notanda-mcp"
        assert client.server_info.version == metadata.version("notanda-mcp")
        assert NOTICE in (client.instructions or "")


async def test_unknown_tool_is_a_protocol_error_without_a_record(evidence_root: Path) -> None:
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider)
    async with open_session(server, "legacy") as client:
        with pytest.raises(MCPError):
            await client.session.call_tool("delete_everything", {"query": "x"})
    assert record_ids(evidence_root) == []
    assert provider.requests == []


# ------------------------------------------------------ search and retrieval


async def test_a_retrieved_answer_is_encoded_as_parsed_json_without_a_second_walk(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from notanda_evidence import verify_file

    server = make_server(evidence_root, FakeOpenAlex())
    walked: list[object] = []
    check = verify_file.check_json_value

    def spy(value: object, limit: int = verify_file.MAX_JSON_DEPTH) -> None:
        walked.append(value)
        check(value, limit)

    async with open_session(server, "legacy") as client:
        found = await search(client, limit=3)
        monkeypatch.setattr(verify_file, "check_json_value", spy)
        got = await call(client, "get_evidence", {"evidence_id": found["evidence_id"]})
    assert got.is_error is False
    texts = [value for value in walked if isinstance(value, verify_file.ParsedJSON)]
    assert [value.value for value in texts] == [got.structured_content]
    assert texts[0].max_depth == verify_file.MAX_JSON_DEPTH
    assert text_of(got) == verify_file.canonical_text(got.structured_content)


@pytest.mark.parametrize("kind", SESSIONS)
async def test_search_then_retrieve_on_every_session(evidence_root: Path, kind: str) -> None:
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider)
    async with open_session(server, kind) as client:
        found = await search(client, query="reproducible research", limit=3)
        got = await call(
            client,
            "get_evidence",
            {"evidence_id": found["evidence_id"], "receipt": found["receipt"]},
        )
        bare = await call(client, "get_evidence", {"evidence_id": found["evidence_id"]})
    assert found["status"] == "ok"
    assert [w["openalex_id"] for w in found["results"]] == [
        "W7000000001",
        "W7000000002",
        "W7000000003",
    ]
    assert found["total_count"] == 10
    assert found["content_notice"] == NOTICE
    assert HEX64.fullmatch(found["receipt"])
    assert found["log_head"]["size"] == 1
    assert found["log_index"] == 0
    assert len(provider.requests) == 1
    stored = assert_sealed(evidence_root, found["evidence_id"], found["receipt"])
    assert found["head"] == f"1:{found['log_head']['root']}"
    assert {k: v for k, v in found.items() if k not in ADDED_AFTER_SEALING} == stored
    assert got.is_error is False
    assert bare.is_error is False
    assert got.structured_content == {**stored, "logged": True, "receipt": found["receipt"]}
    # The receipt is echoed only when the caller supplied it, as in 0.1.0b3.
    assert bare.structured_content == {**stored, "logged": True}
    assert len(provider.requests) == 1  # retrieval never contacts the provider


async def test_limit_5_point_0_is_the_integer_5(evidence_root: Path) -> None:
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        found = await search(client, limit=5.0)
    request = read_json(evidence_root / found["evidence_id"] / "request.json")
    assert found["limit"] == 5
    assert len(found["results"]) == 5
    assert request["limit"] == 5
    assert isinstance(request["limit"], int)


async def test_default_limit_is_five_and_filters_reach_the_provider(evidence_root: Path) -> None:
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider)
    filters = {
        "from_year": 2001,
        "to_year": 2020,
        "oa_status": ["green", "gold"],
        "types": ["article"],
        "languages": ["de"],
    }
    async with open_session(server, "modern-jsonrpc") as client:
        found = await search(client, query="glaciers?", filters=filters)
    assert len(found["results"]) == 5
    sent = provider.requests[0].url.params
    assert sent["per-page"] == "5"
    assert sent["search"] == "glaciers"  # '?' is not a wildcard: removed by query hygiene
    assert sent["filter"].split(",") == [
        "from_publication_date:2001-01-01",
        "has_doi:true",
        "is_oa:true",
        "language:de",
        "open_access.oa_status:gold|green",
        "to_publication_date:2020-12-31",
        "type:article",
    ]
    request = read_json(evidence_root / found["evidence_id"] / "request.json")
    assert request["supplied"]["query"] == "glaciers?"
    assert request["supplied"]["filters"] == filters
    assert request["effective"]["query"] == "glaciers"


# ------------------------------------------------------------ attribution


@pytest.mark.parametrize("kind", SESSIONS)
async def test_request_names_the_client_the_era_and_the_injected_provider(
    evidence_root: Path, kind: str
) -> None:
    server = make_server(evidence_root)
    info = types.Implementation(
        name="attribution-client",
        version="7.8.9",
        title="A title the record must not keep",
        website_url="https://client.example/",
    )
    async with open_session(server, kind, client_info=info) as client:
        found = await search(client)
    request = read_json(evidence_root / found["evidence_id"] / "request.json")
    era = SESSION_KINDS[kind][0]
    assert request["client"] == {"name": "attribution-client", "version": "7.8.9"}
    assert request["protocol_version"] == (HANDSHAKE_VERSION if era == "legacy" else era)
    assert request["provider_mode"] == "injected"
    assert request["tool"] == "search_literature"
    software = request["software"]
    assert set(software) == {
        "code_digest",
        "mcp",
        "notanda_core",
        "notanda_evidence",
        "notanda_mcp",
        "notanda_openalex",
        "python",
    }
    for field, dist in [
        ("mcp", "mcp"),
        ("notanda_core", "notanda"),
        ("notanda_evidence", "notanda-evidence"),
        ("notanda_mcp", "notanda-mcp"),
        ("notanda_openalex", "notanda-openalex"),
    ]:
        assert software[field] == metadata.version(dist)
    assert HEX64.fullmatch(software["code_digest"])


@pytest.mark.parametrize(
    ("client_info", "expected"),
    [
        (None, None),
        ({"name": "raw-client", "version": "0.0.1"}, {"name": "raw-client", "version": "0.0.1"}),
    ],
    ids=["without-client-info", "with-client-info"],
)
async def test_modern_request_metadata_is_the_only_source_of_client_identity(
    evidence_root: Path, client_info: dict[str, str] | None, expected: dict[str, str] | None
) -> None:
    server = make_server(evidence_root)
    meta: dict[str, Any] = {
        types.PROTOCOL_VERSION_META_KEY: MODERN_VERSION,
        types.CLIENT_CAPABILITIES_META_KEY: {},
    }
    if client_info is not None:
        meta[types.CLIENT_INFO_META_KEY] = client_info
    result = await raw_modern_call(server, "search_literature", {"query": "oceans"}, meta)
    content = result["structuredContent"]
    assert result["isError"] is False
    assert content["status"] == "ok"
    request = read_json(evidence_root / content["evidence_id"] / "request.json")
    assert request["client"] == expected
    assert request["protocol_version"] == MODERN_VERSION


@pytest.mark.parametrize(
    ("offered", "negotiated"),
    [("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"), ("1999-01-01", HANDSHAKE_VERSION)],
)
async def test_the_record_keeps_the_negotiated_handshake_version(
    evidence_root: Path, offered: str, negotiated: str
) -> None:
    server = make_server(evidence_root)
    initialize = {
        "protocolVersion": offered,
        "capabilities": {},
        "clientInfo": {"name": "old-client", "version": "0.9"},
    }
    async with raw_jsonrpc(server) as (send, receive):
        await send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize})
        hello = await receive()
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        params = {"name": "search_literature", "arguments": {"query": "old client"}}
        await send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        answer = await receive()
    assert hello["result"]["protocolVersion"] == negotiated
    content = answer["result"]["structuredContent"]
    request = read_json(evidence_root / content["evidence_id"] / "request.json")
    assert request["protocol_version"] == negotiated
    assert request["client"] == {"name": "old-client", "version": "0.9"}


# ---------------------------------------------------------------- the seam


def test_build_server_refuses_a_missing_root_and_zero_slots(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        build_server(tmp_path / "missing")
    with pytest.raises(ValueError, match="search_slots"):
        build_server(tmp_path, search_slots=0)
    assert not (tmp_path / "missing").exists()


async def test_without_an_injected_transport_records_say_network(evidence_root: Path) -> None:
    # No key: refused before any request, so this stays offline.
    server = build_server(evidence_root, config={})
    async with open_session(server, "legacy") as client:
        result = await call(client, "search_literature", {"query": "offline"})
    content = result.structured_content
    assert content is not None
    assert (content["error"], content["detail"]) == ("configuration_error", "missing_api_key")
    request = read_json(evidence_root / content["evidence_id"] / "request.json")
    assert request["provider_mode"] == "network"


async def test_an_explicit_null_receipt_is_no_receipt(evidence_root: Path) -> None:
    server = make_server(evidence_root)
    async with open_session(server, "modern-jsonrpc") as client:
        found = await search(client)
        got = await call(
            client, "get_evidence", {"evidence_id": found["evidence_id"], "receipt": None}
        )
    assert got.is_error is False
    assert got.structured_content is not None
    assert "receipt" not in got.structured_content


# ------------------------------------------------------------------ notice


async def test_every_successful_answer_carries_the_notice(evidence_root: Path) -> None:
    server = make_server(evidence_root, FakeOpenAlex(works_page([])))
    async with open_session(server, "legacy") as client:
        empty = await search(client)
        got = await call(client, "get_evidence", {"evidence_id": empty["evidence_id"]})
    assert empty["results"] == []
    assert empty["content_notice"] == NOTICE
    assert got.is_error is False
    assert got.structured_content is not None
    assert got.structured_content["content_notice"] == NOTICE


@pytest.mark.parametrize("outcome", ["ok", "error"])
@pytest.mark.parametrize("kind", ["legacy", "modern-jsonrpc"])
async def test_a_0_1_0b3_record_is_returned_with_the_notice_added(
    evidence_root: Path, outcome: str, kind: str
) -> None:
    evidence_id, receipt = write_b3_record(evidence_root, outcome=outcome)
    stored = assert_sealed(evidence_root, evidence_id, receipt)
    assert "content_notice" not in stored
    server = make_server(evidence_root)
    async with open_session(server, kind) as client:
        got = await call(client, "get_evidence", {"evidence_id": evidence_id, "receipt": receipt})
    assert got.is_error is False
    assert got.structured_content == {
        **stored,
        "content_notice": NOTICE,
        "logged": False,
        "receipt": receipt,
    }
    # The notice is added to the answer, never written into the old record.
    assert "content_notice" not in read_json(evidence_root / evidence_id / "response.json")
    assert_sealed(evidence_root, evidence_id, receipt)


# ------------------------------------------------------ real OpenAlex pages

LIST_FIXTURES = fixture_names("works_*.json")


@pytest.mark.parametrize("fixture", LIST_FIXTURES)
async def test_real_openalex_pages_give_valid_answers_equal_to_their_records(
    evidence_root: Path, fixture: str
) -> None:
    page = json.loads(fixture_bytes(fixture))
    server = make_server(evidence_root, FakeOpenAlex(fixture_page(fixture)))
    async with open_session(server, "modern-jsonrpc") as client:
        result = await call(client, "search_literature", {"query": "fixture", "limit": 10})
    found = result.structured_content
    assert found is not None
    stored = assert_sealed(evidence_root, found["evidence_id"], found["receipt"])
    assert {k: v for k, v in found.items() if k not in ADDED_AFTER_SEALING} == stored
    provider = read_json(evidence_root / found["evidence_id"] / "provider.json")
    assert provider["observed_json"]["meta"] == page["meta"]
    # The client hands over aware times; the server writes them in the record's form.
    (attempt,) = provider["attempts"]
    assert parse_timestamp(attempt["started_at"]) <= parse_timestamp(attempt["finished_at"])
    if not isinstance(page.get("results"), list):  # a group_by page: no works list
        assert result.is_error is True
        assert (found["error"], found["reason"]) == ("provider_error", "unexpected_shape")
        return
    assert result.is_error is False
    usable = [w for w in page["results"][:10] if isinstance(w, dict) and w.get("id")]
    assert len(found["results"]) + found["skipped_count"] == len(page["results"][:10])
    assert [w["openalex_id"] for w in found["results"]] == [
        w["id"].rsplit("/", 1)[-1] for w in usable
    ]
    assert found["total_count"] == page["meta"]["count"]


async def test_non_latin_titles_survive_unchanged(evidence_root: Path) -> None:
    fixture = "works_list_2025-05_sample-5_chinese-korean-titles.json"
    page = json.loads(fixture_bytes(fixture))
    server = make_server(evidence_root, FakeOpenAlex(fixture_page(fixture)))
    async with open_session(server, "legacy") as client:
        found = await search(client, limit=5)
    titles = {w["openalex_id"]: w["title"] for w in found["results"]}
    for work in page["results"]:
        short = work["id"].rsplit("/", 1)[-1]
        if work.get("title"):
            assert titles[short] == work["title"]
    assert any(ord(ch) > 0x3000 for title in titles.values() if title for ch in title)


# ---------------------------------------------------------- lone surrogates


@pytest.mark.parametrize("kind", SESSIONS)
async def test_lone_surrogates_become_replacement_characters(
    evidence_root: Path, kind: str
) -> None:
    bad = "Lone \ud800 surrogate"
    page = [synthetic_work(1, title=bad, display_name=bad)]
    page[0]["authorships"] = [{"author": {"display_name": "Ada \udfff"}}]
    server = make_server(evidence_root, FakeOpenAlex(works_page(page)))
    async with open_session(server, kind) as client:
        found = await search(client, query="surrogate \udc80 query")
    work = found["results"][0]
    assert work["title"] == "Lone \ufffd surrogate"
    assert work["authors"][0]["name"] == "Ada \ufffd"
    assert found["query"] == "surrogate \ufffd query"
    stored = assert_sealed(evidence_root, found["evidence_id"], found["receipt"])
    assert stored["results"][0]["title"] == "Lone \ufffd surrogate"
    request = read_json(evidence_root / found["evidence_id"] / "request.json")
    assert request["supplied"]["query"] == "surrogate \ufffd query"
    raw = (evidence_root / found["evidence_id"] / "response.json").read_bytes()
    assert "\ufffd".encode() in raw


async def test_author_without_a_name_is_a_valid_answer(evidence_root: Path) -> None:
    work = synthetic_work(1)
    work["authorships"] = [{"author": {"id": None}}, {"raw_author_name": "Fallback Name"}]
    server = make_server(evidence_root, FakeOpenAlex(works_page([work])))
    async with open_session(server, "legacy") as client:
        found = await search(client)  # the SDK client rejects an answer off the outputSchema
    assert [a["name"] for a in found["results"][0]["authors"]] == [None, "Fallback Name"]
