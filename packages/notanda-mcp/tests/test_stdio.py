"""The real server over real stdio, in a second process, on both protocol eras.

``stdio_launcher.py`` serves through ``build_server`` with a fake provider.
Sessions use the SDK's ``stdio_client``; the shutdown tests drive the process
with raw JSON-RPC lines so that they control stdin and signals exactly.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import (
    CLIENT_INFO,
    ERAS,
    HANDSHAKE_VERSION,
    HOLD_S,
    KEY,
    MODERN_VERSION,
    assert_added_when_answering,
    assert_sealed,
    assert_valid_output,
    at_the_gate,
    call,
    clean_env,
    disallowed_stderr_lines,
    launcher_command,
    launcher_params,
    logged_receipts,
    read_json,
    record_ids,
    seal_record,
)
from fake_openalex import FileGate
from mcp import Client
from mcp.client.stdio import stdio_client
from notanda_evidence import Outcome, open_record
from notanda_mcp._stdin import MAX_LINE_BYTES

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@asynccontextmanager
async def stdio_session(root: Path, mode: str, errlog: Any, *args: str) -> AsyncIterator[Client]:
    params = launcher_params(root, *args, cwd=root.parent)
    async with Client(
        stdio_client(params, errlog=errlog),
        mode=mode,
        client_info=CLIENT_INFO,
        read_timeout_seconds=30,
    ) as client:
        yield client


def _other(era: str) -> str:
    return MODERN_VERSION if era == "legacy" else "legacy"


@pytest.mark.parametrize("first", ERAS)
async def test_a_new_process_retrieves_the_first_process_record(
    evidence_root: Path, errlog: Any, first: str
) -> None:
    async with stdio_session(evidence_root, first, errlog, "--log-level", "info") as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        found_result = await call(client, "search_literature", {"query": "restart", "limit": 2})
    found = found_result.structured_content
    assert found is not None
    assert tools == ["get_evidence", "search_literature"]
    assert found_result.is_error is False
    assert len(found["results"]) == 2
    evidence_id, receipt = found["evidence_id"], found["receipt"]
    request = read_json(evidence_root / evidence_id / "request.json")
    assert request["client"] == {"name": CLIENT_INFO.name, "version": CLIENT_INFO.version}
    assert request["protocol_version"] == (HANDSHAKE_VERSION if first == "legacy" else first)
    assert request["provider_mode"] == "injected"
    log_before = (evidence_root / ".notanda" / "log.jsonl").read_bytes()

    second = _other(first)
    async with stdio_session(evidence_root, second, errlog, "--log-level", "info") as client:
        with_receipt = await call(
            client, "get_evidence", {"evidence_id": evidence_id, "receipt": receipt}
        )
        without = await call(client, "get_evidence", {"evidence_id": evidence_id})
        wrong = await call(
            client, "get_evidence", {"evidence_id": evidence_id, "receipt": "0" * 64}
        )
        upper = await call(
            client, "get_evidence", {"evidence_id": evidence_id, "receipt": receipt.upper()}
        )

    stored = assert_sealed(evidence_root, evidence_id, receipt)
    assert with_receipt.is_error is False
    assert with_receipt.structured_content == {**stored, "logged": True, "receipt": receipt}
    assert without.is_error is False
    assert without.structured_content == {**stored, "logged": True}
    mismatch = {"error": "receipt_mismatch", "evidence_id": evidence_id, "status": "error"}
    malformed = {
        "detail": "64 characters with uppercase letters; a receipt is 64 lowercase hex digits:"
        " copy it as the search returned it",
        "reason": "receipt_malformed",
    }
    for refused, expected in ((wrong, mismatch), (upper, {**mismatch, **malformed})):
        assert refused.is_error is True
        assert refused.structured_content == expected
    # Retrieval wrote nothing: no new record, the log unchanged.
    assert record_ids(evidence_root) == [evidence_id]
    assert (evidence_root / ".notanda" / "log.jsonl").read_bytes() == log_before
    errlog.flush()
    text = Path(errlog.name).read_text(encoding="utf-8")
    assert f"search {evidence_id} sealed: ok" in text
    assert f"retrieval {evidence_id}: ok" in text
    assert disallowed_stderr_lines(text) == []


@pytest.mark.parametrize("era", ERAS)
async def test_ping_and_retrieval_are_answered_while_a_search_waits(
    evidence_root: Path, errlog: Any, tmp_path: Path, era: str
) -> None:
    # The child's provider holds the search at a gate of files that this test
    # opens only after the others were answered: shown by order, not a clock.
    known_id, known_receipt = seal_record(evidence_root)
    hold = tmp_path / "release"
    gate = FileGate(hold)
    answered: list[str] = []
    async with stdio_session(evidence_root, era, errlog, "--hold-file", str(hold)) as client:
        await client.list_tools()

        async def search() -> None:
            result = await call(client, "search_literature", {"query": "slow"})
            assert result.is_error is False
            answered.append("search")

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(search)
            await at_the_gate(gate.has_arrived)
            with anyio.fail_after(HOLD_S):
                if era == "legacy":
                    await client.session.send_ping()
                    answered.append("ping")
                await call(
                    client, "get_evidence", {"evidence_id": known_id, "receipt": known_receipt}
                )
                answered.append("get_evidence")
            assert "search" not in answered  # still held: the others did not wait for it
            gate.set()
    assert answered == [*(["ping"] if era == "legacy" else []), "get_evidence", "search"]


async def test_a_lone_surrogate_from_the_provider_does_not_kill_the_server(
    evidence_root: Path, errlog: Any
) -> None:
    async with stdio_session(
        evidence_root, MODERN_VERSION, errlog, "--provider", "surrogate"
    ) as client:
        first = await call(client, "search_literature", {"query": "surrogates"})
        second = await call(client, "search_literature", {"query": "still alive"})
    for result in (first, second):
        assert result.is_error is False
        assert result.structured_content is not None
        assert result.structured_content["results"][0]["title"] == "Lone \ufffd surrogate"
    assert first.structured_content is not None
    evidence_id = first.structured_content["evidence_id"]
    stored = assert_sealed(evidence_root, evidence_id, first.structured_content["receipt"])
    assert stored["results"][0]["title"] == "Lone \ufffd surrogate"
    raw = (evidence_root / evidence_id / "provider.json").read_bytes()
    assert "Lone \ufffd surrogate".encode() in raw


# ------------------------------------------------------------ shutdown

INIT = {
    "protocolVersion": HANDSHAKE_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "raw-client", "version": "1.0"},
}


def _gate(root: Path) -> FileGate:
    """Where a gated launcher's provider holds each search: a file beside *root*."""
    return FileGate(root.parent / "release")


