"""The server owns stderr: allow-listed lines only, never a key, a URL or exception text."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    CLIENT_INFO,
    ERAS,
    KEY,
    call,
    clean_env,
    disallowed_stderr_lines,
    launcher_params,
    make_server,
    open_session,
    read_json,
)
from fake_openalex import FakeOpenAlex, works_page
from mcp import Client
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.anyio


@pytest.mark.timeout(60)
@pytest.mark.parametrize("era", ERAS)
async def test_a_key_configured_at_debug_level_never_leaves_the_process(
    evidence_root: Path, errlog: Any, era: str
) -> None:
    params = launcher_params(
        evidence_root, "--provider", "echo", "--log-level", "debug", cwd=evidence_root.parent
    )
    answers: list[str] = []
    async with Client(
        stdio_client(params, errlog=errlog), mode=era, client_info=CLIENT_INFO
    ) as client:
        # The fake provider echoes the key it received: a page, a redirect, a 500.
        for query in ("first", "second", "third"):
            found = await call(client, "search_literature", {"query": query})
            answers.append(found.model_dump_json(by_alias=True))
            content = found.structured_content
            assert content is not None
            got = await call(client, "get_evidence", {"evidence_id": content["evidence_id"]})
            answers.append(got.model_dump_json(by_alias=True))
    errlog.flush()
    stderr = Path(errlog.name).read_text(encoding="utf-8")

    outcomes = [json.loads(a)["structuredContent"] for a in answers[::2]]
    assert [o["status"] for o in outcomes] == ["ok", "error", "error"]
    assert [o.get("reason") for o in outcomes] == [None, "redirect", "http_error"]
    # The provider really did echo something where the key was: it arrived redacted.
    echoed = read_json(evidence_root / outcomes[0]["evidence_id"] / "provider.json")
    assert echoed["observed_json"]["meta"]["echo"] not in ("", KEY)
    assert outcomes[0]["results"][0]["title"].startswith("Title with ")

    assert "serving an evidence root on stdio" in stderr  # debug level: the log is not empty
    assert KEY not in stderr
    assert disallowed_stderr_lines(stderr) == []
    for answer in answers:
        assert KEY not in answer
    files = [p for p in evidence_root.rglob("*") if p.is_file()]
    assert len(files) > 12
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path


EMAIL = "owner.NOTANDA-mail-Zk4@example.org"


@pytest.mark.timeout(60)
async def test_a_query_holding_the_key_and_the_e_mail_is_scrubbed_everywhere(
    evidence_root: Path, errlog: Any, tmp_path: Path
) -> None:
    """The query is the caller's text: stored and answered with the rule of request.json."""
    config = tmp_path / "harvester.json"
    config.write_text(json.dumps({"contact_email": EMAIL}))
    config.chmod(0o600)
    params = launcher_params(evidence_root, "--log-level", "debug", cwd=evidence_root.parent)
    assert params.env is not None
    params.env["HARVESTER_CONFIG"] = str(config)
    answers: list[str] = []
    async with Client(
        stdio_client(params, errlog=errlog), mode=ERAS[0], client_info=CLIENT_INFO
    ) as client:
        found = await call(client, "search_literature", {"query": f"{KEY} {EMAIL} open science"})
        answers.append(found.model_dump_json(by_alias=True))
        content = found.structured_content
        assert content is not None
        assert found.is_error is False, content
        got = await call(
            client,
            "get_evidence",
            {"evidence_id": content["evidence_id"], "receipt": content["receipt"]},
        )
        assert got.is_error is False
        answers.append(got.model_dump_json(by_alias=True))
    errlog.flush()
    stderr = Path(errlog.name).read_text(encoding="utf-8")
    assert content["query"] == "REDACTED REDACTED open science"
    assert "sealed: ok" in stderr
    secrets = (KEY, EMAIL, EMAIL.replace("@", "%40"))
    for secret in secrets:
        assert secret not in stderr
        for answer in answers:
            assert secret not in answer
    files = [p for p in evidence_root.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"request.json", "response.json", "provider.json"}
    for path in files:
        for secret in secrets:
            assert secret.encode() not in path.read_bytes(), path


