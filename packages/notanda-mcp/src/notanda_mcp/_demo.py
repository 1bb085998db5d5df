"""``notanda-mcp demo DIR``: an offline search, restart and retrieval that leaves evidence you keep.

The doctor's self-test throws its evidence away; the demo keeps it. Into a
new or empty DIR it makes a few searches through a real stdio server that
uses the built-in offline provider (``_selftest``: three synthetic works,
records marked ``"provider_mode": "injected"``, so ``notanda-evidence cite``
refuses them unless told ``--allow-injected``). Then it runs, as separate
processes, the commands it prints for you to run by hand: a new
``notanda-mcp`` server retrieves one record with its receipt
(``notanda-mcp-client``), ``notanda-evidence verify`` checks that record
against its receipt and ``notanda-evidence audit --head`` the whole folder
against the last search's head. The commands name the installed console
scripts by absolute path and are shell-quoted.

Exit codes: 0 every step worked; 1 a step failed (the line says which);
2 usage (DIR is a file, holds anything already, or cannot be created).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from notanda_evidence.verify_file import printable

from ._codes import AnswerStatus
from ._doctor import call_tools, selftest_server
from ._errors import NotandaMcpError
from ._schemas import SEARCH_LITERATURE
from ._usage import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, CheckVerdict, _Usage, verdict_line

__all__ = ["QUERIES", "run_demo"]

#: The searches the demo makes; the provider answers each with the same works.
QUERIES = (
    "Does exercise improve sleep quality?",
    "reproducible literature search",
    "open access and citation counts",
)
#: How many works each demo search asks for.
LIMIT = 3


class _StepFailed(NotandaMcpError):
    pass


def _prepare(text: str) -> Path:
    """DIR as an absolute path, created owner-only if missing; it must hold nothing.

    Raises:
        _Usage: with a one-line message and remedy.
    """
    path = Path(os.path.expanduser(text)).absolute()
    remedy = "name a new or empty folder, e.g. notanda-mcp demo ~/notanda-demo"
    if path.exists() and not path.is_dir():
        raise _Usage(f"demo: {path} is a file, not a folder: {remedy}")
    if path.is_dir():
        try:
            occupied = any(path.iterdir())
        except OSError as exc:
            raise _Usage(f"demo: cannot read {path} ({type(exc).__name__}): {remedy}") from None
        if occupied:
            raise _Usage(
                f"demo: {path} already holds files, and demo records must never mix into "
                f"a real collection: {remedy}"
            )
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise _Usage(f"demo: cannot create {path} ({type(exc).__name__}): {remedy}") from None
    return path


def installed_script(name: str) -> str:
    """The absolute path of console script *name* next to this Python, as installed.

    Raises:
        _StepFailed: It is not installed there.
    """
    folder = Path(sys.executable).absolute().parent
    for candidate in (folder / name, folder / f"{name}.exe"):
        if candidate.is_file():
            return str(candidate)
    raise _StepFailed(f"the console script {name} is not installed next to {sys.executable}")


def next_commands(root: Path, evidence_id: str, receipt: str, head: str) -> list[list[str]]:
    """The commands to run by hand: retrieval with a new server, verify, audit with the head."""
    client, evidence = installed_script("notanda-mcp-client"), installed_script("notanda-evidence")
    return [
        [client, "--evidence-dir", str(root), "--id", evidence_id, "--receipt", receipt],
        [evidence, "verify", str(root / evidence_id), "--receipt", receipt],
        [evidence, "audit", str(root), "--head", head],
    ]


def _search(root: Path) -> dict[str, Any]:
    """Make the demo searches in one server session; the last answer (with its head)."""
    import anyio  # noqa: PLC0415 - lazy: the MCP SDK's event loop, only once DIR is known to be usable

    calls = [(SEARCH_LITERATURE, {"query": query, "limit": LIMIT}) for query in QUERIES]
    try:
        answers, _ = anyio.run(call_tools, selftest_server(root), calls)
    except Exception as exc:  # the SDK wraps errors in groups
        problem = f"searches: the server could not be reached ({type(exc).__name__})"
        raise _StepFailed(problem) from None
    for number, (content, failed) in enumerate(answers, start=1):
        if failed or content.get("status") != AnswerStatus.OK or "head" not in content:
            raise _StepFailed(f"search {number}: {content.get('error', 'no sealed answer')}")
        print(
            verdict_line(
                CheckVerdict.OK,
                printable(
                    f"search {number} of {len(QUERIES)} sealed and logged: "
                    f"evidence {content['evidence_id']}, head {content['head']}"
                ),
            )
        )
    return answers[-1][0]


def _run_step(label: str, argv: list[str]) -> str:
    done = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"},
    )
    if done.returncode != 0:
        raise _StepFailed(f"{label} exited {done.returncode}; run it by hand to see why")
    return done.stdout


def _same_record(output: str, searched: dict[str, Any]) -> bool:
    """Whether the client's printed retrieval returns the search's works and receipt."""
    try:
        retrieved = json.loads(output)
    except ValueError:
        return False
    return isinstance(retrieved, dict) and all(
        retrieved.get(field) == searched[field] for field in ("evidence_id", "receipt", "results")
    )


def run_demo(directory: str) -> int:
    """Run the demo into *directory* and return the exit code."""
    try:
        root = _prepare(directory)
    except _Usage as exc:
        print(f"notanda-mcp: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    print(f"demo evidence folder: {printable(str(root))} (offline provider; records say injected)")
    try:
        last = _search(root)
        commands = next_commands(root, last["evidence_id"], last["receipt"], last["head"])
        labels = [
            "a restarted server (notanda-mcp) returned the same record with its receipt",
            "notanda-evidence verify: the record matches its receipt",
            "notanda-evidence audit --head: every record and the log extend the last head",
        ]
        for number, (label, argv) in enumerate(zip(labels, commands, strict=True)):
            output = _run_step(label, argv)
            if number == 0 and not _same_record(output, last):
                raise _StepFailed(f"{label}: the answer differs from the search's")
            print(verdict_line(CheckVerdict.OK, label))
    except _StepFailed as exc:
        print(verdict_line(CheckVerdict.FAIL, printable(str(exc))))
        print(f"demo failed: see {CheckVerdict.FAIL} above")
        return EXIT_PROBLEM
    print("demo done. Run the same checks by hand:")
    for argv in commands:
        print(f"  {printable(shlex.join(argv))}")
    print(
        "These records say provider_mode injected: notanda-evidence cite refuses them "
        "unless given --allow-injected."
    )
    return EXIT_OK
