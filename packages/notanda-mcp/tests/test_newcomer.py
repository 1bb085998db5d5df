"""What a newcomer with only the README met at the ``notanda-mcp`` prompt (issue 22).

The server started on a terminal, a mistyped command, help that lists the
commands, remedies that speak of command-line options, the client checking
its own arguments and never creating a folder it only reads, ``--offline``,
a truncated receipt; and (issue 24) every command ending quietly when its
output is closed early.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from command_support import console_script, run_command
from conftest import HEX32, HEX64, KEY, assert_sealed, clean_env, record_ids
from fake_openalex import FakeOpenAlex, bibliography
from notanda_mcp import _check_cli, _client
from notanda_mcp._cli import COMMANDS, TERMINAL_NOTICE
from notanda_mcp._schemas import REMEDIES
from notanda_mcp._service import COMMAND_LINE_PHRASES, command_line_remedy
from notanda_openalex import ConfigurationDetail, ProviderReason
from notanda_openalex._vocabulary import MAX_LIMIT

pytestmark = pytest.mark.timeout(120)


# ------------------------------------------------------------ the server on a terminal


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_server_on_a_terminal_says_what_it_is_once_and_quits_on_ctrl_d(
    tmp_path: Path,
) -> None:
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [console_script("notanda-mcp"), "--evidence-dir", str(tmp_path / "evidence")],
        stdin=follower,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=clean_env(HARVESTER_OPENALEX_API_KEY=KEY, HOME=str(tmp_path)),
    )
    os.close(follower)
    assert process.stderr is not None
    said = b""
    deadline = time.monotonic() + 60
    while b"Ctrl-D" not in said and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 1)
        if ready:
            said += os.read(process.stderr.fileno(), 4096)
    os.write(leader, b"\x04")  # Ctrl-D: end of input on a terminal
    code = process.wait(timeout=60)
    said += process.stderr.read()
    process.stderr.close()
    os.close(leader)
    text = said.decode()
    assert code == 0
    assert text.count(TERMINAL_NOTICE) == 1
    for words in ("MCP client normally", "notanda-mcp-client", "notanda-mcp demo", "Ctrl-D"):
        assert words in TERMINAL_NOTICE


def test_the_server_under_a_client_says_nothing_of_the_sort(tmp_path: Path) -> None:
    done = subprocess.run(
        [console_script("notanda-mcp"), "--evidence-dir", str(tmp_path / "evidence")],
        input="",
        capture_output=True,
        text=True,
        env=clean_env(HARVESTER_OPENALEX_API_KEY=KEY, HOME=str(tmp_path)),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert "Ctrl-D" not in done.stderr
    assert "MCP client normally" not in done.stderr


# ------------------------------------------------------------ commands


def test_a_mistyped_command_gets_the_nearest_one_not_the_servers_usage() -> None:
    done = run_command([console_script("notanda-mcp"), "docter"])
    assert done.returncode == 2
    assert "unknown command 'docter'; did you mean doctor?" in done.stderr
    assert "--evidence-dir" not in done.stderr.split("error:")[1]


def test_help_lists_every_command() -> None:
    done = run_command([console_script("notanda-mcp"), "--help"])
    assert done.returncode == 0
    listed = done.stdout.split("commands (each has its own --help):\n")[1]
    for name in COMMANDS:
        assert f"\n  {name}" in "\n" + listed


def test_the_check_references_example_stands_on_a_line_of_its_own() -> None:
    help_text = _check_cli.parser().format_help()
    assert (
        "\nExample:\n  notanda-mcp check-references refs.bib --evidence-dir evidence"
        " --cited-in paper.aux\n"
    ) in help_text


def test_an_option_is_never_abbreviated() -> None:
    done = run_command([console_script("notanda-mcp-client"), "--evidence", "/abs", "--query", "x"])
    assert done.returncode == 2
    assert "unrecognized arguments: --evidence" in done.stderr or "required" in done.stderr


# ------------------------------------------------------------ command-line remedies


def _every_remedy() -> list[str]:
    return [
        *REMEDIES.values(),
        *(detail.remedy for detail in ConfigurationDetail),
        *(reason.remedy for reason in ProviderReason),
    ]


def test_each_command_line_phrase_replaces_text_a_remedy_holds() -> None:
    for server, _ in COMMAND_LINE_PHRASES:
        assert any(server in remedy for remedy in _every_remedy()), server


def test_no_remedy_said_on_the_command_line_speaks_of_the_server_or_a_schema() -> None:
    # Three codes only a server answers (busy, stopping, a retrieval's not_found).
    server_only = {REMEDIES[code] for code in ("server_busy", "shutting_down", "not_found")}
    for remedy in _every_remedy():
        if remedy in server_only:
            continue
        said = command_line_remedy(remedy)
        for words in ("restart the server", "server's", "input schema", "call again"):
            assert words not in said, (remedy, said)


def _check(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, env: dict[str, str]):
    tmp_path.mkdir()
    source = tmp_path / "refs.txt"
    source.write_text(text, encoding="utf-8")
    code = _check_cli.main(
        [str(source), "--evidence-dir", str(tmp_path / "evidence"), "--json"],
        transport=FakeOpenAlex(bibliography()).transport(),
        env=env,
    )
    return code, json.loads(capsys.readouterr().out)


def test_check_references_remedies_speak_of_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, run = _check(capsys, tmp_path / "a", "10.5555/notanda.test.1\n", {})
    assert code == 4
    [answer] = run["parts"]  # the run's one part failed as a whole
    assert answer["detail"] == "missing_api_key"
    assert "restart the server" not in answer["remedy"]
    assert "server's environment" not in answer["remedy"]
    assert answer["remedy"].endswith("and run the command again")
    code, answer = _check(capsys, tmp_path / "b", "  \n", {"HARVESTER_OPENALEX_API_KEY": KEY})
    assert code == 2
    assert answer["error"] == "invalid_arguments"
    assert "input schema" not in answer["remedy"]
    assert "--help" in answer["remedy"]


# ------------------------------------------------------------ the client's own arguments


def test_the_client_refuses_a_limit_its_help_does_not_allow(tmp_path: Path) -> None:
    client = console_script("notanda-mcp-client")
    for limit in (0, MAX_LIMIT + 1):
        done = run_command(
            [client, "--evidence-dir", str(tmp_path), "--query", "x", "--limit", str(limit)]
        )
        assert done.returncode == 2
        assert f"--limit must be 1 to {MAX_LIMIT}" in done.stderr
    assert f"1 to {MAX_LIMIT}" in (_client._parser().format_help())


def test_a_retrieval_never_creates_the_folder_it_reads_from(tmp_path: Path) -> None:
    mistyped = tmp_path / "evidnce"
    done = run_command(
        [
            console_script("notanda-mcp-client"),
            "--evidence-dir", str(mistyped), "--id", "0" * 32,
        ]
    )  # fmt: skip
    assert done.returncode == 2
    assert "--id only reads from one" in done.stderr
    assert not mistyped.exists()


# ------------------------------------------------------------ --offline


def test_the_client_offline_searches_through_the_doctors_provider(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    client = console_script("notanda-mcp-client")
    env = clean_env(HOME=str(tmp_path))  # no key at all: offline needs none
    done = run_command(
        [client, "--evidence-dir", str(root), "--offline", "--query", "reproducibility"], env=env
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert HEX32.fullmatch(answer["evidence_id"])
    assert HEX64.fullmatch(answer["receipt"])
    assert answer["results"][0]["doi"] == "10.5555/notanda.selftest.1"
    assert "the record says injected" in done.stderr
    request = json.loads((root / answer["evidence_id"] / "request.json").read_bytes())
    assert request["provider_mode"] == "injected"
    assert_sealed(root, answer["evidence_id"], answer["receipt"])

    # A truncated receipt: said against what a receipt is, never "replaced".
    done = run_command(
        [
            client, "--evidence-dir", str(root), "--offline",
            "--id", answer["evidence_id"], "--receipt", answer["receipt"][:16],
        ],
        env=env,
    )  # fmt: skip
    assert done.returncode == 1
    wrong = json.loads(done.stdout)
    assert wrong["error"] == "receipt_mismatch"
    assert wrong["reason"] == "receipt_malformed"
    assert wrong["detail"] == (
        "16 characters; a receipt is 64 lowercase hex digits: check it was copied whole"
    )
    assert wrong["remedy"] == (
        "copy the receipt again, whole, as the search returned it: 64 lowercase hex digits"
    )
    assert "replaced" not in done.stdout


def test_offline_and_a_server_command_are_refused_together(tmp_path: Path) -> None:
    done = run_command(
        [
            console_script("notanda-mcp-client"), "--evidence-dir", str(tmp_path),
            "--offline", "--server-command", "true", "--query", "x",
        ]
    )  # fmt: skip
    assert done.returncode == 2
    assert "give --offline or --server-command, not both" in done.stderr


# ------------------------------------------------------------ broken pipes


def _closed_pipe_run(
    argv: list[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[bytes]:
    """Run *argv* with standard output a real pipe closed before anything is read."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.close()
    err = process.stderr.read()
    process.stderr.close()
    return subprocess.CompletedProcess(argv, process.wait(timeout=110), b"", err)


