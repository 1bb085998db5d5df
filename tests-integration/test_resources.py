"""Evidence as MCP resources over real stdio, against the installed wheels, in both eras.

An SDK client lists and pages through the resources, reads a record and the
head, and follows a search answer's ``resource_link``; raw JSON-RPC shows the
error codes of a tampered and an unknown record, and a read answered while a
search is held at the provider (released by the test, never timed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness import MODERN, RawSession, launcher_argv, sdk_client, seal_search_record, session

ERAS = ("legacy", MODERN)
HEAD_URI = "notanda://log/head"


def _contents(result: dict[str, Any], uri: str) -> Any:
    (contents,) = result["contents"]
    assert contents["uri"] == uri
    assert contents["mimeType"] == "application/json"
    return json.loads(contents["text"])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("era", ERAS)
def test_list_page_read_and_follow_a_link(root: Path, era: str, tmp_path: Path) -> None:
    import mcp_types as types

    made = [seal_search_record(root, f"sealed {number}") for number in range(50)]

    async def scenario() -> None:
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with sdk_client(root, era, errlog) as client:
                answer = await client.call_tool("search_literature", {"query": "linked"})
                assert answer.is_error is False
                _, link = answer.content
                assert isinstance(link, types.ResourceLink)
                assert link.uri == f"notanda://evidence/{answer.structured_content['evidence_id']}"
                read = await client.read_resource(link.uri, cache_mode="bypass")
                retrieved = await client.call_tool(
                    "get_evidence", {"evidence_id": answer.structured_content["evidence_id"]}
                )
                first = await client.list_resources(cache_mode="bypass")
                assert first.next_cursor is not None
                second = await client.list_resources(cursor=first.next_cursor, cache_mode="bypass")
                head = await client.read_resource(HEAD_URI, cache_mode="bypass")
        (contents,) = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert json.loads(contents.text) == retrieved.structured_content
        listed = [r.uri for r in first.resources + second.resources]
        expected = [link.uri] + [f"notanda://evidence/{i}" for i in reversed(made)]
        assert listed == [HEAD_URI, *expected]
        assert second.next_cursor is None
        assert first.resources[1].name.startswith("search: linked (")
        (head_contents,) = head.contents
        assert isinstance(head_contents, types.TextResourceContents)
        assert json.loads(head_contents.text)["size"] == 51
        if era == MODERN:
            assert (read.ttl_ms, read.cache_scope) == (86_400_000, "private")
            assert (head.ttl_ms, first.ttl_ms) == (0, 0)

    anyio.run(scenario)


@pytest.mark.parametrize("era", ERAS)
def test_a_tampered_record_and_an_unknown_id_give_their_codes(root: Path, era: str) -> None:
    tampered = seal_search_record(root, "tampered")
    response = root / tampered / "response.json"
    response.write_bytes(response.read_bytes().replace(b'"ok"', b'"OK"'))
    with session(root, era=era) as raw:
        failed = raw.request("resources/read", {"uri": f"notanda://evidence/{tampered}"})
        unknown = raw.request("resources/read", {"uri": "notanda://evidence/" + "0" * 32})
    assert failed["error"]["data"]["error"] == "integrity_failure"
    assert failed["error"]["data"]["evidence_id"] == tampered
    assert unknown["error"]["data"]["error"] == "not_found"
    for answer in (failed, unknown):
        assert answer["error"]["data"]["remedy"].strip()
        assert "result" not in answer


@pytest.mark.timeout(120)
@pytest.mark.parametrize("era", ERAS)
def test_a_read_during_a_held_search_is_answered(root: Path, era: str, tmp_path: Path) -> None:
    known = seal_search_record(root, "known")
    hold = tmp_path / "release"
    entered = Path(f"{hold}.entered")
    with RawSession(launcher_argv(root, "--hold-file", str(hold)), era=era) as raw:
        raw.start()
        searching = raw.send_call("search_literature", {"query": "held"})
        while not entered.exists():
            assert raw.proc.poll() is None, raw.stderr
            time.sleep(0.01)
        read = raw.request("resources/read", {"uri": f"notanda://evidence/{known}"})
        listed = raw.request("resources/list")
        held = not raw.answered(searching)
        hold.touch()
        answer = raw.wait(searching)
        assert raw.close() == 0
    assert held, "the search was answered before it was released"
    assert _contents(read["result"], f"notanda://evidence/{known}")["evidence_id"] == known
    assert f"notanda://evidence/{known}" in [r["uri"] for r in listed["result"]["resources"]]
    assert not answer["result"].get("isError")
    assert [item["type"] for item in answer["result"]["content"]] == ["text", "resource_link"]