def _spawn(root: Path, *args: str, gated: bool = False) -> subprocess.Popen[bytes]:
    if gated:  # for _start_search
        args = ("--hold-file", str(root.parent / "release"), *args)
    return subprocess.Popen(
        launcher_command(root, "--log-level", "info", *args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(HARVESTER_OPENALEX_API_KEY=KEY),
        cwd=root.parent,
    )


def _send(process: subprocess.Popen[bytes], *messages: dict[str, Any]) -> None:
    assert process.stdin is not None
    for message in messages:
        process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def _receive(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, "the server closed stdout"
    message: dict[str, Any] = json.loads(line)
    return message


def _search_request(request_id: int, query: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "search_literature", "arguments": {"query": query}},
    }


def _start_search(process: subprocess.Popen[bytes], root: Path) -> str:
    """Handshake, start one search, wait until it has reached the provider; return its ID.

    The process was spawned *gated*: the gate is opened as soon as the search
    arrives, so the provider's ``--delay`` runs from a point the test knows.
    """
    _send(
        process,
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _search_request(1, "in flight"),
    )
    assert _receive(process)["id"] == 0
    gate = _gate(root)
    deadline = time.monotonic() + 10
    while not gate.has_arrived():
        assert time.monotonic() < deadline, "the search never reached the provider"
        time.sleep(0.01)
    gate.set()  # the search is now waiting on the provider, for its --delay
    [evidence_id] = record_ids(root)
    return evidence_id


def _finish(process: subprocess.Popen[bytes], since: float) -> tuple[float, str]:
    process.wait(timeout=10)
    elapsed = time.monotonic() - since
    assert process.stderr is not None
    return elapsed, process.stderr.read().decode()


@pytest.mark.parametrize(("delay", "sealed"), [(1.0, True), (4.0, False)], ids=["fast", "slow"])
def test_stdin_eof_waits_at_most_the_grace_period(
    evidence_root: Path, delay: float, sealed: bool
) -> None:
    with _spawn(evidence_root, "--delay", str(delay), gated=True) as process:
        evidence_id = _start_search(process, evidence_root)
        assert process.stdin is not None
        process.stdin.close()
        elapsed, stderr = _finish(process, time.monotonic())
        assert process.returncode == 0
        assert elapsed < 3.0
        outcome = open_record(evidence_root, evidence_id).outcome
        assert outcome is (Outcome.OK if sealed else Outcome.INCOMPLETE)  # never corrupt
        if sealed:
            assert len(logged_receipts(evidence_root, evidence_id)) == 1
        else:
            assert "stopped with 1 unsealed search(es) left incomplete" in stderr
        assert disallowed_stderr_lines(stderr) == []


def test_sigterm_delivers_the_answer_in_flight_and_refuses_new_calls(evidence_root: Path) -> None:
    with _spawn(evidence_root, "--delay", "1.0", gated=True) as process:
        evidence_id = _start_search(process, evidence_root)
        since = time.monotonic()
        process.send_signal(signal.SIGTERM)  # stdin stays open
        time.sleep(0.1)
        _send(process, _search_request(2, "too late"))
        answers = {
            message["id"]: message["result"] for message in (_receive(process), _receive(process))
        }
        elapsed, stderr = _finish(process, since)
        assert process.returncode == 0
        assert elapsed < 2.5
        in_flight, refused = answers[1], answers[2]
        for answer in (in_flight, refused):
            assert_valid_output("search_literature", answer["structuredContent"])
        assert in_flight["isError"] is False
        assert in_flight["structuredContent"]["status"] == "ok"
        assert in_flight["structuredContent"]["evidence_id"] == evidence_id
        assert_sealed(evidence_root, evidence_id, in_flight["structuredContent"]["receipt"])
        assert refused["isError"] is True
        assert_added_when_answering(refused["structuredContent"])
        assert refused["structuredContent"] == {
            "error": "shutting_down",
            "persisted": False,
            "status": "error",
        }
        assert record_ids(evidence_root) == [evidence_id]  # the refused call left nothing
        assert "shutting down (SIGTERM)" in stderr
        assert disallowed_stderr_lines(stderr) == []


def test_sigterm_leaves_a_search_past_the_grace_period_incomplete(evidence_root: Path) -> None:
    with _spawn(evidence_root, "--delay", "4.0", gated=True) as process:
        evidence_id = _start_search(process, evidence_root)
        since = time.monotonic()
        process.send_signal(signal.SIGTERM)
        answer = _receive(process)
        elapsed, stderr = _finish(process, since)
        assert process.returncode == 0
        assert 1.5 < elapsed < 3.0  # the 2 s grace, then a prompt exit
        assert answer["id"] == 1
        assert answer["result"]["isError"] is True
        assert_valid_output("search_literature", answer["result"]["structuredContent"])
        assert_added_when_answering(answer["result"]["structuredContent"])
        assert answer["result"]["structuredContent"] == {
            "error": "shutting_down",
            "evidence_id": evidence_id,
            "persisted": False,
            "record_state": "incomplete",
            "status": "error",
        }
        assert open_record(evidence_root, evidence_id).outcome is Outcome.INCOMPLETE
        assert logged_receipts(evidence_root, evidence_id) == []
        assert disallowed_stderr_lines(stderr) == []


def test_a_second_signal_stops_at_once(evidence_root: Path) -> None:
    with _spawn(evidence_root, "--delay", "4.0", gated=True) as process:
        evidence_id = _start_search(process, evidence_root)
        process.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        since = time.monotonic()
        process.send_signal(signal.SIGINT)  # Ctrl-C after a first signal
        elapsed, stderr = _finish(process, since)
    assert elapsed < 1.0  # not after the 2 s grace period
    assert process.returncode == 1
    assert open_record(evidence_root, evidence_id).outcome is Outcome.INCOMPLETE
    assert disallowed_stderr_lines(stderr) == []


def test_stdin_from_dev_null_is_an_orderly_end(evidence_root: Path) -> None:
    done = subprocess.run(
        launcher_command(evidence_root),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=clean_env(HARVESTER_OPENALEX_API_KEY=KEY),
        timeout=30,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout == b""
    assert disallowed_stderr_lines(done.stderr.decode()) == []
    assert "details withheld" not in done.stderr.decode()


@pytest.mark.parametrize("ending", ["stdin-eof", "sigterm"])
def test_a_call_in_flight_at_the_end_is_answered_before_the_exit(
    evidence_root: Path, ending: str
) -> None:
    """The call is sent and the input ended at once; the answer still arrives."""
    with _spawn(evidence_root, "--delay", "0.3") as process:
        _send(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        assert _receive(process)["id"] == 0
        _send(
            process,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            _search_request(1, "answered at the end"),
        )
        assert process.stdin is not None
        if ending == "stdin-eof":
            process.stdin.close()  # every call read before the end is served
        else:
            # A call that arrives after the signal is refused: wait until it runs.
            deadline = time.monotonic() + 10
            while not record_ids(evidence_root):
                assert time.monotonic() < deadline, "the search never created its record"
                time.sleep(0.01)
            process.send_signal(signal.SIGTERM)
        answer = _receive(process)
        _, stderr = _finish(process, time.monotonic())
    assert process.returncode == 0
    assert answer["id"] == 1
    content = answer["result"]["structuredContent"]
    assert answer["result"]["isError"] is False, content
    assert content["status"] == "ok"
    assert_sealed(evidence_root, content["evidence_id"], content["receipt"])
    assert logged_receipts(evidence_root, content["evidence_id"]) == [content["receipt"]]
    assert disallowed_stderr_lines(stderr) == []


def test_a_client_that_closes_both_pipes_leaves_an_orderly_exit(evidence_root: Path) -> None:
    """The answer cannot be delivered (stdout is gone): the record is sealed, the exit is 0."""
    with _spawn(evidence_root, "--delay", "0.3", gated=True) as process:
        evidence_id = _start_search(process, evidence_root)
        assert process.stdout is not None
        assert process.stdin is not None
        process.stdout.close()
        process.stdin.close()
        _, stderr = _finish(process, time.monotonic())
    assert process.returncode == 0, stderr
    receipts = logged_receipts(evidence_root, evidence_id)
    assert len(receipts) == 1
    assert_sealed(evidence_root, evidence_id, receipts[0])
    assert "the client closed stdout before the last answers" in stderr
    assert disallowed_stderr_lines(stderr) == []


def _call_line(request_id: int, size: int) -> bytes:
    """A ``search_literature`` request line of exactly *size* bytes (newline excluded)."""
    message: dict[str, Any] = _search_request(request_id, "")
    bare = len(json.dumps(message).encode())
    message["params"]["arguments"]["query"] = "x" * (size - bare)
    line = json.dumps(message).encode()
    assert len(line) == size
    return line + b"\n"


def test_a_request_line_over_the_limit_is_refused_and_the_server_serves_on(
    evidence_root: Path,
) -> None:
    with _spawn(evidence_root) as process:
        _send(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        assert _receive(process)["id"] == 0
        _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert process.stdin is not None
        process.stdin.write(_call_line(1, MAX_LINE_BYTES + 1))
        process.stdin.write(_call_line(2, MAX_LINE_BYTES))
        process.stdin.flush()
        _send(process, _search_request(3, "still served"))
        answers = {message["id"]: message for message in [_receive(process) for _ in range(3)]}
        process.stdin.close()
        _, stderr = _finish(process, time.monotonic())
    assert answers[1] == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32600,
            "message": f"Request line too long: the limit is {MAX_LINE_BYTES} bytes",
        },
    }
    # At the limit the line is read, and the schema refuses the query's length.
    assert answers[2]["result"]["structuredContent"]["reason"] == "schema_maxLength"
    assert answers[3]["result"]["structuredContent"]["status"] == "ok"
    assert f"request line refused: over {MAX_LINE_BYTES} bytes" in stderr
    assert disallowed_stderr_lines(stderr) == []
