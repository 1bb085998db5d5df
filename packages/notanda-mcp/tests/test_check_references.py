"""``check_references`` as a client sees it, in memory: answers, records, refusals, progress."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import (
    HEX32,
    NOTICE,
    SESSIONS,
    assert_sealed,
    call,
    logged_receipts,
    make_server,
    open_session,
    read_json,
    record_ids,
)
from fake_openalex import FakeOpenAlex, bibliography, status_response
from notanda_evidence import Code, verify_record
from notanda_evidence.verify_file import (
    Outcome,
    canonical_bytes,
    parse_canonical,
    parse_timestamp,
)
from notanda_openalex._vocabulary import CHECKED_REFERENCE_KEYS

pytestmark = pytest.mark.anyio

REFERENCES = "references"
#: Four references: a correct one by DOI, a real DOI with another title, a correct one
#: by title only, and one OpenAlex does not hold.
BIBTEX = r"""
@article{lovelace, title={Sketch of the {A}nalytical Engine}, author={Lovelace, Ada and
  Babbage, Charles}, year={2021}, journal={Journal of Tests}, doi={10.5555/notanda.test.1}}
@article{noether, title={Variant invariant problems of the calculus}, author={Noether, Emmy},
  year={2022}, journal={Journal of Tests}, doi={https://doi.org/10.5555/NOTANDA.TEST.2}}
@article{turing, title={On computable numbers, with an application to the
  Entscheidungsproblem}, author={Turing, Alan}, year={2023}, journal={Journal of Tests}}
@article{ghost, title={A treatise nobody ever wrote about imaginary engines},
  author={Nobody, Ann}, year={2019}}
"""
#: Every entry holds every key a checked reference has (``CHECKED_REFERENCE_KEYS``).
ENTRY_KEYS = set(CHECKED_REFERENCE_KEYS)


def checker(root: Path, provider: FakeOpenAlex | None = None, **kwargs: Any) -> Any:
    return make_server(
        root, provider or FakeOpenAlex(bibliography()), toolsets=("references",), **kwargs
    )


async def check(client: Any, text: str, **arguments: Any) -> tuple[dict[str, Any], bool]:
    result = await call(client, "check_references", {REFERENCES: text, **arguments})
    assert result.structured_content is not None
    return result.structured_content, bool(result.is_error)


@pytest.mark.parametrize("kind", SESSIONS)
async def test_a_bibliography_is_checked_into_one_sealed_record(
    evidence_root: Path, kind: str
) -> None:
    provider = FakeOpenAlex(bibliography())
    async with open_session(checker(evidence_root, provider), kind) as client:
        answer, failed = await check(client, BIBTEX)
    assert failed is False
    assert answer["status"] == "ok"
    assert answer["content_notice"] == NOTICE
    verdicts = [(e["key"], e["verdict"], e["differs"]) for e in answer[REFERENCES]]
    assert verdicts == [
        ("lovelace", "verified", []),
        ("noether", "metadata_mismatch", ["title"]),
        ("turing", "verified", []),
        ("ghost", "not_found", []),
    ]
    assert [e["index"] for e in answer[REFERENCES]] == [0, 1, 2, 3]
    assert all(set(entry) == ENTRY_KEYS for entry in answer[REFERENCES])
    assert answer["summary"] == {
        "verified": 2, "metadata_mismatch": 1, "not_found": 1, "ambiguous": 0,
        "unchecked": 0, "unparsed": 0,
    }  # fmt: skip
    # One record for the whole check, logged: exactly what was answered.
    assert record_ids(evidence_root) == [answer["evidence_id"]]
    stored = assert_sealed(evidence_root, answer["evidence_id"], answer["receipt"])
    added = {"receipt", "log_head", "head", "log_index"}
    assert {k: v for k, v in answer.items() if k not in added} == stored
    request = read_json(evidence_root / answer["evidence_id"] / "request.json")
    assert request["tool"] == "check_references"
    assert request["text_bytes"] == len(BIBTEX.encode())
    assert [r["key"] for r in request["parsed"][REFERENCES]] == [
        "lovelace", "noether", "turing", "ghost",
    ]  # fmt: skip
    assert request["limits"]["max_references"] == 100
    # Every matched work is in the attempt it points to, and the attempts are the requests.
    provider_record = read_json(evidence_root / answer["evidence_id"] / "provider.json")
    attempts = provider_record["attempts"]
    assert len(attempts) == len(provider.requests)
    assert next(a["purpose"] for a in attempts) == "doi_batch"
    for attempt in attempts:  # the server formats the client's aware times, in the record's form
        assert parse_timestamp(attempt["started_at"]) <= parse_timestamp(attempt["finished_at"])
    for entry in answer[REFERENCES]:
        if entry["work"] is not None:
            body = attempts[entry["observation"]]["observed_json"]
            assert entry["work"]["openalex_id"] in {
                r["id"].rsplit("/", 1)[1] for r in body["results"]
            }
    for request_sent in provider.requests:
        assert "is_oa" not in str(request_sent.url)
        assert "has_doi" not in str(request_sent.url)


async def test_get_evidence_with_the_receipt_returns_the_stored_check(
    evidence_root: Path,
) -> None:
    provider = FakeOpenAlex(bibliography())
    async with open_session(checker(evidence_root, provider), "legacy") as client:
        answer, _ = await check(client, BIBTEX)
        sent = len(provider.requests)
        got = await call(
            client,
            "get_evidence",
            {"evidence_id": answer["evidence_id"], "receipt": answer["receipt"]},
        )
        other = "0" * 64
        wrong = await call(
            client, "get_evidence", {"evidence_id": answer["evidence_id"], "receipt": other}
        )
    assert got.is_error is False
    assert got.structured_content is not None
    stored = read_json(evidence_root / answer["evidence_id"] / "response.json")
    assert got.structured_content == {**stored, "logged": True, "receipt": answer["receipt"]}
    assert got.structured_content["summary"] == answer["summary"]
    assert got.structured_content[REFERENCES] == answer[REFERENCES]
    assert len(provider.requests) == sent  # retrieval never contacts the provider
    # The receipt is checked, not echoed: another one is refused.
    assert wrong.is_error is True
    assert wrong.structured_content is not None
    assert wrong.structured_content["status"] == "error"
    assert wrong.structured_content["error"] == "receipt_mismatch"
    assert REFERENCES not in wrong.structured_content


async def test_editing_a_verdict_is_detected_and_so_is_a_resealed_observation(
    evidence_root: Path,
) -> None:
    async with open_session(checker(evidence_root), "legacy") as client:
        answer, _ = await check(client, BIBTEX)
    folder = evidence_root / answer["evidence_id"]
    response = folder / "response.json"
    response.write_bytes(response.read_bytes().replace(b"metadata_mismatch", b"verified", 1))
    result = verify_record(folder, answer["receipt"], full=True)
    assert result.outcome is Outcome.INTEGRITY_FAILURE
    assert Code.PAYLOAD_SIZE_MISMATCH in {f.code for f in result.findings}


async def test_a_work_moved_to_another_attempt_fails_the_full_pass(evidence_root: Path) -> None:
    async with open_session(checker(evidence_root), "legacy") as client:
        answer, _ = await check(client, BIBTEX)
    folder = evidence_root / answer["evidence_id"]
    value, _ = parse_canonical((folder / "response.json").read_bytes())
    turing = value[REFERENCES][2]
    assert turing["observation"] != 0
    turing["observation"] = 0  # the DOI batch, which never returned Turing's work
    (folder / "response.json").write_bytes(canonical_bytes(value))
    # Reseal by hand, as someone who rewrites the record would.
    manifest = json.loads((folder / "manifest.json").read_bytes())
    data = (folder / "response.json").read_bytes()
    manifest["files"]["response.json"] = {
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    (folder / "manifest.json").write_bytes(canonical_bytes(manifest))
    assert verify_record(folder).outcome is Outcome.OK
    full = verify_record(folder, full=True)
    assert [f.code for f in full.findings] == [Code.OBSERVATION_WORK_MISSING]


@pytest.mark.parametrize(
    ("arguments", "field", "reason"),
    [
        ({REFERENCES: "   \n\t"}, "references", "empty"),
        ({REFERENCES: "x" * 262_145}, "references", "too_long"),
        ({REFERENCES: "10.1000/a", "format": "endnote"}, "format", "invalid_value"),
        ({REFERENCES: "\n".join(f"10.1000/{n}" for n in range(101))}, "references", "too_many"),
    ],
    ids=["empty", "too-large", "unknown-format", "too-many"],
)
async def test_the_server_refuses_size_empty_and_format_with_a_record_and_nothing_sent(
    evidence_root: Path, arguments: dict[str, Any], field: str, reason: str
) -> None:
    provider = FakeOpenAlex(bibliography())
    async with open_session(checker(evidence_root, provider), "legacy") as client:
        result = await call(client, "check_references", arguments)
    answer = result.structured_content
    assert answer is not None
    assert result.is_error is True
    assert (answer["error"], answer["field"], answer["reason"]) == (
        "invalid_arguments",
        field,
        reason,
    )
    assert HEX32.fullmatch(answer["evidence_id"])
    stored = assert_sealed(evidence_root, answer["evidence_id"], answer["receipt"])
    assert stored["status"] == "error"
    assert provider.requests == []
    recorded = read_json(evidence_root / answer["evidence_id"] / "provider.json")
    assert recorded["attempts"] == []


async def test_a_failing_provider_leaves_references_unchecked_never_not_found(
    evidence_root: Path,
) -> None:
    provider = FakeOpenAlex(status_response(500))
    async with open_session(checker(evidence_root, provider), "legacy") as client:
        answer, failed = await check(client, BIBTEX)
    assert failed is False  # the check ran: its verdicts say what happened
    assert {e["verdict"] for e in answer[REFERENCES]} == {"unchecked"}
    assert {e["error"] for e in answer[REFERENCES]} == {"http_error"}
    assert_sealed(evidence_root, answer["evidence_id"], answer["receipt"])


async def test_without_a_key_the_check_fails_as_a_whole_with_its_record(
    evidence_root: Path,
) -> None:
    provider = FakeOpenAlex(bibliography())
    server = make_server(evidence_root, provider, key=None, toolsets=("references",))
    async with open_session(server, "legacy") as client:
        answer, failed = await check(client, BIBTEX)
    assert failed is True
    assert (answer["error"], answer["detail"]) == ("configuration_error", "missing_api_key")
    assert_sealed(evidence_root, answer["evidence_id"], answer["receipt"])
    assert provider.requests == []


async def test_progress_is_reported_per_reference_when_asked(evidence_root: Path) -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with open_session(checker(evidence_root), "legacy") as client:
        result = await client.call_tool(
            "check_references", {REFERENCES: BIBTEX}, progress_callback=on_progress
        )
    assert result.is_error is False
    assert seen
    assert seen[-1] == (4.0, 4.0)
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)


async def test_a_check_occupies_a_search_slot_and_get_evidence_is_answered_meanwhile(
    evidence_root: Path,
) -> None:
    provider = FakeOpenAlex(bibliography(), delay_s=0.3)
    server = checker(evidence_root, provider, search_slots=1)
    async with open_session(server, "legacy") as client:
        first, _ = await check(client, "10.5555/notanda.test.1\n")
        answers: dict[str, Any] = {}

        async def run_check() -> None:
            answers["check"], _ = await check(client, BIBTEX)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run_check)
            await anyio.sleep(0.2)
            got = await call(client, "get_evidence", {"evidence_id": first["evidence_id"]})
            assert got.structured_content is not None
            answers["retrieval"] = got.structured_content
            assert "check" not in answers  # answered while the check ran
    assert answers["retrieval"]["status"] == "ok"
    assert answers["retrieval"][REFERENCES][0]["verdict"] == "verified"
    assert answers["check"]["status"] == "ok"


def test_build_server_refuses_bad_check_settings(evidence_root: Path) -> None:
    with pytest.raises(ValueError, match="check_concurrency"):
        make_server(evidence_root, check_concurrency=0)
    with pytest.raises(ValueError, match="check_deadline_s"):
        make_server(evidence_root, check_deadline_s=0)


#: Eight title lookups: twice the requests one check keeps in flight.
EIGHT_TITLES = "\n".join(f"Nobody, A. (2020). An unknown study number {n}." for n in range(8))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["legacy", "modern-jsonrpc"])
async def test_a_cancelled_check_stops_early_and_still_seals_its_record(
    evidence_root: Path, kind: str
) -> None:
    provider = FakeOpenAlex(bibliography(), delay_s=1.0)
    async with open_session(checker(evidence_root, provider), kind) as client:
        await client.list_tools()
        scope = anyio.CancelScope()

        async def run_check() -> None:
            with scope:
                await client.call_tool("check_references", {REFERENCES: EIGHT_TITLES})

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run_check)
            # Cancel once the first four requests are in flight (each takes 1 s).
            with anyio.fail_after(10):
                while len(provider.requests) < 4:
                    await anyio.sleep(0.01)
            scope.cancel()
        assert scope.cancelled_caught
        [evidence_id] = record_ids(evidence_root)
        with anyio.fail_after(10):
            while not (receipts := logged_receipts(evidence_root, evidence_id)):
                await anyio.sleep(0.02)
        # The session still answers, tools/list too, after the cancellation.
        assert len((await client.list_tools()).tools) == 3
    response = assert_sealed(evidence_root, evidence_id, receipts[0])
    assert response["cancelled"] is True
    assert response["status"] == "ok"
    # The first four were in flight; the other four were never sent.
    assert len(provider.requests) == 4
    verdicts = [(e["verdict"], e["error"]) for e in response[REFERENCES]]
    assert verdicts[4:] == [("unchecked", "deadline_exceeded")] * 4


async def test_the_instructions_name_check_references_only_when_it_is_offered(
    evidence_root: Path,
) -> None:
    for toolsets, named in ((("search",), False), (("references",), True)):
        server = make_server(evidence_root, toolsets=toolsets)
        async with open_session(server, "legacy") as client:
            instructions = client.instructions or ""
        assert NOTICE in instructions
        assert ("check_references" in instructions) is named


@pytest.mark.timeout(30)
async def test_a_check_with_no_free_slot_in_its_deadline_is_server_busy_with_a_record(
    evidence_root: Path,
) -> None:
    provider = FakeOpenAlex(bibliography(), delay_s=1.5)
    server = checker(evidence_root, provider, search_slots=1, check_deadline_s=0.3)
    async with open_session(server, "legacy") as client:
        answers: dict[str, Any] = {}

        async def slow_search() -> None:
            answers["search"] = await call(client, "search_literature", {"query": "slow one"})

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(slow_search)
            with anyio.fail_after(10):
                while not provider.requests:  # the search holds the only slot
                    await anyio.sleep(0.01)
            answers["check"], failed = await check(client, BIBTEX)
    assert failed is True
    assert (answers["check"]["error"], answers["check"]["reason"]) == (
        "server_busy",
        "no_search_slot_before_deadline",
    )
    stored = assert_sealed(evidence_root, answers["check"]["evidence_id"])
    assert stored["error"] == "server_busy"
    recorded = read_json(evidence_root / answers["check"]["evidence_id"] / "provider.json")
    assert recorded["attempts"] == []
    assert recorded["max_attempts"] == 5  # one DOI batch, a title lookup per reference
    assert len(provider.requests) == 1


@pytest.mark.parametrize(
    "text",
    [
        "\ufeff" + BIBTEX,
        "\ufeffTY  - JOUR\nTI  - Sketch of the Analytical Engine\nAU  - Lovelace, Ada\n"
        "AU  - Babbage, Charles\nPY  - 2021\nJO  - Journal of Tests\n"
        "DO  - 10.5555/notanda.test.1\nER  - \n",
    ],
    ids=["bibtex", "ris"],
)
async def test_a_byte_order_mark_is_ignored_by_the_tool(evidence_root: Path, text: str) -> None:
    async with open_session(checker(evidence_root), "legacy") as client:
        answer, failed = await check(client, text)
    assert failed is False
    assert answer[REFERENCES][0]["verdict"] == "verified"
    stored = read_json(evidence_root / answer["evidence_id"] / "request.json")
    first = len(text) - len(text.lstrip("\ufeff \n"))
    assert stored["parsed"]["references"][0]["line"] == 1 + text.count("\n", 0, first)


async def test_string_definitions_never_count_toward_the_tool_limit(evidence_root: Path) -> None:
    # The ACM template defines more @string macros than one check takes references.
    strings = "".join(f'@string{{m{n} = "Journal {n}"}}\n' for n in range(150))
    async with open_session(checker(evidence_root), "legacy") as client:
        answer, failed = await check(client, strings + BIBTEX)
    assert failed is False
    assert [e["key"] for e in answer[REFERENCES]] == ["lovelace", "noether", "turing", "ghost"]
