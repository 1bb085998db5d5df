"""The key-file instructions in ``docs/mcp-clients.md``, run as a newcomer pastes them.

The block marked ``<!-- test: key-file ... -->`` is taken from the page as
written and run inside a caller's ``sh`` (dash), ``bash`` and ``zsh``: with a
key on stdin it must leave exactly ``{"openalex": {"api_key": "..."}}`` with
mode 600 that the notanda core reads back; with an empty key it must refuse,
exit non-zero and write nothing; and the caller's umask and options must be
as they were. Under a terminal, the key typed must never be echoed.

zsh is required, not optional: ``.ci/run`` installs it, and a POSIX machine
without it fails here rather than skipping (Windows, which has its own
PowerShell steps, skips the module).
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import absent
from conftest import REPO_ROOT
from notanda_openalex import load_core_config

# The block is for POSIX shells; Windows users follow the PowerShell steps
# beside it, which no Windows runner here can check (they need a console).
pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="POSIX shell instructions; Windows has PowerShell steps"
)

MCP_CLIENTS_MD = REPO_ROOT / "docs" / "mcp-clients.md"
MARKER = "<!-- test: key-file"
SHELLS = ("sh", "bash", "zsh")
#: Everything a shell or JSON could trip over: quotes, a backslash, expansions.
AWKWARD_KEY = "oa-\"quoted\"-back\\slash-'single'-$(echo no)-`echo no`-$HOME-ü"


@pytest.fixture(scope="module")
def snippet() -> str:
    if not MCP_CLIENTS_MD.is_file():
        absent(f"{MCP_CLIENTS_MD} not found: run from a repository checkout")
    text = MCP_CLIENTS_MD.read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(MARKER)}[^\n]*-->\n```sh\n(.*?)^```$", text, re.M | re.S)
    assert match, f"{MCP_CLIENTS_MD}: no ```sh block directly after {MARKER!r}"
    return match.group(1)


def _shell(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is not installed: the key instructions must be tested under it"
    return path


def _caller(snippet: str) -> str:
    """A caller's session: its own umask and options, the pasted block, then a report."""
    return (
        "umask 0022\nset -u\n"
        'before="$(umask) $(set +o | sort)"\n'
        f"{snippet}"
        "snippet_exit=$?\n"
        'after="$(umask) $(set +o | sort)"\n'
        'if [ "$before" = "$after" ]; then echo "::shell unchanged"; '
        'else echo "::shell changed"; fi\n'
        "exit $snippet_exit\n"
    )


def _env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _run(shell: str, snippet: str, home: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    # A new session has no controlling terminal, so getpass reads the piped key.
    return subprocess.run(
        [_shell(shell), "-c", _caller(snippet)],
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(home),
        cwd=home,
        start_new_session=True,
        timeout=60,
        check=False,
    )


def _key_file(home: Path) -> Path:
    return home / ".config" / "notanda" / "config.json"


@pytest.mark.parametrize("shell", SHELLS)
def test_the_key_file_is_written_exactly_owner_only_and_atomically(
    snippet: str, tmp_path: Path, shell: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _run(shell, snippet, home, AWKWARD_KEY + "\n")
    assert done.returncode == 0, done.stderr
    assert "::shell unchanged" in done.stdout, done.stdout
    target = _key_file(home)
    assert target.read_bytes() == (
        json.dumps({"openalex": {"api_key": AWKWARD_KEY}}) + "\n"
    ).encode("utf-8")
    assert target.stat().st_mode & 0o777 == 0o600
    assert target.parent.stat().st_mode & 0o777 == 0o700
    # Written through a temporary file in the same folder, then renamed.
    assert sorted(p.name for p in target.parent.iterdir()) == ["config.json"]
    assert f"HARVESTER_CONFIG={target}" in done.stdout
    assert AWKWARD_KEY not in done.stdout + done.stderr
    # The notanda core, which the server uses, reads the key back unchanged.
    config = load_core_config({"HARVESTER_CONFIG": str(target)})
    assert config.openalex.api_key == AWKWARD_KEY


@pytest.mark.parametrize("stdin", ["\n", "   \n", ""], ids=["empty", "blank", "eof"])
@pytest.mark.parametrize("shell", SHELLS)
def test_an_empty_key_is_refused_and_nothing_is_written(
    snippet: str, tmp_path: Path, shell: str, stdin: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _run(shell, snippet, home, stdin)
    assert done.returncode != 0
    assert "no key given: nothing written" in done.stderr
    assert "Traceback" not in done.stderr
    assert "::shell unchanged" in done.stdout, done.stdout
    assert not (home / ".config").exists()


@pytest.mark.parametrize("shell", SHELLS)
def test_an_empty_key_leaves_an_earlier_key_file_alone(
    snippet: str, tmp_path: Path, shell: str
) -> None:
    home = tmp_path / "home"
    target = _key_file(home)
    target.parent.mkdir(parents=True)
    target.write_text('{"openalex": {"api_key": "kept"}}\n')
    done = _run(shell, snippet, home, "\n")
    assert done.returncode != 0
    assert target.read_text() == '{"openalex": {"api_key": "kept"}}\n'
    assert sorted(p.name for p in target.parent.iterdir()) == ["config.json"]


#: Run in the child: make the terminal on stdin the session's controlling one
#: (what a terminal emulator does), then become the shell.
_ADOPT_TERMINAL = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def _at_a_terminal(argv: list[str], home: Path, reply: bytes, prompt: bytes) -> tuple[bytes, int]:
    """Run *argv* on a new pseudo-terminal; type *reply* once *prompt* shows; return the screen."""
    master, slave = os.openpty()
    with subprocess.Popen(
        [sys.executable, "-c", _ADOPT_TERMINAL, *argv],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=_env(home),
        cwd=home,
        start_new_session=True,
    ) as child:
        os.close(slave)
        shown, typed = b"", False
        try:
            while True:
                ready, _, _ = select.select([master], [], [], 60)
                if not ready:
                    child.kill()
                    break
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: every process holding the terminal has gone
                    break
                if not chunk:
                    break
                shown += chunk
                if not typed and prompt in shown:
                    os.write(master, reply)
                    typed = True
        finally:
            os.close(master)
        code = child.wait(timeout=60)
    return shown, code


@pytest.mark.parametrize("shell", SHELLS)
def test_the_key_typed_at_a_terminal_is_not_echoed(
    snippet: str, tmp_path: Path, shell: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    key = "oa-typed-at-a-terminal-7Hq2"
    prompt = b"OpenAlex key (not shown): "
    shown, code = _at_a_terminal(
        [_shell(shell), "-c", _caller(snippet)], home, key.encode() + b"\n", prompt
    )
    assert code == 0, shown
    assert prompt in shown
    assert key.encode() not in shown
    assert b"::shell unchanged" in shown
    assert json.loads(_key_file(home).read_text()) == {"openalex": {"api_key": key}}
