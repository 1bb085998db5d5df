"""Stamping log heads with an RFC 3161 TSA: a real one (OpenSSL's) on loopback HTTP.

Searches go through an in-memory SDK session; the stamps are asked for with
``server.stamper.stamp_once()`` (the background thread's own step), so that
every test is deterministic, plus one that lets the thread do it. Nothing
waits on the clock: tests wait on the TSA's requests and on files, with
generous limits.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import (
    HANDSHAKE_VERSION,
    KEY,
    clean_env,
    disallowed_stderr_lines,
    launcher_command,
    make_server,
    open_session,
    search,
)
from notanda_evidence import DerProblem
from notanda_mcp import NotandaServer
from notanda_mcp._stamper import StampCode, check_timestamp_url, parse_every
from tsa_authority import Authorities
from tsa_checks import openssl_verifies
from tsa_http import LoopbackTSA, closed_port_url, request_digest

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TOKENS = Path(".notanda", "timestamps")


@pytest.fixture
def stamp_lines(caplog: pytest.LogCaptureFixture) -> Iterator[list[str]]:
    """The stamper's stderr lines, as the server's log gate would let them through."""
    with caplog.at_level(logging.INFO, logger="notanda_mcp"):
        lines: list[str] = []

        class Collect(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                message = record.getMessage()
                if "stamp" in message:
                    lines.append(message)

        handler = Collect()
        logging.getLogger("notanda_mcp").addHandler(handler)
        try:
            yield lines
        finally:
            logging.getLogger("notanda_mcp").removeHandler(handler)


def _server(root: Path, url: str, **kwargs: Any) -> NotandaServer:
    kwargs.setdefault("timestamp_every", 300)
    return make_server(root, timestamp_url=url, **kwargs)


def _stamper(server: NotandaServer) -> Any:
    assert server.stamper is not None
    return server.stamper


def _tokens(root: Path) -> list[str]:
    folder = root / TOKENS
    return sorted(os.listdir(folder)) if folder.is_dir() else []


async def _searches(server: NotandaServer, count: int) -> list[dict[str, Any]]:
    async with open_session(server, "legacy") as client:
        return [await search(client, query=f"open science {n}") for n in range(count)]


# ------------------------------------------------------------------- settings


def _command(*args: str) -> subprocess.CompletedProcess[str]:
    """``notanda-mcp ARGS`` in a process of its own, without a key, stdin closed."""
    return subprocess.run(
        [sys.executable, "-m", "notanda_mcp", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=90,
        check=False,
    )


@pytest.mark.parametrize("text", ["1", "1.5", "300", "86400.25"])
def test_the_interval_is_a_decimal_number_of_seconds_at_least_one(text: str) -> None:
    assert parse_every(text) == float(text)


@pytest.mark.parametrize("text", ["0", "0.99", "-5", "1e3", "nan", "inf", "", " 5", "5s", "1,5"])
def test_other_intervals_are_refused_with_a_remedy(text: str) -> None:
    with pytest.raises(ValueError, match=r"give e\.g\. --timestamp-every 300"):
        parse_every(text)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://tsa.example/",
        "timestamp.digicert.com",
        "http://",
        "http://user:secret@tsa.example/",
        "http://tsa.example/#part",
    ],
)
def test_a_timestamp_url_must_name_a_tsa_and_carry_no_secret(url: str) -> None:
    with pytest.raises(ValueError, match="--timestamp-url") as raised:
        check_timestamp_url(url)
    assert "secret" not in str(raised.value)


@pytest.mark.parametrize(
    "args",
    [
        ["--timestamp-every", "0.5"],
        ["--timestamp-every", "soon"],
        ["--timestamp-url", "ftp://tsa.example/"],
        ["--timestamp-url", "http://me:pw@tsa.example/"],
    ],
    ids=["below-one", "not-a-number", "scheme", "userinfo"],
)
def test_bad_timestamp_options_exit_2_with_one_line_and_a_remedy(
    tmp_path: Path, args: list[str]
) -> None:
    done = _command("--evidence-dir", str(tmp_path), *args)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("notanda-mcp: --timestamp-")
    assert ": give " in line
    assert "e.g. --timestamp-" in line
    assert "pw@" not in line
    assert not (tmp_path / ".notanda").exists()


def test_an_interval_without_a_tsa_exits_2_with_a_remedy(tmp_path: Path) -> None:
    # Stamping is off without --timestamp-url: the interval was once ignored in silence.
    done = _command("--evidence-dir", str(tmp_path), "--timestamp-every", "60")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("notanda-mcp: --timestamp-every needs --timestamp-url")
    assert ": give e.g. --timestamp-url " in line
    assert not (tmp_path / ".notanda").exists()


def test_the_test_seam_refuses_what_the_command_line_refuses(evidence_root: Path) -> None:
    with pytest.raises(ValueError, match="timestamp_every"):
        _server(evidence_root, "http://127.0.0.1:9/", timestamp_every=0.5)
    with pytest.raises(ValueError, match="--timestamp-url"):
        _server(evidence_root, "http://a:b@127.0.0.1:9/")
    with pytest.raises(ValueError, match="timestamp_every is given without timestamp_url"):
        make_server(evidence_root, timestamp_every=60)
    assert make_server(evidence_root).stamper is None  # off by default
    assert _server(evidence_root, "http://127.0.0.1:9/", timestamp_every=None).stamper is not None


# ------------------------------------------------------------------ stamping


async def test_search_stamp_restart_stamp_again_and_openssl_accepts_every_token(
    evidence_root: Path,
    loopback_tsa: LoopbackTSA,
    tsa: Authorities,
    tmp_path: Path,
    stamp_lines: list[str],
) -> None:
    server = _server(evidence_root, loopback_tsa.url)
    assert _stamper(server).stamp_once() is False  # nothing logged yet: nothing asked
    assert loopback_tsa.received == []
    await _searches(server, 2)
    assert _stamper(server).stamp_once() is True
    assert _stamper(server).stamp_once() is False  # nothing new since
    assert _tokens(evidence_root) == ["2.tsr"]

    restarted = _server(evidence_root, loopback_tsa.url)
    assert _stamper(restarted).stamped == 2  # the stored token counts: no second stamp of 2
    assert _stamper(restarted).stamp_once() is False
    await _searches(restarted, 1)
    assert _stamper(restarted).stamp_once() is True
    assert _tokens(evidence_root) == ["2.tsr", "3.tsr"]
    assert len(loopback_tsa.received) == 2

    for size in (2, 3):
        assert openssl_verifies(evidence_root, size, tsa.ca_pem, tmp_path), size
        assert not openssl_verifies(evidence_root, size, tsa.untrusted_ca_pem, tmp_path)
    # Each request asked for the checkpoint's SHA-256, with certReq and a fresh nonce.
    first, second = (received.body for received in loopback_tsa.received)
    assert first != second
    assert request_digest(first) != request_digest(second)
    folder = evidence_root / TOKENS
    if os.name == "posix":
        assert oct(folder.stat().st_mode & 0o777) == "0o700"
        assert {oct(p.stat().st_mode & 0o777) for p in folder.iterdir()} == {"0o600"}
    assert stamp_lines == [
        "log head 2 stamped by the time-stamp authority",
        "log head 3 stamped by the time-stamp authority",
    ]


async def test_only_the_request_travels_to_the_configured_url(
    evidence_root: Path, loopback_tsa: LoopbackTSA
) -> None:
    server = _server(evidence_root, loopback_tsa.url + "?policy=test")
    await _searches(server, 1)
    assert _stamper(server).stamp_once() is True
    [received] = loopback_tsa.received
    assert (received.method, received.path) == ("POST", "/tsa?policy=test")
    assert received.headers["content-type"] == "application/timestamp-query"
    assert set(received.headers) <= {
        "host", "accept", "accept-encoding", "connection", "user-agent",
        "content-type", "content-length",
    }  # fmt: skip
    everything = repr(received).encode() + received.body
    assert KEY.encode() not in everything
    assert b"openalex" not in everything.lower()
    assert b"authorization" not in everything.lower()


#: A faulty or hostile TSA, and the code of the one line the server logs.
FAILURES = {
    "http_500": "log head 1 not stamped: tsa_http_status (HTTP 500)",
    "redirect": "log head 1 not stamped: tsa_http_status (HTTP 302)",
    "garbage": "log head 1 not stamped: tsa_unparsable (not a DER TimeStampResp: truncated)",
    "too_large": "log head 1 not stamped: tsa_too_large",
    "refuse": "log head 1 not stamped: tsa_refused",
    "other_imprint": "log head 1 not stamped: tsa_wrong_imprint",
    "wrong_nonce": "log head 1 not stamped: tsa_wrong_nonce",
}


@pytest.mark.parametrize("mode", FAILURES)
async def test_a_bad_answer_is_one_line_with_its_code_and_is_retried(
    evidence_root: Path, loopback_tsa: LoopbackTSA, mode: str, stamp_lines: list[str]
) -> None:
    server = _server(evidence_root, loopback_tsa.url)
    await _searches(server, 1)
    loopback_tsa.mode = mode
    assert _stamper(server).stamp_once() is False
    assert _tokens(evidence_root) == []
    assert stamp_lines == [FAILURES[mode]]
    # The search path never noticed; the next interval tries again and succeeds.
    await _searches(server, 1)
    loopback_tsa.mode = "grant"
    assert _stamper(server).stamp_once() is True
    assert _tokens(evidence_root) == ["2.tsr"]
    if mode == "redirect":
        assert len(loopback_tsa.received) == 2  # the Location was never followed


async def test_a_tsa_that_is_down_is_logged_and_searches_succeed(
    evidence_root: Path, stamp_lines: list[str]
) -> None:
    server = _server(evidence_root, closed_port_url())
    await _searches(server, 1)
    assert _stamper(server).stamp_once() is False
    assert stamp_lines == ["log head 1 not stamped: tsa_unreachable"]
    assert len(await _searches(server, 2)) == 2
    assert _tokens(evidence_root) == []


async def test_a_log_that_cannot_be_read_is_one_line_and_nothing_is_asked(
    evidence_root: Path, loopback_tsa: LoopbackTSA, stamp_lines: list[str]
) -> None:
    server = _server(evidence_root, loopback_tsa.url)
    await _searches(server, 2)
    log = evidence_root / ".notanda" / "log.jsonl"
    first_line = log.read_bytes().splitlines(keepends=True)[0]
    log.write_bytes(first_line)  # the log lost an entry it had: its head cannot be trusted
    assert _stamper(server).stamp_once() is False
    assert stamp_lines == [f"log head not stamped: {StampCode.LOG_UNAVAILABLE} (log_shrunk)"]
    assert StampCode.LOG_UNAVAILABLE == "timestamp_log_unavailable"
    assert loopback_tsa.received == []
    assert _tokens(evidence_root) == []


async def test_a_tsa_slower_than_the_deadline_never_holds_a_search(
    evidence_root: Path, loopback_tsa: LoopbackTSA, stamp_lines: list[str]
) -> None:
    server = _server(evidence_root, loopback_tsa.url, timestamp_deadline_s=0.5)
    await _searches(server, 1)
    loopback_tsa.mode = "hold"
    outcome: list[bool] = []
    stamping = threading.Thread(target=lambda: outcome.append(_stamper(server).stamp_once()))
    stamping.start()
    assert loopback_tsa.wait_for_requests(1)
    # The TSA holds its answer: searches go on meanwhile.
    assert [r["status"] for r in await _searches(server, 2)] == ["ok", "ok"]
    stamping.join(60)
    assert outcome == [False]
    assert stamp_lines == ["log head 1 not stamped: tsa_timeout"]
    loopback_tsa.release()
    assert loopback_tsa.wait_for_answers(1)
    assert _tokens(evidence_root) == []  # an answer after the deadline is not kept
    loopback_tsa.mode = "grant"
    assert _stamper(server).stamp_once() is True
    assert _tokens(evidence_root) == ["3.tsr"]


async def test_a_token_signed_by_any_ca_is_stored_trust_is_the_auditors(
    evidence_root: Path, loopback_tsa: LoopbackTSA, tsa: Authorities, tmp_path: Path
) -> None:
    server = _server(evidence_root, loopback_tsa.url)
    await _searches(server, 1)
    loopback_tsa.mode = "untrusted"
    assert _stamper(server).stamp_once() is True  # consistent with its own certificates
    assert openssl_verifies(evidence_root, 1, tsa.untrusted_ca_pem, tmp_path)
    assert not openssl_verifies(evidence_root, 1, tsa.ca_pem, tmp_path)


async def test_two_servers_stamping_one_root_keep_the_first_token(
    evidence_root: Path, loopback_tsa: LoopbackTSA, stamp_lines: list[str]
) -> None:
    first = _server(evidence_root, loopback_tsa.url)
    second = _server(evidence_root, loopback_tsa.url)
    await _searches(first, 1)
    loopback_tsa.mode = "hold"  # both ask before either stores
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda s=s: results.append(_stamper(s).stamp_once()))
        for s in (first, second)
    ]
    for thread in threads:
        thread.start()
    assert loopback_tsa.wait_for_requests(2)
    loopback_tsa.release()
    for thread in threads:
        thread.join(60)
    assert results == [True, True]
    assert _tokens(evidence_root) == ["1.tsr"]
    assert (evidence_root / TOKENS / "1.tsr").read_bytes() in loopback_tsa.answered
    assert sorted(stamp_lines) == [
        "log head 1 already stamped by another server",
        "log head 1 stamped by the time-stamp authority",
    ]
    # A server that finds the token already there does not ask the TSA again.
    third = _server(evidence_root, loopback_tsa.url)
    assert _stamper(third).stamped == 1
    assert len(loopback_tsa.received) == 2


async def test_a_token_that_cannot_be_stored_is_logged_and_retried(
    evidence_root: Path, loopback_tsa: LoopbackTSA, stamp_lines: list[str]
) -> None:
    server = _server(evidence_root, loopback_tsa.url)
    await _searches(server, 1)
    (evidence_root / TOKENS).parent.mkdir(exist_ok=True)
    (evidence_root / TOKENS).write_bytes(b"a file where the folder goes")
    assert _stamper(server).stamp_once() is False
    assert stamp_lines == ["log head 1 not stamped: timestamp_not_stored (not_a_directory)"]
    (evidence_root / TOKENS).unlink()
    assert _stamper(server).stamp_once() is True


async def test_the_background_thread_stamps_and_stops(
    evidence_root: Path, loopback_tsa: LoopbackTSA
) -> None:
    server = _server(evidence_root, loopback_tsa.url, timestamp_every=1)
    stamper = _stamper(server)
    stamper.start()
    try:
        await _searches(server, 1)
        assert loopback_tsa.wait_for_answers(1)
        # The token lands after the answer; wait for the thread to store it.
        # Until the store returns, the folder may also hold the token's
        # pending file, which is linked into place and then removed.
        for _ in range(600):
            if _tokens(evidence_root) == ["1.tsr"]:
                break
            threading.Event().wait(0.05)
        assert _tokens(evidence_root) == ["1.tsr"]
    finally:
        server.stop_stamping()
    assert stamper._thread is not None
    assert not stamper._thread.is_alive()


# ------------------------------------------------------------ over real stdio


def _serve_one_search(root: Path, url: str, *args: str) -> str:
    """A stdio server that answers one search and then sees stdin close; its stderr."""
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": HANDSHAKE_VERSION, "capabilities": {},
            "clientInfo": {"name": "raw-client", "version": "1.0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "search_literature", "arguments": {"query": "open science"}}},
    ]  # fmt: skip
    with subprocess.Popen(
        launcher_command(root, "--log-level", "info", "--timestamp-url", url, *args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(HARVESTER_OPENALEX_API_KEY=KEY),
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline() or b"null") for _ in range(2)]
        process.stdin.close()  # the end of input: the server stamps once more, then exits
        process.wait(timeout=60)
        assert process.stderr is not None
        stderr = process.stderr.read()
    assert process.returncode == 0, stderr
    assert answers[1]["result"]["structuredContent"]["status"] == "ok", (answers, stderr)
    text = stderr.decode()
    assert disallowed_stderr_lines(text) == []
    return text


def test_over_stdio_the_last_stamp_is_made_at_shutdown_and_again_after_a_restart(
    evidence_root: Path, loopback_tsa: LoopbackTSA, tsa: Authorities, tmp_path: Path
) -> None:
    # Every 300 s: within these runs only the shutdown stamps.
    stderr = _serve_one_search(evidence_root, loopback_tsa.url)
    assert "stamping log heads every 300.0 s" in stderr
    assert "log head 1 stamped by the time-stamp authority" in stderr
    _serve_one_search(evidence_root, loopback_tsa.url)
    assert _tokens(evidence_root) == ["1.tsr", "2.tsr"]
    for size in (1, 2):
        assert openssl_verifies(evidence_root, size, tsa.ca_pem, tmp_path), size


def test_over_stdio_a_stamp_that_does_not_fit_the_grace_is_left_to_the_next_start(
    evidence_root: Path, loopback_tsa: LoopbackTSA
) -> None:
    loopback_tsa.mode = "hold"
    stderr = _serve_one_search(evidence_root, loopback_tsa.url)
    assert "log head 1 not stamped: tsa_timeout" in stderr
    assert _tokens(evidence_root) == []
    loopback_tsa.release()
    loopback_tsa.mode = "grant"
    # The next start stamps the head it finds, 2 by then, at its own shutdown.
    stderr = _serve_one_search(evidence_root, loopback_tsa.url, "--timestamp-every", "300")
    assert "log head 2 stamped by the time-stamp authority" in stderr
    assert _tokens(evidence_root) == ["2.tsr"]


def test_every_code_has_a_one_line_remedy() -> None:
    for code in StampCode:
        assert code.remedy, code
        assert "\n" not in code.remedy, code


# ------------------------------------------------------------------- doctor


def _doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return _command("doctor", *args)


async def test_the_doctor_asks_the_tsa_once_and_says_when_the_folder_was_last_stamped(
    evidence_root: Path, loopback_tsa: LoopbackTSA
) -> None:
    from notanda_evidence import read_time_stamp_response

    server = _server(evidence_root, loopback_tsa.url)
    await _searches(server, 2)
    assert _stamper(server).stamp_once() is True
    stamped = read_time_stamp_response((evidence_root / TOKENS / "2.tsr").read_bytes())
    assert not isinstance(stamped, DerProblem)
    assert stamped.info is not None
    asked = len(loopback_tsa.received)
    done = await anyio.to_thread.run_sync(
        _doctor, "--evidence-dir", str(evidence_root), "--timestamp-url", loopback_tsa.url, "--live"
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout
    assert lines[-1] == "ready"
    assert (
        f"ok    the evidence folder was last stamped at {stamped.info.gen_time}"
        " (the genTime in .notanda/timestamps/2.tsr, for the first 2 log entries" in done.stdout
    )
    assert any(
        line.startswith("ok    the TSA answered with a token that checks out") for line in lines
    )
    assert len(loopback_tsa.received) == asked + 1  # asked once
    assert _tokens(evidence_root) == ["2.tsr"]  # the doctor's own stamp is not stored


async def test_the_doctor_warns_about_a_tsa_that_answers_garbage(loopback_tsa: LoopbackTSA) -> None:
    loopback_tsa.mode = "garbage"
    done = await anyio.to_thread.run_sync(_doctor, "--timestamp-url", loopback_tsa.url, "--live")
    assert done.returncode == 0, done.stdout  # like the live search: a warning, not a failure
    assert (
        "warn  the TSA did not give a usable stamp: tsa_unparsable (not a DER TimeStampResp: "
        "truncated); " in done.stdout
    )
    assert len(loopback_tsa.received) == 1


def test_the_doctor_fails_on_a_timestamp_url_the_server_would_refuse(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from notanda_mcp._doctor import _check_timestamp_url, _Report

    report = _Report()
    assert _check_timestamp_url(report, "http://me:pw@tsa.example/") is False
    assert report.failed
    out = capsys.readouterr().out
    assert out.startswith("FAIL  the server would refuse to start: --timestamp-url must not")
    assert "pw" not in out


def test_an_unexpected_failure_does_not_end_the_background_stamping(
    evidence_root: Path, loopback_tsa: LoopbackTSA, stamp_lines: list[str]
) -> None:
    heads = iter([RuntimeError("a bug"), None])
    server = _server(evidence_root, loopback_tsa.url, timestamp_every=1)
    stamper = _stamper(server)
    real_head = stamper._head
    tried = threading.Event()

    def head() -> Any:
        failure = next(heads, None)
        if failure is not None:
            raise failure
        tried.set()
        return real_head()

    stamper._head = head
    stamper.start()
    try:
        assert tried.wait(60)  # the loop went on after the first failure
    finally:
        server.stop_stamping()
    assert "unexpected RuntimeError while stamping; tried again at the next interval" in (
        stamp_lines
    )
