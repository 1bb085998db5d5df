"""What the command-line test modules share: running a command, its one stderr line,
terminal-safe output, usage-error remedies and configuration files the server refuses."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import clean_env

BIN = Path(sys.executable).parent


def console_script(name: str) -> str:
    path = shutil.which(name, path=str(BIN))
    if path is None:
        pytest.skip(f"console script {name} is not installed next to {sys.executable}")
    return path


def run_command(
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


def run_server(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Any:
    return run_command([sys.executable, "-m", "notanda_mcp", *args], env=env, cwd=cwd)


def one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


SECRET_IN_FILE = "file-SECRET-value-8Jq2"


#: Configuration files the server refuses to start with, each hiding a value.
UNUSABLE_CONFIGS = {
    "invalid-json": lambda d: write_file(
        d / "c.json", f'{{"openalex": {{"api_key": "{SECRET_IN_FILE}"'
    ),
    "unknown-key": lambda d: write_file(d / "c.json", json.dumps({SECRET_IN_FILE: 1})),
    "wrong-type": lambda d: write_file(
        d / "c.json", json.dumps({"openalex": {"api_key": 5}, SECRET_IN_FILE: 1})
    ),
    "not-an-object": lambda d: write_file(d / "c.json", json.dumps([SECRET_IN_FILE])),
    "not-utf8": lambda d: write_file(d / "c.json", b"\xff\xfe" + SECRET_IN_FILE.encode()),
    "folder": lambda d: d,  # unreadable as a file
    "missing": lambda d: d / "missing.json",
}


def write_file(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


#: Characters that move a terminal's cursor, ring it, reverse or hide text.
UNSAFE = ("\x1b", "\x07", "\x85", "\u202e", "\u200b", "\u2028")


def assert_no_raw_unsafe(text: str) -> None:
    assert not [ch for ch in UNSAFE if ch in text], ascii(text)


def assert_usage_error_has_a_remedy(prog: str, stderr: str) -> None:
    """The last line says what to do: argparse's errors get a remedy line, ours a clause."""
    last = stderr.splitlines()[-1]
    if last.startswith(f"{prog}: remedy: "):
        assert f"{prog} --help" in last
    else:
        assert last.startswith(f"{prog}: ")
        assert re.search(r"[:;] (give|name|create|retrieve) ", last), last