GATE_SCRIPT = textwrap.dedent(
    """
    import logging, sys, threading, warnings
    from notanda_mcp._logging import LOGGER, configure_logging

    KEY = sys.argv[1]
    configure_logging("debug")
    url = f"https://api.openalex.org/works?search=secret+query&api_key={KEY}"
    logging.getLogger("httpx").info("HTTP Request: GET %s", url)
    logging.getLogger("httpcore.connection").debug("connect_tcp.started host=%s", url)
    logging.getLogger("httpx").warning("Retrying %s", url)
    logging.getLogger("harvester.providers.openalex").error("refused key %s", KEY)
    logging.getLogger("notanda_openalex").warning("body %s", KEY)
    logging.getLogger("mcp.shared.jsonrpc_dispatcher").debug("transport yielded %s", url)
    try:
        raise ValueError(f"provider said {KEY}")
    except ValueError:
        logging.getLogger("mcp.server.runner").exception("handler for 'tools/call' raised")
        LOGGER.exception("search %s sealed: %s", "abc", "ok")
    LOGGER.info("a message that is not on the list, with %s", KEY)
    LOGGER.info(f"an f-string with {KEY}")
    LOGGER.info("search %s sealed: %s", "0" * 32, "ok")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(f"a warning quoting {KEY}", stacklevel=1)
    thread = threading.Thread(target=lambda: 1 / 0)
    thread.start()
    thread.join()
    raise RuntimeError(f"uncaught, quoting {KEY}")
    """
)


def test_the_gate_reduces_everything_else_to_a_fixed_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", GATE_SCRIPT, KEY],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    lines = done.stderr.splitlines()
    assert done.stdout == ""
    assert KEY not in done.stderr
    assert "api.openalex.org" not in done.stderr
    assert "secret+query" not in done.stderr
    assert "Traceback" not in done.stderr
    assert disallowed_stderr_lines(done.stderr) == []
    assert lines == [
        "notanda-mcp WARNING httpx: WARNING (details withheld)",
        "notanda-mcp ERROR harvester.providers.openalex: ERROR (details withheld)",
        "notanda-mcp WARNING notanda_openalex: WARNING (details withheld)",
        "notanda-mcp ERROR mcp.server.runner: ERROR (details withheld)",
        "notanda-mcp ERROR withheld a message that is not on the allow-list",
        "notanda-mcp INFO withheld a message that is not on the allow-list",
        "notanda-mcp INFO withheld a message that is not on the allow-list",
        f"notanda-mcp INFO search {'0' * 32} sealed: ok",
        "notanda-mcp WARNING py.warnings: WARNING (details withheld)",
        "notanda-mcp: unexpected ZeroDivisionError (details withheld)",
        "notanda-mcp: unexpected RuntimeError (details withheld)",
    ]
    assert done.returncode == 1


def test_the_console_script_writes_nothing_to_stdout_before_serving(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    done = subprocess.run(
        [sys.executable, "-m", "notanda_mcp", "--evidence-dir", str(root), "--log-level", "info"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=clean_env(HARVESTER_OPENALEX_API_KEY=KEY),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout == ""  # nothing but protocol on stdout, and there was none
    assert KEY not in done.stderr
    assert disallowed_stderr_lines(done.stderr) == []
    assert "serving an evidence root on stdio" in done.stderr


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search_literature", {"query": 5}),
        ("check_references", {"references": ["not", "text"]}),
        ("get_evidence", {"evidence_id": 7}),
    ],
)
async def test_a_call_refused_by_its_schema_is_logged_under_its_tool(
    evidence_root: Path, caplog: pytest.LogCaptureFixture, tool: str, arguments: dict[str, Any]
) -> None:
    server = make_server(
        evidence_root, FakeOpenAlex(works_page()), toolsets=("search", "references")
    )
    with caplog.at_level(logging.INFO, logger="notanda_mcp"):
        async with open_session(server, "legacy") as client:
            result = await call(client, tool, arguments)
    content = result.structured_content
    assert content is not None
    assert (content["error"], content["persisted"]) == ("invalid_arguments", False)
    messages = [record.getMessage() for record in caplog.records if record.name == "notanda_mcp"]
    assert f"{tool} arguments rejected before a record: {content['reason']}" in messages
    assert not any(message.startswith("search rejected") for message in messages)
