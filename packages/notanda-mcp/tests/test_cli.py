"""The command lines: ``notanda-mcp``, ``notanda-mcp doctor`` and ``notanda-mcp-client``."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
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

BIN = Path(sys.executable).parent


def _console(name: str) -> str:
    path = shutil.which(name, path=str(BIN))
    if path is None:
        pytest.skip(f"console script {name} is not installed next to {sys.executable}")
    return path


def _run(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env if env is not None else clean_env(),
        cwd=cwd,
        timeout=60,
        check=False,
    )


def _server(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Any:
    return _run([sys.executable, "-m", "notanda_mcp", *args], env=env, cwd=cwd)


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# ------------------------------------------------------------ notanda-mcp


@pytest.mark.parametrize("relative", ["evidence", "./evidence", "../evidence", "~evidence"])
def test_a_relative_evidence_dir_is_refused(tmp_path: Path, relative: str) -> None:
    done = _server("--evidence-dir", relative, cwd=tmp_path)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith("notanda-mcp: ")
    assert "absolute" in line
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []  # nothing was created in the working directory


def test_a_file_as_evidence_dir_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    done = _server("--evidence-dir", str(target))
    assert done.returncode == 2
    assert "names a file" in _one_line(done.stderr)
    assert target.read_text() == "x"


def test_a_missing_folder_is_created_owner_only_with_tilde_expanded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _run(
        [_console("notanda-mcp"), "--evidence-dir", "~/research/evidence"],
        env=clean_env(HOME=str(home)),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr  # stdin was empty: served until EOF
    created = home / "research" / "evidence"
    assert created.is_dir()
    assert stat.S_IMODE(created.stat().st_mode) == 0o700
    assert not (tmp_path / "~").exists()
    assert done.stdout == ""


def test_search_slots_below_one_is_a_usage_error(tmp_path: Path) -> None:
    done = _server("--evidence-dir", str(tmp_path), "--search-slots", "0")
    assert done.returncode == 2
    assert "search-slots" in _one_line(done.stderr)


@pytest.mark.parametrize("toolsets", ["", "search,", "search,,references", "bogus", "Search"])
def test_an_empty_or_unknown_toolset_is_a_usage_error(tmp_path: Path, toolsets: str) -> None:
    done = _server("--evidence-dir", str(tmp_path), "--toolsets", toolsets)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "--toolsets" in line
    assert "search,references" in line  # the remedy shows a valid value
    assert_usage_error_has_a_remedy("notanda-mcp", done.stderr)


@pytest.mark.parametrize("toolsets", ["references", " references , search ", "search,search"])
def test_valid_toolsets_start_the_server(tmp_path: Path, toolsets: str) -> None:
    env = {**clean_env(), "HARVESTER_OPENALEX_API_KEY": KEY}
    done = _server("--evidence-dir", str(tmp_path), "--toolsets", toolsets, env=env)
    assert done.returncode == 0, done.stderr  # stdin was empty: served until EOF


@pytest.mark.parametrize(
    ("args", "prog"),
    [
        (["--evidence-dir", "relative"], "notanda-mcp"),
        (["--evidence-dir", "/tmp", "--search-slots", "0"], "notanda-mcp"),
        ([], "notanda-mcp"),
        (["--no-such-option"], "notanda-mcp"),
        (["doctor", "--no-such-option"], "notanda-mcp doctor"),
        (["demo"], "notanda-mcp demo"),
        (["demo", "a", "b"], "notanda-mcp demo"),
    ],
    ids=["relative", "slots", "no-dir", "bad-option", "doctor-option", "demo-no-dir", "demo-two"],
)
def test_server_usage_errors_exit_2_with_a_remedy(
    tmp_path: Path, args: list[str], prog: str
) -> None:
    done = _server(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert_usage_error_has_a_remedy(
        prog if args[:1] != ["--evidence-dir"] else "notanda-mcp", done.stderr
    )


SECRET_IN_FILE = "file-SECRET-value-8Jq2"


#: Configuration files the server refuses to start with, each hiding a value.
UNUSABLE_CONFIGS = {
    "invalid-json": lambda d: _write(
        d / "c.json", f'{{"openalex": {{"api_key": "{SECRET_IN_FILE}"'
    ),
    "unknown-key": lambda d: _write(d / "c.json", json.dumps({SECRET_IN_FILE: 1})),
    "wrong-type": lambda d: _write(
        d / "c.json", json.dumps({"openalex": {"api_key": 5}, SECRET_IN_FILE: 1})
    ),
    "not-an-object": lambda d: _write(d / "c.json", json.dumps([SECRET_IN_FILE])),
    "not-utf8": lambda d: _write(d / "c.json", b"\xff\xfe" + SECRET_IN_FILE.encode()),
    "folder": lambda d: d,  # unreadable as a file
    "missing": lambda d: d / "missing.json",
}


@pytest.mark.parametrize("make_config", UNUSABLE_CONFIGS.values(), ids=UNUSABLE_CONFIGS.keys())
def test_an_unusable_configuration_exits_with_one_line_naming_the_fix_and_no_value(
    tmp_path: Path, make_config: Any
) -> None:
    config = make_config(tmp_path)
    root = tmp_path / "evidence"
    done = _server("--evidence-dir", str(root), env=clean_env(HARVESTER_CONFIG=str(config)))
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith(
        f"notanda-mcp: unusable notanda configuration (HARVESTER_CONFIG={config}): "
    )
    # The remedy names the variable and the expected shape and mode.
    assert "HARVESTER_CONFIG name" in line
    assert '{"openalex": {"api_key": "..."}}, mode 600' in line or "HARVESTER_* variable" in line
    assert SECRET_IN_FILE not in done.stderr
    assert done.stdout == ""


def _write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def _options(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--?[a-zA-Z][\w-]*", help_text))


@pytest.mark.parametrize(
    "command",
    [["notanda-mcp"], ["notanda-mcp", "doctor"], ["notanda-mcp-client"]],
    ids=["server", "doctor", "client"],
)
def test_no_argument_accepts_a_key(command: list[str]) -> None:
    done = _run([_console(command[0]), *command[1:], "--help"])
    assert done.returncode == 0
    options = _options(done.stdout)
    assert "--evidence-dir" in options
    assert not [o for o in options if re.search("key|token|secret|api", o, re.IGNORECASE)]
    # The provider's endpoint is never an argument; the one URL is the TSA's
    # (off by default, refused when it carries a user name or password).
    urls = [o for o in options if re.search("url|endpoint|base|host", o, re.IGNORECASE)]
    assert urls == (["--timestamp-url"] if command[0] == "notanda-mcp" else [])


def test_the_server_help_names_where_the_key_comes_from() -> None:
    done = _run([_console("notanda-mcp"), "--help"])
    text = " ".join(done.stdout.split())
    assert "HARVESTER_OPENALEX_API_KEY" in text
    assert "HARVESTER_CONFIG" in text


# ------------------------------------------------------ notanda-mcp-client


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


#: Characters that move a terminal's cursor, ring it, reverse or hide text.
UNSAFE = ("\x1b", "\x07", "\x85", "\u202e", "\u200b", "\u2028")


def assert_no_raw_unsafe(text: str) -> None:
    assert not [ch for ch in UNSAFE if ch in text], ascii(text)


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
    done = _run([_console("notanda-mcp-client"), *argv])
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert_usage_error_has_a_remedy("notanda-mcp-client", done.stderr)


def assert_usage_error_has_a_remedy(prog: str, stderr: str) -> None:
    """The last line says what to do: argparse's errors get a remedy line, ours a clause."""
    last = stderr.splitlines()[-1]
    if last.startswith(f"{prog}: remedy: "):
        assert f"{prog} --help" in last
    else:
        assert last.startswith(f"{prog}: ")
        assert re.search(r"[:;] (give|name|create|retrieve) ", last), last


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
    done = _run(
        [
            _console("notanda-mcp-client"),
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
    done = _run(
        [
            _console("notanda-mcp-client"),
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


# ----------------------------------------------------------------- doctor


def _doctor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _server("doctor", *args, env=env)


def test_doctor_is_ready_offline_and_warns_without_a_key(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    root.mkdir()
    root.chmod(0o755)
    # --live without a key is refused before any request: offline, and only a warning.
    done = _doctor("--evidence-dir", str(root), "--live", env=clean_env(HOME=str(tmp_path)))
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert lines[-1] == "ready"
    assert not [line for line in lines if line.startswith("FAIL")]
    assert any(line.startswith("warn  no OpenAlex key") for line in lines)
    assert sum(line.startswith("ok    self-test:") for line in lines) == 3
    assert "warn  the evidence folder is readable by others (mode 755); queries can be " in (
        done.stdout.replace("\n", " ")
    )
    # The self-test never writes into DIR; the live search leaves its one record there.
    [live] = record_ids(root)
    assert any(
        line.startswith("warn  live search failed: configuration_error (missing_api_key)")
        and live in line
        for line in lines
    )
    response = assert_sealed(root, live)
    assert response["error"] == "configuration_error"
    request = json.loads((root / live / "request.json").read_bytes())
    assert request["provider_mode"] == "network"
    assert [p.name for p in (root / ".notanda").iterdir() if "probe" in p.name] == []


def test_doctor_fails_when_the_folder_probe_fails_and_never_prints_the_key(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    config = tmp_path / "notanda.json"
    config.write_text(json.dumps({"openalex": {"api_key": KEY}}))
    config.chmod(0o644)
    env = clean_env(HOME=str(tmp_path), HARVESTER_CONFIG=str(config))
    done = _doctor("--evidence-dir", str(blocker / "evidence"), env=env)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("not ready")
    [fail] = [line for line in lines if line.startswith("FAIL")]
    assert fail.startswith("FAIL  cannot create the evidence folder (NotADirectoryError): ")
    assert "ok    an OpenAlex API key is configured (not shown)" in lines
    assert "warn  the configuration file is readable by others: chmod 600 it" in lines
    assert KEY not in done.stdout + done.stderr


def _configuration_verdict(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **env: str
) -> tuple[bool, str]:
    """The doctor's configuration check alone, in this process: (failed, printed lines)."""
    from notanda_mcp._doctor import _check_configuration, _Report

    for name in [k for k in os.environ if k.startswith("HARVESTER_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    report = _Report()
    _check_configuration(report)
    return report.failed, capsys.readouterr().out


@pytest.mark.parametrize("make_config", UNUSABLE_CONFIGS.values(), ids=UNUSABLE_CONFIGS.keys())
def test_doctor_fails_for_every_configuration_the_server_refuses(
    tmp_path: Path,
    make_config: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = make_config(tmp_path)
    failed, out = _configuration_verdict(monkeypatch, capsys, HARVESTER_CONFIG=str(config))
    refused = _server(
        "--evidence-dir", str(tmp_path / "e"), env=clean_env(HARVESTER_CONFIG=str(config))
    )
    assert refused.returncode == 2
    assert failed
    # The same line the server prints, after the doctor's own words.
    assert out == f"FAIL  the server would refuse to start: {_one_line(refused.stderr)[13:]}\n"
    assert SECRET_IN_FILE not in out


@pytest.mark.parametrize(
    ("env", "config"),
    [
        ({}, {"openalex": {"api_key": ""}}),
        ({}, {"openalex": {"api_key": "   "}}),
        ({"HARVESTER_OPENALEX_API_KEY": "  "}, None),
        ({}, {"openalex": {"api_key": KEY + " with space"}}),
        ({"HARVESTER_OPENALEX_BASE_URL": "https://oa.example"}, {"openalex": {"api_key": KEY}}),
    ],
    ids=["empty-in-file", "blank-in-file", "blank-variable", "invalid-key", "foreign-endpoint"],
)  # fmt: skip
def test_doctor_fails_when_every_search_would_fail_for_a_fixable_reason(
    tmp_path: Path,
    env: dict[str, str],
    config: dict[str, Any] | None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if config is not None:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        path.chmod(0o600)
        env = {**env, "HARVESTER_CONFIG": str(path)}
    failed, out = _configuration_verdict(monkeypatch, capsys, **env)
    assert failed, out
    [line] = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert line.startswith("FAIL  every search would answer configuration_error (")
    assert "restart the server" in line
    assert KEY not in out


def test_doctor_only_warns_about_an_absent_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An empty variable is no key at all to the loader: a CI job with an unset secret.
    failed, out = _configuration_verdict(monkeypatch, capsys, HARVESTER_OPENALEX_API_KEY="")
    assert not failed
    assert out.startswith("warn  no OpenAlex key: searches will answer configuration_error")
    assert "HARVESTER_OPENALEX_API_KEY" in out


def test_doctor_is_not_ready_with_a_configuration_the_server_refuses(tmp_path: Path) -> None:
    config = UNUSABLE_CONFIGS["invalid-json"](tmp_path)
    done = _doctor(env=clean_env(HOME=str(tmp_path), HARVESTER_CONFIG=str(config)))
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("not ready")
    assert "ready" not in lines
    assert SECRET_IN_FILE not in done.stdout + done.stderr


#: A name that would clear the screen, ring, reverse and hide text if printed raw.
HOSTILE_NAME = "e\x1b[2J\x07\u202eevil\u200b"
ESCAPED_NAME = "e\\x1b[2J\\x07\\u202eevil\\u200b"


def test_doctor_prints_hostile_paths_as_visible_escapes(tmp_path: Path) -> None:
    root = tmp_path / HOSTILE_NAME
    config = UNUSABLE_CONFIGS["invalid-json"](tmp_path).rename(tmp_path / f"{HOSTILE_NAME}.json")
    env = clean_env(HOME=str(tmp_path), HARVESTER_CONFIG=str(config))
    done = _doctor("--evidence-dir", str(root), env=env)
    assert done.returncode == 1, done.stdout
    assert_no_raw_unsafe(done.stdout + done.stderr)
    lines = done.stdout.splitlines()
    assert f"ok    evidence folder {tmp_path}/{ESCAPED_NAME} is writable and fsync works" in lines
    [fail] = [line for line in lines if line.startswith("FAIL")]
    assert f"(HARVESTER_CONFIG={tmp_path}/{ESCAPED_NAME}.json)" in fail
    assert lines[-1].startswith("not ready")
    # The server refuses the same configuration on stderr, escaped the same way.
    served = _server("--evidence-dir", str(root), env=env)
    assert served.returncode == 2
    assert_no_raw_unsafe(served.stderr)
    assert f"(HARVESTER_CONFIG={tmp_path}/{ESCAPED_NAME}.json)" in _one_line(served.stderr)


def test_doctor_usage_error_exits_2() -> None:
    done = _doctor("--no-such-option", env=clean_env())
    assert done.returncode == 2
    assert done.stdout == ""


# ------------------------------------------------------------------- demo

CONTACT = "contact-SECRET-8Jq2@example.org"


def _demo(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Any:
    return _run(
        [_console("notanda-mcp"), "demo", *args],
        cwd=cwd,
        env=env if env is not None else clean_env(HOME=str(cwd)),
    )


def _printed_commands(stdout: str) -> list[list[str]]:
    lines = stdout.splitlines()
    start = lines.index("demo done. Run the same checks by hand:") + 1
    return [shlex.split(line) for line in lines[start:] if line.startswith("  ")]


def test_demo_into_a_relative_new_folder_leaves_verified_injected_evidence(tmp_path: Path) -> None:
    env = clean_env(
        HOME=str(tmp_path), HARVESTER_OPENALEX_API_KEY=KEY, HARVESTER_CONTACT_EMAIL=CONTACT
    )
    done = _demo("kept/demo", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    root = tmp_path / "kept" / "demo"
    ids = record_ids(root)
    assert len(ids) == 3
    for evidence_id in ids:
        assert_sealed(root, evidence_id)
        request = json.loads((root / evidence_id / "request.json").read_bytes())
        assert request["provider_mode"] == "injected"
    client, verify, audit = _printed_commands(done.stdout)
    # The installed scripts by absolute path; the last search's record, receipt and head.
    assert client[0] == _console("notanda-mcp-client")
    assert verify[:2] == [_console("notanda-evidence"), "verify"]
    assert audit[:3] == [_console("notanda-evidence"), "audit", str(root)]
    assert client[client.index("--id") + 1] in ids
    assert re.fullmatch(r"3:[0-9a-f]{64}", audit[audit.index("--head") + 1])
    for argv in (client, verify, audit):
        again = _run(argv, env=env)
        assert again.returncode == 0, (argv, again.stderr)
        assert KEY not in again.stdout + again.stderr
        assert CONTACT not in again.stdout + again.stderr
    # cite refuses the demo's records unless told otherwise.
    cite = _run([_console("notanda-evidence"), "cite", ids[0], "--root", str(root)], env=env)
    assert cite.returncode == 1
    # Neither the key nor the contact e-mail reaches the output or the disk.
    assert KEY not in done.stdout + done.stderr
    assert CONTACT not in done.stdout + done.stderr
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert KEY.encode() not in data
            assert CONTACT.encode() not in data


def test_demo_quotes_an_absolute_folder_with_spaces(tmp_path: Path) -> None:
    root = tmp_path / "my demo's folder"
    done = _demo(str(root), cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert shlex.quote(str(root)) in done.stdout
    assert str(root) in _printed_commands(done.stdout)[2]


@pytest.mark.parametrize("occupant", ["file", "folder", "hidden"])
def test_demo_refuses_a_folder_that_holds_anything(tmp_path: Path, occupant: str) -> None:
    root = tmp_path / "collection"
    root.mkdir()
    inside = {"file": "notes.txt", "folder": "0" * 32, "hidden": ".notanda"}[occupant]
    (root / inside).mkdir() if occupant != "file" else (root / inside).write_text("x")
    before = sorted(p.name for p in root.iterdir())
    done = _demo(str(root), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "already holds files" in _one_line(done.stderr)
    assert sorted(p.name for p in root.iterdir()) == before


def test_demo_refuses_a_file_as_its_folder(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    done = _demo("f", cwd=tmp_path)
    assert done.returncode == 2
    assert "is a file, not a folder" in _one_line(done.stderr)


def test_demo_exits_1_naming_the_step_that_failed(tmp_path: Path) -> None:
    # The restarted notanda-mcp reads the user's configuration and refuses to start.
    env = clean_env(HOME=str(tmp_path), HARVESTER_CONFIG=str(tmp_path / "missing.json"))
    done = _demo("demo", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    assert lines[-1] == "demo failed: see FAIL above"
    assert lines[-2].startswith("FAIL  a restarted server (notanda-mcp) returned the same record")
    assert "exited 3" in lines[-2]
    assert "demo done" not in done.stdout
