"""``notanda-mcp-client`` (``_client.py``): one search or retrieval from a terminal."""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from command_support import (
    assert_no_raw_unsafe,
    assert_usage_error_has_a_remedy,
    console_script,
    run_command,
)
from conftest import (
    HEX32,
    HEX64,
    KEY,
    assert_sealed,
    assert_valid_output,
    clean_env,
    launcher_command,
    record_ids,
)
from fake_openalex import HOSTILE_TEXT
from notanda_mcp import _client

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def client_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process client hands its own environment to the server it starts."""
    for name in list(os.environ):
        if name.startswith("HARVESTER_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HARVESTER_OPENALEX_API_KEY", KEY)


def _client_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = _client.main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def _launcher(root: Path, *args: str) -> str:
    return shlex.join(launcher_command(root, *args))


@pytest.mark.usefixtures("client_env")
def test_client_search_then_retrieval_exit_0(
    evidence_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    receipts = evidence_root.parent / "receipts.txt"
    receipts.write_text("# kept outside the evidence folder\n")
    command = _launcher(evidence_root)
    common = ["--evidence-dir", str(evidence_root), "--server-command", command]
    found = []
    for query, protocol in [("first", "legacy"), ("second", "2026-07-28")]:
        code, answer, _ = _client_main(
            capsys, *common, "--protocol", protocol, "--query", query, "--limit", "2",
            "--save-receipt", str(receipts),
        )  # fmt: skip
        assert code == 0
        assert_valid_output("search_literature", answer)
        assert answer["status"] == "ok"
        assert len(answer["results"]) == 2
        found.append(answer)
    # --save-receipt appends one 'ID RECEIPT' line per search.
    lines = receipts.read_text().splitlines()
    assert lines == [
        "# kept outside the evidence folder",
        *[f"{a['evidence_id']} {a['receipt']}" for a in found],
    ]
    for line in lines[1:]:
        evidence_id, receipt = line.split(" ")
        assert HEX32.fullmatch(evidence_id)
        assert HEX64.fullmatch(receipt)
        assert_sealed(evidence_root, evidence_id, receipt)
    first = found[0]
    code, got, _ = _client_main(
        capsys, *common, "--protocol", "legacy",
        "--id", first["evidence_id"], "--receipt", first["receipt"],
    )  # fmt: skip
    assert code == 0
    assert got["receipt"] == first["receipt"]
    assert got["logged"] is True
    assert got["results"] == first["results"]
    code, wrong, _ = _client_main(
        capsys, *common, "--id", first["evidence_id"], "--receipt", "0" * 64
    )
    assert code == 1
    assert wrong["error"] == "receipt_mismatch"


@pytest.mark.usefixtures("client_env")
def test_client_prints_hostile_provider_text_as_valid_escaped_json(
    evidence_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--evidence-dir", str(evidence_root)]
    command = _launcher(evidence_root, "--provider", "hostile")
    code = _client.main(
        [*common, "--server-command", command, "--query", HOSTILE_TEXT, "--limit", "2"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_no_raw_unsafe(out + err)
    answer = json.loads(out)
    # The provider's normalizer already drops these characters from the works.
    assert answer["results"][0]["title"] == "Forged [2J evil \u00e9tude 1"
    assert_sealed(evidence_root, answer["evidence_id"], answer["receipt"])


def test_client_prints_a_planted_record_as_valid_escaped_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever controls the folder can seal any text; the retrieval prints it escaped."""
    planted = {"evidence_id": "0" * 32, "results": [{"title": HOSTILE_TEXT}], "logged": False}

    async def session(args: Any) -> tuple[dict[str, Any], bool]:
        return planted, False

    monkeypatch.setattr(_client, "_session", session)
    code = _client.main(["--evidence-dir", str(tmp_path), "--id", "0" * 32])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_no_raw_unsafe(out + err)
    assert json.loads(out) == planted
    assert "\u00e9tude" in out  # diacritics print as they are
    assert "\\u202e" in out
    assert "\\u001b" in out


