"""The Windows key-file steps in ``docs/mcp-clients.md``: a ``"`` or ``\\`` in the key stays JSON.

The block marked ``<!-- test: windows-key-file ... -->`` once pasted the key into JSON
text by string concatenation, so a key holding ``"`` or ``\\`` wrote a file the core
could not read. The checks that need no PowerShell run everywhere: the key reaches
the file only through ``ConvertTo-Json``, no JSON is written by hand, an empty key is
refused, the folder is restricted before the key is written, and the file is written
without a byte-order mark (which Python's JSON reader refuses). Where PowerShell is
installed (every Windows machine, and pwsh elsewhere) the block also runs as pasted,
with ``Read-Host`` answered by a function (PowerShell calls a function before a cmdlet
of the same name) and the written file read back by the notanda core.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from notanda_openalex import load_core_config

MCP_CLIENTS_MD = REPO_ROOT / "docs" / "mcp-clients.md"
MARKER = "<!-- test: windows-key-file"
#: Everything JSON or PowerShell could trip over: quotes, backslashes, an expansion.
AWKWARD_KEY = "oa-\"quoted\"-back\\slash-'single'-$(echo no)-`t-$env:HOME-ü"


@pytest.fixture(scope="module")
def snippet() -> str:
    if not MCP_CLIENTS_MD.is_file():
        pytest.skip(f"{MCP_CLIENTS_MD} not found: run from a repository checkout")
    text = MCP_CLIENTS_MD.read_text(encoding="utf-8")
    match = re.search(
        rf"^{re.escape(MARKER)}[^\n]*-->\n```powershell\n(.*?)^```$", text, re.M | re.S
    )
    assert match, f"{MCP_CLIENTS_MD}: no ```powershell block directly after {MARKER!r}"
    return match.group(1)


def test_the_key_is_written_by_convertto_json_never_spliced_into_json_text(
    snippet: str,
) -> None:
    # No JSON is written by hand: no brace-quote text, in either kind of string.
    assert not re.search(r"""['"]\s*\{|\{\s*\\?["']""", snippet), snippet
    # The key's one way into the file is a hashtable given to ConvertTo-Json.
    uses = [line.strip() for line in snippet.splitlines() if "$key" in line]
    into_json = [line for line in uses if "api_key" in line]
    assert into_json == ["$json = @{ openalex = @{ api_key = $key } } | ConvertTo-Json -Compress"]
    assert all("+" not in line for line in uses), uses
    # Read without echo, as a SecureString.
    assert "Read-Host" in snippet
    assert "-AsSecureString" in snippet


def test_an_empty_key_is_refused_before_anything_is_written(snippet: str) -> None:
    guard = snippet.index("if (-not $key)")
    assert guard < snippet.index("New-Item") < snippet.index("WriteAllText")
    assert "nothing written" in snippet[guard : snippet.index("} else {")]


def test_the_folder_is_owner_only_before_the_key_is_written_and_the_file_has_no_bom(
    snippet: str,
) -> None:
    folder_acl = snippet.index("icacls $folder /inheritance:r")
    write = snippet.index("[System.IO.File]::WriteAllText($target")
    assert folder_acl < write < snippet.index("icacls $target /inheritance:r")
    # Set-Content and Out-File add a BOM (or write UTF-16) on Windows PowerShell 5.1;
    # File.WriteAllText writes UTF-8 without one on every version.
    assert "Set-Content" not in snippet
    assert "Out-File" not in snippet


def _powershell() -> str | None:
    return shutil.which("pwsh") or shutil.which("powershell")


@pytest.mark.skipif(
    _powershell() is None, reason="no PowerShell (pwsh) on this machine to run the block"
)
@pytest.mark.parametrize("key", [AWKWARD_KEY, "  plain-key-with-spaces-around  "])
def test_the_block_run_by_powershell_writes_a_file_the_core_reads(
    snippet: str, tmp_path: Path, key: str
) -> None:
    target = _run(snippet, tmp_path, key)
    data = target.read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")
    assert json.loads(data) == {"openalex": {"api_key": key.strip()}}
    config = load_core_config({"HARVESTER_CONFIG": str(target)})
    assert config.openalex.api_key == key.strip()


@pytest.mark.skipif(
    _powershell() is None, reason="no PowerShell (pwsh) on this machine to run the block"
)
def test_the_block_run_by_powershell_refuses_an_empty_key(snippet: str, tmp_path: Path) -> None:
    _run(snippet, tmp_path, "   ", expect_file=False)
    assert not (tmp_path / ".notanda").exists()


def _run(snippet: str, home: Path, key: str, *, expect_file: bool = True) -> Path:
    powershell = _powershell()
    assert powershell is not None
    # Read-Host answers from the environment; off Windows icacls does not exist and
    # is a no-op function (the ACL lines are checked above, not run).
    prelude = (
        "function Read-Host { param([string]$Prompt, [switch]$AsSecureString)\n"
        "  ConvertTo-SecureString -String $env:NOTANDA_TEST_KEY -AsPlainText -Force }\n"
    )
    if sys.platform != "win32":
        prelude += "function icacls { }\n"
    env = {
        **os.environ,
        "USERPROFILE": str(home),
        "USERNAME": os.environ.get("USERNAME", "me"),
        "NOTANDA_TEST_KEY": key,
    }
    done = subprocess.run(
        [powershell, "-NoProfile", "-NonInteractive", "-Command", prelude + snippet],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    target = home / ".notanda" / "config.json"
    if expect_file:
        assert target.is_file(), done.stdout + done.stderr
        assert f"wrote {target}" in done.stdout
    else:
        assert "no key given: nothing written" in done.stdout
    return target