def _quiet_141(done: subprocess.CompletedProcess[bytes]) -> None:
    assert done.returncode == 141, done.stderr
    assert b"Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) <= 1


def test_check_references_with_a_closed_output_ends_quietly_and_its_record_stays_sealed(
    tmp_path: Path,
) -> None:
    source = tmp_path / "refs.txt"
    source.write_text("10.5555/notanda.test.1\n" * 40, encoding="utf-8")
    root = tmp_path / "evidence"
    # No key: the check fails as a whole, but it is sealed and its answer printed.
    done = _closed_pipe_run(
        [console_script("notanda-mcp"), "check-references", str(source), "--evidence-dir",
         str(root), "--json"],
        clean_env(HOME=str(tmp_path)),
        tmp_path,
    )  # fmt: skip
    _quiet_141(done)
    [evidence_id] = record_ids(root)
    assert_sealed(root, evidence_id)
    log = (root / ".notanda" / "log.jsonl").read_text(encoding="utf-8")
    assert evidence_id in log


@pytest.mark.parametrize("command", ["doctor", "demo", "client", "help-typo"])
def test_every_command_with_a_closed_output_ends_quietly(command: str, tmp_path: Path) -> None:
    env = clean_env(HOME=str(tmp_path))
    mcp, client = console_script("notanda-mcp"), console_script("notanda-mcp-client")
    argv = {
        "doctor": [mcp, "doctor"],
        "demo": [mcp, "demo", str(tmp_path / "demo")],
        "client": [client, "--evidence-dir", str(tmp_path / "e"), "--offline", "--query", "x"],
        "help-typo": [mcp, "check-references", "--help"],
    }[command]
    done = _closed_pipe_run(argv, env, tmp_path)
    if command == "help-typo":
        # argparse prints help itself and ends 0 even then; never a traceback.
        assert done.returncode == 0
        assert b"Traceback" not in done.stderr
        return
    _quiet_141(done)
    if command == "client":
        [evidence_id] = record_ids(tmp_path / "e")
        assert_sealed(tmp_path / "e", evidence_id)