def test_client_exit_1_when_the_tool_answers_an_error(
    evidence_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("HARVESTER_"):
            monkeypatch.delenv(name)
    common = ["--evidence-dir", str(evidence_root), "--server-command", _launcher(evidence_root)]
    code, answer, _ = _client_main(capsys, *common, "--query", "no key here")
    assert code == 1
    assert_valid_output("search_literature", answer)
    assert answer["error"] == "configuration_error"
    assert answer["detail"] == "missing_api_key"
    assert_sealed(evidence_root, answer["evidence_id"], answer["receipt"])


@pytest.mark.parametrize(
    "argv",
    [
        ["--evidence-dir", "relative", "--query", "x"],
        ["--evidence-dir", "/abs", "--query", "x", "--receipt", "r"],
        ["--evidence-dir", "/abs"],
        ["--evidence-dir", "/abs", "--query", "x", "--id", "0" * 32],
        ["--evidence-dir", "/abs", "--query", "x", "--limit", "five"],
        ["--evidence-dir", "/abs", "--query", "x", "--protocol", "1999-01-01"],
        ["--evidence-dir", "/abs", "--query", "x", "--server-command", " "],
        ["--evidence-dir", "/abs", "--query", "x", "--toolsets", "search,bogus"],
        ["--evidence-dir", "/abs", "--query", "x", "--toolsets", ""],
    ],
    ids=[
        "relative", "receipt-without-id", "no-action", "both-actions", "bad-limit", "bad-era",
        "empty-server-command", "unknown-toolset", "empty-toolsets",
    ],
)  # fmt: skip
def test_client_usage_errors_exit_2_with_a_remedy(argv: list[str]) -> None:
    done = run_command([console_script("notanda-mcp-client"), *argv])
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert_usage_error_has_a_remedy("notanda-mcp-client", done.stderr)


WRONG_TOOLS_SERVER = textwrap.dedent(
    """
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx, params):
        tool = types.Tool(name="search_literature", input_schema={"type": "object"})
        return types.ListToolsResult(tools=[tool])

    async def main():
        server = Server("impostor", version="0", on_list_tools=list_tools)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
    """
)


@pytest.mark.parametrize(
    "server_command",
    [
        [sys.executable, "-c", "pass"],
        [sys.executable, "-c", WRONG_TOOLS_SERVER],
        ["/nonexistent/notanda-mcp"],
    ],
    ids=["exits-at-once", "wrong-tools", "not-installed"],
)
def test_client_exit_3_when_the_server_cannot_be_used(
    tmp_path: Path, server_command: list[str]
) -> None:
    root = tmp_path / "evidence"
    root.mkdir()
    done = run_command(
        [
            console_script("notanda-mcp-client"),
            "--evidence-dir",
            str(root),
            "--server-command",
            shlex.join(server_command),
            "--query",
            "unreachable",
            "--timeout",
            "20",
        ]
    )
    assert done.returncode == 3
    assert done.stdout == ""
    assert "could not complete the call" in done.stderr
    assert record_ids(root) == []


@pytest.mark.usefixtures("client_env")
@pytest.mark.parametrize(
    ("server_toolsets", "client_toolsets", "code"),
    [
        ("search,references", "references", 0),
        ("search", "search,references", 3),
        ("search,references", "search", 3),
    ],
    ids=["same", "server-offers-fewer", "server-offers-more"],
)
def test_client_expects_exactly_the_tools_of_its_toolsets(
    evidence_root: Path,
    capsys: pytest.CaptureFixture[str],
    server_toolsets: str,
    client_toolsets: str,
    code: int,
) -> None:
    command = _launcher(evidence_root, "--toolsets", server_toolsets)
    got, answer, err = _client_main(
        capsys, "--evidence-dir", str(evidence_root), "--server-command", command,
        "--toolsets", client_toolsets, "--query", "toolsets", "--limit", "1",
    )  # fmt: skip
    assert got == code, err
    if code == 3:
        assert "not ['" in err
        assert answer is None


def test_client_passes_its_toolsets_to_the_server_it_starts() -> None:
    args = _client._parser().parse_args(
        ["--evidence-dir", "/abs", "--query", "x", "--toolsets", "references"]
    )
    args.toolsets = _client.parse_toolsets(args.toolsets)
    assert _client._server_command(args)[-2:] == ["--toolsets", "search,references"]


@pytest.mark.usefixtures("client_env")
def test_client_exit_4_when_the_answer_differs_from_the_sealed_record(
    evidence_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    receipts = evidence_root.parent / "receipts.txt"
    command = _launcher(evidence_root, "--tamper-after-seal")
    code, answer, err = _client_main(
        capsys,
        "--evidence-dir", str(evidence_root), "--server-command", command,
        "--query", "tampered", "--save-receipt", str(receipts),
    )  # fmt: skip
    assert code == 4
    assert answer["status"] == "ok"
    assert "differs from the sealed record" in err
    assert not receipts.exists()


def test_the_client_console_script_runs_a_search(evidence_root: Path) -> None:
    done = run_command(
        [
            console_script("notanda-mcp-client"),
            "--evidence-dir",
            str(evidence_root),
            "--server-command",
            _launcher(evidence_root),
            "--query",
            "console script",
        ],
        env=clean_env(HARVESTER_OPENALEX_API_KEY=KEY),
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert_sealed(evidence_root, answer["evidence_id"], answer["receipt"])
    assert KEY not in done.stdout + done.stderr
