"""The Windows key-file steps in ``docs/mcp-clients.md``: a ``"`` or ``\\`` in the key stays JSON.

The block marked ``<!-- test: windows-key-file ... -->`` once pasted the key into JSON
text by string concatenation, so a key holding ``"`` or ``\\`` wrote a file the core
could not read. The checks that need no PowerShell run everywhere: the key reaches
the file only through ``ConvertTo-Json``, no JSON is written by hand, an empty key is
refused, the folder is restricted before the key is written, and the file is written
without a byte-order mark (which Python's JSON reader refuses). These are checks of
the text: no PowerShell can be installed on the machines the suite runs on here, so
the block itself is not run.
"""

from __future__ import annotations

import re

import pytest
from checkout import absent
from conftest import REPO_ROOT

MCP_CLIENTS_MD = REPO_ROOT / "docs" / "mcp-clients.md"
MARKER = "<!-- test: windows-key-file"


@pytest.fixture(scope="module")
def snippet() -> str:
    if not MCP_CLIENTS_MD.is_file():
        absent(f"{MCP_CLIENTS_MD} not found: run from a repository checkout")
    # A Windows checkout may have CRLF line ends.
    text = MCP_CLIENTS_MD.read_text(encoding="utf-8").replace("\r\n", "\n")
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
