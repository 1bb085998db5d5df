"""Every outcome code of both tools, its ``isError`` and what it leaves on disk.

Answers are checked against the published outputSchema (``conftest.call``),
records with ``notanda_evidence.open_record``, provider traffic through the
fake transport's request list.
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import notanda_mcp._service
import pytest
from conftest import (
    FRAMED_SESSIONS,
    HEX32,
    HEX64,
    KEY,
    NOTICE,
    assert_sealed,
    call,
    logged_receipts,
    make_server,
    open_session,
    read_json,
    record_ids,
    reseal,
    seal_record,
)
from fake_openalex import FakeOpenAlex, fixture_bytes, json_response, status_response, works_page
from notanda_evidence import EvidenceStore, Outcome, Stage, canonical_bytes, open_record
from notanda_evidence import _store as evidence_store
from notanda_evidence.verify_file import receipt_problem

pytestmark = pytest.mark.anyio

SEARCH = "search_literature"
GET = "get_evidence"
#: A value that must never come back in an answer.
ECHO = "UNECHOED-7f3a"


# ------------------------------------------------- refused by the schema

SCHEMA_REFUSALS = [
    (SEARCH, {"query": 5}, "query", "schema_type"),
    (SEARCH, {"query": ["x"]}, "query", "schema_type"),
    (SEARCH, {"query": ECHO, "limit": "5"}, "limit", "schema_type"),
    (SEARCH, {"query": ECHO, "limit": True}, "limit", "schema_type"),
    (SEARCH, {"query": ECHO, "limit": 2.5}, "limit", "schema_type"),
    (SEARCH, {"query": ECHO, "limit": 0}, "limit", "schema_minimum"),
    (SEARCH, {"query": ECHO, "limit": 11}, "limit", "schema_maximum"),
    (SEARCH, {"query": ECHO + "q" * (1001 - len(ECHO))}, "query", "schema_maxLength"),
    (SEARCH, {"query": ""}, "query", "schema_minLength"),
    (SEARCH, {"limit": 3}, "query", "schema_required"),
    (SEARCH, {}, "query", "schema_required"),
    (SEARCH, {"query": "x", ECHO: 1}, "arguments", "schema_additionalProperties"),
    (SEARCH, {"query": "x", "filters": []}, "filters", "schema_type"),
    (SEARCH, {"query": "x", "filters": {ECHO: 1}}, "filters", "schema_additionalProperties"),
    (SEARCH, {"query": "x", "filters": {"from_year": 999}}, "filters.from_year", "schema_minimum"),
    (SEARCH, {"query": "x", "filters": {"to_year": "2020"}}, "filters.to_year", "schema_type"),
    (SEARCH, {"query": "x", "filters": {"oa_status": [ECHO]}}, "filters.oa_status", "schema_enum"),
    (SEARCH, {"query": "x", "filters": {"types": []}}, "filters.types", "schema_minItems"),
    (
        SEARCH,
        {"query": "x", "filters": {"languages": ["en", "en"]}},
        "filters.languages",
        "schema_uniqueItems",
    ),
    (
        SEARCH,
        {"query": "x", "filters": {"languages": ["EN"]}},
        "filters.languages",
        "schema_pattern",
    ),
    (GET, {}, "evidence_id", "schema_required"),
    (GET, {"evidence_id": 5}, "evidence_id", "schema_type"),
    (GET, {"evidence_id": ""}, "evidence_id", "schema_minLength"),
    (GET, {"evidence_id": ECHO * 20}, "evidence_id", "schema_maxLength"),
    (GET, {"evidence_id": "0" * 32, "receipt": 5}, "receipt", "schema_type"),
    (GET, {"evidence_id": "0" * 32, ECHO: "x"}, "arguments", "schema_additionalProperties"),
]


def _refusal_id(case: tuple[str, dict[str, Any], str, str]) -> str:
    return f"{case[0]}-{case[2]}-{case[3]}"


@pytest.mark.parametrize("kind", FRAMED_SESSIONS)
@pytest.mark.parametrize(
    ("tool", "arguments", "field", "reason"),
    [pytest.param(*case, id=_refusal_id(case)) for case in SCHEMA_REFUSALS],
)
async def test_schema_violations_are_refused_without_a_record(  # noqa: PLR0917
    evidence_root: Path, kind: str, tool: str, arguments: dict[str, Any], field: str, reason: str
) -> None:
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider)
    async with open_session(server, kind) as client:
        result = await call(client, tool, arguments)
    assert result.is_error is True
    assert result.structured_content == {
        "error": "invalid_arguments",
        "field": field,
        "persisted": False,
        "reason": reason,
        "status": "error",
    }
    assert ECHO not in str(result.content)  # the input is never repeated
    assert list(evidence_root.iterdir()) == []  # no record, no log
    assert provider.requests == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"query": "q" * 1000, "limit": 10},
        {"query": "q", "limit": 1},
        {"query": "q", "filters": {"from_year": 1000, "to_year": 2100}},
        {"query": "q", "filters": {}},
    ],
    ids=[
        "longest-query-largest-limit",
        "shortest-query-smallest-limit",
        "year-bounds",
        "no-filters",
    ],
)
async def test_the_published_bounds_themselves_are_accepted(
    evidence_root: Path, arguments: dict[str, Any]
) -> None:
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, SEARCH, arguments)
    assert result.is_error is False
    assert result.structured_content is not None
    assert len(result.structured_content["results"]) == arguments.get("limit", 5)


# ---------------------------------------- refused by the server's checks

SERVER_REFUSALS = [
    ({"query": " \t\n "}, "query", "empty"),
    ({"query": "???"}, "query", "empty_after_hygiene"),
    ({"query": "* ? *"}, "query", "empty_after_hygiene"),
    (
        {"query": "x", "filters": {"from_year": 2021, "to_year": 2020}},
        "filters.to_year",
        "from_after_to",
    ),
    ({"query": "x", "filters": {"languages": ["zz"]}}, "filters.languages", "unknown_language"),
]


@pytest.mark.parametrize("kind", FRAMED_SESSIONS)
@pytest.mark.parametrize(("arguments", "field", "reason"), SERVER_REFUSALS)
async def test_invalid_arguments_past_the_schema_leave_a_sealed_record(
    evidence_root: Path, kind: str, arguments: dict[str, Any], field: str, reason: str
) -> None:
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider)
    async with open_session(server, kind) as client:
        result = await call(client, SEARCH, arguments)
    content = result.structured_content
    assert content is not None
    assert result.is_error is True
    assert (content["status"], content["error"]) == ("error", "invalid_arguments")
    assert (content["field"], content["reason"]) == (field, reason)
    assert HEX64.fullmatch(content["receipt"])
    assert content["log_index"] == 0
    assert provider.requests == []
    stored = assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    assert stored["error"] == "invalid_arguments"
    folder = evidence_root / content["evidence_id"]
    request = read_json(folder / "request.json")
    assert request["supplied"]["query"] == arguments["query"]
    assert request["effective"] is None
    # The bytes of the vectors' error_invalid_arguments record: nothing was sent.
    assert (folder / "provider.json").read_bytes() == (
        b'{"attempts":[],"capture":"not_attempted","max_attempts":1,'
        b'"pagination":false,"provider":"openalex"}\n'
    )
    assert logged_receipts(evidence_root, content["evidence_id"]) == [content["receipt"]]


# ---------------------------------------------------- configuration_error


@pytest.mark.parametrize(
    ("config", "detail"),
    [
        ({}, "missing_api_key"),
        ({"HARVESTER_OPENALEX_API_KEY": "two words"}, "invalid_api_key"),
        (
            {
                "HARVESTER_OPENALEX_API_KEY": KEY,
                "HARVESTER_OPENALEX_BASE_URL": "https://openalex.attacker.example",
            },
            "endpoint_not_allowed",
        ),
    ],
    ids=["no-key", "bad-key", "redirected-endpoint"],
)
async def test_configuration_error_leaves_a_record_and_makes_no_request(
    evidence_root: Path, config: dict[str, str], detail: str
) -> None:
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider, key=None, config=config)
    async with open_session(server, "legacy") as client:
        result = await call(client, SEARCH, {"query": "no key"})
    content = result.structured_content
    assert content is not None
    assert result.is_error is True
    assert (content["error"], content["detail"]) == ("configuration_error", detail)
    assert provider.requests == []
    assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    for path in evidence_root.rglob("*"):
        if path.is_file():
            assert b"two words" not in path.read_bytes()


# ---------------------------------------------------------- provider_error


def _raising(exc: Exception) -> Any:
    def respond(request: httpx.Request) -> httpx.Response:
        raise exc

    return respond


def _fixture_status(name: str, status: int) -> Any:
    return status_response(status, fixture_bytes(name))


_THROTTLED = status_response(429, {"error": "Too many requests"}, {"Retry-After": "1"})
_BUDGET = status_response(429, {"error": "Insufficient budget"}, {"Retry-After": "7200"})
_NAN = status_response(200, b'{"meta": {"count": NaN}, "results": []}')
_REDIRECT = status_response(302, b"", {"Location": "https://elsewhere.example/works"})
PROVIDER_ERRORS = [
    ("http-400", _fixture_status("error_400_works_invalid-filter_2026-05.json", 400),
     "http_error", 400, None),
    ("http-401", _fixture_status("error_401_works_invalid-api-key_2025-11.json", 401),
     "http_error", 401, None),
    ("http-403", _fixture_status("error_403_works_invalid-filter_2025-08.json", 403),
     "http_error", 403, None),
    ("http-429-throttled", _THROTTLED, "rate_limited", 429, 1.0),
    ("http-429-budget", _BUDGET, "budget_exhausted", 429, 7200.0),
    ("http-500", status_response(500, b"oops"), "http_error", 500, None),
    ("http-503", status_response(503, {"error": "unavailable"}), "http_error", 503, None),
    ("http-504", status_response(504, b""), "http_error", 504, None),
    ("malformed-json", status_response(200, b'{"results": [}'), "malformed_json", 200, None),
    ("nan", _NAN, "malformed_json", 200, None),
    ("not-a-page", status_response(200, {"results": 5}), "unexpected_shape", 200, None),
    ("redirect", _REDIRECT, "redirect", 302, None),
    ("timeout", _raising(httpx.ReadTimeout("slow")), "timeout", None, None),
    ("transport", _raising(httpx.ConnectError("refused")), "transport_error", None, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("respond", "reason", "http_status", "retry_after"),
    [case[1:] for case in PROVIDER_ERRORS],
    ids=[case[0] for case in PROVIDER_ERRORS],
)
async def test_provider_errors_are_sealed_logged_and_flagged(
    evidence_root: Path,
    respond: Any,
    reason: str,
    http_status: int | None,
    retry_after: float | None,
) -> None:
    provider = FakeOpenAlex(respond)
    server = make_server(evidence_root, provider)
    async with open_session(server, "legacy") as client:
        result = await call(client, SEARCH, {"query": "failing provider"})
    content = result.structured_content
    assert content is not None
    assert result.is_error is True
    assert content["status"] == "error"
    assert (content["error"], content["reason"]) == ("provider_error", reason)
    assert content.get("http_status") == http_status
    assert content.get("retry_after_s") == retry_after
    assert "results" not in content
    assert len(provider.requests) == 1  # one request: no retry, no redirect followed
    stored = assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    assert stored["reason"] == reason
    assert logged_receipts(evidence_root, content["evidence_id"]) == [content["receipt"]]
    attempts = read_json(evidence_root / content["evidence_id"] / "provider.json")["attempts"]
    assert [a["http_status"] for a in attempts] == [http_status]


@pytest.mark.parametrize("kind", FRAMED_SESSIONS)
async def test_retrieving_a_stored_error_is_a_successful_retrieval(
    evidence_root: Path, kind: str
) -> None:
    server = make_server(evidence_root, FakeOpenAlex(status_response(500, b"down")))
    async with open_session(server, kind) as client:
        failed = await call(client, SEARCH, {"query": "down"})
        assert failed.structured_content is not None
        evidence_id = failed.structured_content["evidence_id"]
        receipt = failed.structured_content["receipt"]
        got = await call(client, GET, {"evidence_id": evidence_id, "receipt": receipt})
    assert failed.is_error is True
    assert got.is_error is False
    stored = assert_sealed(evidence_root, evidence_id, receipt)
    assert got.structured_content == {
        **stored,
        "content_notice": NOTICE,
        "logged": True,
        "receipt": receipt,
    }
    assert got.structured_content["status"] == "error"
    assert got.structured_content["error"] == "provider_error"


# --------------------------------------------- evidence_storage_unavailable


def _remove(root: Path) -> None:
    shutil.rmtree(root)


def _replace_with_file(root: Path) -> None:
    shutil.rmtree(root)
    root.write_text("not a folder")


@pytest.mark.parametrize(
    ("break_root", "storage_reason"),
    [(_remove, "not_found"), (_replace_with_file, "not_a_directory")],
    ids=["root-deleted", "root-replaced-by-a-file"],
)
async def test_storage_failure_before_the_record_makes_no_provider_call(
    evidence_root: Path, break_root: Any, storage_reason: str
) -> None:
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider)
    break_root(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, SEARCH, {"query": "nowhere to write"})
    assert result.is_error is True
    assert result.structured_content == {
        "error": "evidence_storage_unavailable",
        "persisted": False,
        "status": "error",
        "storage_reason": storage_reason,
    }
    assert provider.requests == []


TRIGGER = {
    "provider.json": Stage.AFTER_REQUEST,
    "response.json": Stage.AFTER_PROVIDER,
    "manifest.json": Stage.AFTER_RESPONSE,
}


@pytest.mark.parametrize("blocked", list(TRIGGER))
async def test_storage_failure_after_the_request_says_incomplete_never_success(
    evidence_root: Path, blocked: str
) -> None:
    provider = FakeOpenAlex()

    def on_stage(stage: Stage, evidence_id: str) -> None:
        if stage is TRIGGER[blocked]:
            (evidence_root / evidence_id / f"{blocked}.pending").mkdir()

    server = make_server(evidence_root, provider, on_stage=on_stage)
    async with open_session(server, "legacy") as client:
        result = await call(client, SEARCH, {"query": "blocked write"})
        assert result.structured_content is not None
        evidence_id = result.structured_content["evidence_id"]
        later = await call(client, GET, {"evidence_id": evidence_id})
    assert result.is_error is True
    assert result.structured_content == {
        "error": "evidence_storage_unavailable",
        "evidence_id": evidence_id,
        "persisted": False,
        "record_state": "incomplete",
        "status": "error",
        "storage_reason": "exists",
    }
    assert len(provider.requests) == 1  # request.json existed, so the search ran
    assert open_record(evidence_root, evidence_id).outcome is Outcome.INCOMPLETE
    assert later.is_error is True
    assert later.structured_content == {"evidence_id": evidence_id, "status": "incomplete"}
    assert logged_receipts(evidence_root, evidence_id) == []


@pytest.mark.parametrize(
    ("failing", "code", "storage_reason"),
    [
        ("provider.json", errno.ENOSPC, "no_space"),
        ("response.json", errno.EFBIG, "file_too_large"),
        ("manifest.json", errno.EROFS, "read_only"),
    ],
)
async def test_disk_errors_after_the_request_leave_an_incomplete_record(
    evidence_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    failing: str,
    code: int,
    storage_reason: str,
) -> None:
    publish = evidence_store._RecordDir.publish

    def failing_publish(self: Any, name: str, parts: list[bytes], **kwargs: Any) -> None:
        if name == failing:
            raise OSError(code, os.strerror(code))
        publish(self, name, parts, **kwargs)

    monkeypatch.setattr(evidence_store._RecordDir, "publish", failing_publish)
    server = make_server(evidence_root)
    async with open_session(server, "modern-jsonrpc") as client:
        result = await call(client, SEARCH, {"query": "disk trouble"})
    content = result.structured_content
    assert content is not None
    assert result.is_error is True
    assert content["status"] == "error"
    assert "receipt" not in content
    assert (content["error"], content["record_state"]) == (
        "evidence_storage_unavailable",
        "incomplete",
    )
    assert content["storage_reason"] == storage_reason
    assert open_record(evidence_root, content["evidence_id"]).outcome is Outcome.INCOMPLETE


async def test_disk_error_on_the_request_file_makes_no_provider_call(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish = evidence_store._RecordDir.publish

    def failing_publish(self: Any, name: str, parts: list[bytes], **kwargs: Any) -> None:
        if name == "request.json":
            raise OSError(errno.ENOSPC, "full")
        publish(self, name, parts, **kwargs)

    monkeypatch.setattr(evidence_store._RecordDir, "publish", failing_publish)
    provider = FakeOpenAlex()
    server = make_server(evidence_root, provider)
    async with open_session(server, "legacy") as client:
        result = await call(client, SEARCH, {"query": "disk full"})
    content = result.structured_content
    assert content is not None
    assert (content["error"], content["storage_reason"]) == (
        "evidence_storage_unavailable",
        "no_space",
    )
    assert content["persisted"] is False
    assert content["record_state"] == "incomplete"
    assert provider.requests == []


# ------------------------------------------------- evidence_log_unavailable


def _log_folder_is_a_file(root: Path) -> None:
    (root / ".notanda").write_text("not a folder")


def _log_folder_is_a_link(root: Path) -> None:
    elsewhere = root.parent / "elsewhere"
    elsewhere.mkdir()
    (root / ".notanda").symlink_to(elsewhere, target_is_directory=True)


@pytest.mark.parametrize(
    ("break_log", "log_reason"),
    [(_log_folder_is_a_file, "not_a_directory"), (_log_folder_is_a_link, "symlink")],
    ids=["file", "symlink"],
)
async def test_log_failure_answers_with_the_sealed_record_and_its_receipt(
    evidence_root: Path, break_log: Any, log_reason: str
) -> None:
    break_log(evidence_root)
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, SEARCH, {"query": "unlogged"})
    content = result.structured_content
    assert content is not None
    assert result.is_error is True
    assert content == {
        "error": "evidence_log_unavailable",
        "evidence_id": content["evidence_id"],
        "log_reason": log_reason,
        "persisted": True,
        "receipt": content["receipt"],
        "status": "error",
    }
    stored = assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    assert stored["status"] == "ok"  # the search itself succeeded and stays sealed
    assert not (evidence_root.parent / "elsewhere" / "log.jsonl").exists()


async def test_retrieval_reports_an_unreadable_log_then_an_unlogged_record(
    evidence_root: Path,
) -> None:
    evidence_id, receipt = seal_record(evidence_root, log=False)
    _log_folder_is_a_file(evidence_root)
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        broken = await call(client, GET, {"evidence_id": evidence_id, "receipt": receipt})
        (evidence_root / ".notanda").unlink()
        fixed = await call(client, GET, {"evidence_id": evidence_id, "receipt": receipt})
    assert broken.is_error is True
    assert broken.structured_content == {
        "error": "evidence_log_unavailable",
        "evidence_id": evidence_id,
        "log_reason": "not_a_directory",
        "status": "error",
    }
    assert fixed.is_error is False
    assert fixed.structured_content is not None
    assert fixed.structured_content["logged"] is False


# ---------------------------------------------------------------- server_busy


@pytest.mark.timeout(30)
async def test_server_busy_when_no_slot_comes_free_before_the_deadline(
    evidence_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notanda_mcp._service, "SEARCH_DEADLINE_S", 0.6)
    provider = FakeOpenAlex(delay_s=1.2)
    server = make_server(evidence_root, provider, search_slots=1)
    answers: dict[str, Any] = {}
    async with open_session(server, "legacy") as client:
        await client.list_tools()

        async def run(name: str) -> None:
            answers[name] = await call(client, SEARCH, {"query": name})

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run, "first")
            await anyio.sleep(0.2)
            tasks.start_soon(run, "second")
    first, second = answers["first"].structured_content, answers["second"].structured_content
    assert answers["second"].is_error is True
    assert (second["error"], second["reason"]) == ("server_busy", "no_search_slot_before_deadline")
    assert_sealed(evidence_root, second["evidence_id"], second["receipt"])
    assert read_json(evidence_root / second["evidence_id"] / "provider.json")["attempts"] == []
    # The first search held the only slot and ran out of its own (shortened) deadline.
    assert answers["first"].is_error is True
    assert (first["error"], first["reason"]) == ("provider_error", "timeout")
    assert len(provider.requests) == 1


@pytest.mark.parametrize("slots", [None, 1, 3])
async def test_at_most_the_configured_number_of_searches_reach_the_provider_at_once(
    evidence_root: Path, slots: int | None
) -> None:
    in_flight = {"now": 0, "most": 0}
    inner = works_page()

    def respond(request: httpx.Request) -> httpx.Response:
        with lock:
            in_flight["now"] += 1
            in_flight["most"] = max(in_flight["most"], in_flight["now"])
        time.sleep(0.25)
        with lock:
            in_flight["now"] -= 1
        return inner(request)

    lock = threading.Lock()
    options = {} if slots is None else {"search_slots": slots}
    server = make_server(evidence_root, FakeOpenAlex(respond), **options)
    answers: list[Any] = []
    async with open_session(server, "legacy") as client:
        await client.list_tools()

        async def run(query: str) -> None:
            answers.append(await call(client, SEARCH, {"query": query}))

        async with anyio.create_task_group() as tasks:
            for number in range(4):
                tasks.start_soon(run, f"search {number}")
    assert [a.is_error for a in answers] == [False] * 4  # later searches waited for a slot
    assert in_flight["most"] == (2 if slots is None else min(slots, 4))


# ------------------------------------------------------------ get_evidence


@pytest.mark.parametrize(
    "evidence_id",
    [
        "../../../../etc/passwd",
        "..",
        ".notanda",
        "0123456789ABCDEF0123456789ABCDEF",
        "0123456789abcdef0123456789abcdef\n",
        " 0123456789abcdef0123456789abcdef",
        "0123456789abcdef0123456789abcde",
        "0123456789abcdef0123456789abcdef0",
        "0123456789abcdef0123456789abcdeg",
        "0123456789abcdef/123456789abcdef",
    ],
    ids=[
        "traversal",
        "dotdot",
        "reserved",
        "uppercase",
        "trailing-newline",
        "leading-space",
        "31-chars",
        "33-chars",
        "not-hex",
        "slash",
    ],
)
async def test_invalid_evidence_ids_are_refused_before_the_file_system(
    evidence_root: Path, evidence_id: str
) -> None:
    seal_record(evidence_root)
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, GET, {"evidence_id": evidence_id})
    assert result.is_error is True
    assert result.structured_content == {"error": "invalid_evidence_id", "status": "error"}


async def test_not_found(evidence_root: Path) -> None:
    server = make_server(evidence_root)
    missing = "0123456789abcdef0123456789abcdef"
    async with open_session(server, "modern-jsonrpc") as client:
        result = await call(client, GET, {"evidence_id": missing, "receipt": "a" * 64})
    assert result.is_error is True
    assert result.structured_content == {
        "error": "not_found",
        "evidence_id": missing,
        "status": "error",
    }


async def test_incomplete(evidence_root: Path) -> None:
    writer = EvidenceStore(evidence_root).create()
    writer.write_request({"evidence_id": writer.evidence_id, "schema_version": 1})
    writer.close()
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, GET, {"evidence_id": writer.evidence_id})
    assert result.is_error is True
    assert result.structured_content == {"evidence_id": writer.evidence_id, "status": "incomplete"}


def _flip_byte(folder: Path) -> None:
    path = folder / "response.json"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01
    path.write_bytes(bytes(data))


def _future_schema(folder: Path) -> None:
    manifest = read_json(folder / "manifest.json")
    manifest["schema_version"] = 2
    (folder / "manifest.json").write_bytes(canonical_bytes(manifest))


def _stray_file(folder: Path) -> None:
    (folder / "notes.txt").write_text("added later")


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (_flip_byte, "integrity_failure"),
        (_stray_file, "integrity_failure"),
        (_future_schema, "unsupported_schema_version"),
    ],
    ids=["flipped-byte", "stray-file", "schema-version-2"],
)
async def test_damaged_records_fail_closed(evidence_root: Path, damage: Any, expected: str) -> None:
    evidence_id, _ = seal_record(evidence_root)
    damage(evidence_root / evidence_id)
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, GET, {"evidence_id": evidence_id})
    assert result.is_error is True
    assert result.structured_content == {
        "error": expected,
        "evidence_id": evidence_id,
        "status": "error",
    }


@pytest.mark.parametrize(
    "wrong",
    [
        lambda receipt: receipt.upper(),
        lambda receipt: receipt[:-1] + ("0" if receipt[-1] != "0" else "1"),
        lambda receipt: receipt + "\n",
        lambda receipt: "",
        lambda receipt: "not a receipt",
    ],
    ids=["uppercase", "other-hex", "trailing-newline", "empty", "garbage"],
)
async def test_receipt_mismatch(evidence_root: Path, wrong: Any) -> None:
    evidence_id, receipt = seal_record(evidence_root)
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, GET, {"evidence_id": evidence_id, "receipt": wrong(receipt)})
    assert result.is_error is True
    expected = {"error": "receipt_mismatch", "evidence_id": evidence_id, "status": "error"}
    given = wrong(receipt)
    if len(given) != 64 or given != given.lower():
        # Not a receipt at all: said so, against what a receipt is (issue 22).
        expected["reason"] = "receipt_malformed"
        expected["detail"] = receipt_problem(given)
        assert f"{len(given)} character" in expected["detail"]
    assert result.structured_content == expected
    assert receipt not in str(result.content)


async def test_receipt_mismatch_takes_precedence_over_damage(evidence_root: Path) -> None:
    evidence_id, _receipt = seal_record(evidence_root)
    _flip_byte(evidence_root / evidence_id)
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        result = await call(client, GET, {"evidence_id": evidence_id, "receipt": "0" * 64})
    assert result.structured_content is not None
    assert result.structured_content["error"] == "receipt_mismatch"


async def test_log_mismatch_after_the_log_entry_was_edited(evidence_root: Path) -> None:
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        first = await call(client, SEARCH, {"query": "one"})
        second = await call(client, SEARCH, {"query": "two"})
    assert first.structured_content is not None
    assert second.structured_content is not None
    evidence_id, receipt = (
        first.structured_content["evidence_id"],
        first.structured_content["receipt"],
    )
    log = evidence_root / ".notanda" / "log.jsonl"
    forged = "f" * 64
    log.write_bytes(log.read_bytes().replace(receipt.encode(), forged.encode()))
    restarted = make_server(evidence_root)
    async with open_session(restarted, "modern-jsonrpc") as client:
        without = await call(client, GET, {"evidence_id": evidence_id})
        with_receipt = await call(client, GET, {"evidence_id": evidence_id, "receipt": receipt})
        other = await call(client, GET, {"evidence_id": second.structured_content["evidence_id"]})
    expected = {"error": "log_mismatch", "evidence_id": evidence_id, "status": "error"}
    assert without.is_error is True
    assert without.structured_content == expected
    assert with_receipt.is_error is True
    assert with_receipt.structured_content == expected
    assert other.is_error is False  # only the record whose entry changed fails


async def test_log_mismatch_catches_a_coordinated_replacement(evidence_root: Path) -> None:
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        found = await call(client, SEARCH, {"query": "replace me"})
        assert found.structured_content is not None
        evidence_id = found.structured_content["evidence_id"]
        # Payloads and manifest replaced together: the record verifies on its own.
        new_receipt = reseal(evidence_root / evidence_id, {"total_count": 999})
        assert_sealed(evidence_root, evidence_id, new_receipt)
        result = await call(client, GET, {"evidence_id": evidence_id})
    assert result.is_error is True
    assert result.structured_content == {
        "error": "log_mismatch",
        "evidence_id": evidence_id,
        "status": "error",
    }


async def test_a_record_absent_from_the_log_is_returned_as_not_logged(evidence_root: Path) -> None:
    evidence_id, receipt = seal_record(evidence_root, log=False)
    logged_id, _ = seal_record(evidence_root, log=True)
    server = make_server(evidence_root)
    async with open_session(server, "legacy") as client:
        unlogged = await call(client, GET, {"evidence_id": evidence_id, "receipt": receipt})
        logged = await call(client, GET, {"evidence_id": logged_id})
    assert unlogged.is_error is False
    assert logged.is_error is False
    assert unlogged.structured_content is not None
    assert logged.structured_content is not None
    assert unlogged.structured_content["logged"] is False
    assert unlogged.structured_content["receipt"] == receipt
    assert logged.structured_content["logged"] is True


async def test_a_sealed_search_whose_log_append_outlasts_the_grace_returns_its_receipt(
    evidence_root: Path,
) -> None:
    """Shutdown while the log append of a sealed record still runs: sealed, not incomplete."""
    appending, release = threading.Event(), threading.Event()

    def on_stage(stage: Stage, evidence_id: str) -> None:
        if stage is Stage.AFTER_LOG_APPEND:  # inside the append, after the seal
            appending.set()
            release.wait(30)

    server = make_server(evidence_root, on_stage=on_stage)
    answers: list[Any] = []
    try:
        async with open_session(server, "legacy") as client:

            async def search() -> None:
                answers.append(await call(client, SEARCH, {"query": "slow log"}))

            async with anyio.create_task_group() as group:
                group.start_soon(search)
                await anyio.to_thread.run_sync(appending.wait, 30)
                server.calls.close(0.05)  # the grace ends while the append is blocked
    finally:
        release.set()
    [result] = answers
    assert result.is_error is True
    content = result.structured_content
    assert content is not None
    evidence_id = content["evidence_id"]
    assert content == {
        "error": "shutting_down",
        "evidence_id": evidence_id,
        "persisted": True,
        "receipt": content["receipt"],
        "record_state": "sealed",
        "status": "error",
    }
    assert_sealed(evidence_root, evidence_id, content["receipt"])


# ------------------------------------------------------------ internal_error


async def test_an_unexpected_failure_answers_without_exception_text(
    evidence_root: Path,
) -> None:
    def on_stage(stage: Stage, evidence_id: str) -> None:
        if stage is Stage.PROVIDER_WAIT:
            raise RuntimeError(f"boom with {KEY}")

    server = make_server(evidence_root, on_stage=on_stage)
    async with open_session(server, "legacy") as client:
        result = await call(client, SEARCH, {"query": "explode"})
        assert result.structured_content is not None
        evidence_id = result.structured_content["evidence_id"]
        later = await call(client, GET, {"evidence_id": evidence_id})
    assert result.is_error is True
    assert result.structured_content == {
        "error": "internal_error",
        "evidence_id": evidence_id,
        "status": "error",
    }
    assert "boom" not in str(result.content)
    assert KEY not in str(result.content)
    assert HEX32.fullmatch(evidence_id)
    assert later.structured_content == {"evidence_id": evidence_id, "status": "incomplete"}
    assert record_ids(evidence_root) == [evidence_id]


async def test_answers_never_carry_the_key(evidence_root: Path) -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        return json_response({"error": f"key {KEY} refused"}, 401, {"x-echo": KEY})

    server = make_server(evidence_root, FakeOpenAlex(respond))
    async with open_session(server, "legacy") as client:
        result = await call(client, SEARCH, {"query": "leak?"})
    assert result.is_error is True
    assert KEY not in str(result.content)
    for path in evidence_root.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes()
