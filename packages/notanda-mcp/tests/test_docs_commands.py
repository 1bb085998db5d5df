"""Every command the README and the set-up guides show is one the installed tools accept.

Each invocation of ``notanda-mcp``, ``notanda-mcp-client``, ``notanda-evidence``
or ``verify_file.py`` in ``README.md``, ``docs/mcp-clients.md`` and
``docs/auditors-guide.md`` (in ``sh`` blocks, in inline code that names the
program by a path, and in the JSON client configurations) is parsed by the
command's own argument parser: a subcommand or an option that does not exist
fails here before a newcomer meets it. Placeholders such as ``EVIDENCE_ID``
parse like any value. The README and the client guide also never type a bare
program name in a shell block, since the install does not put ``.venv/bin``
on ``PATH`` (the auditor's guide says to activate its environment). Every
virtual environment the pages create lies outside the checkout or is ignored
by Git (the README's auditor once made an untracked ``audit/`` in it).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

import pytest
from checkout import absent
from conftest import REPO_ROOT
from notanda_evidence import _cli as evidence_cli
from notanda_evidence import verify_file
from notanda_mcp import _cli as server_cli
from notanda_mcp import _client as client_cli

PAGES = ("README.md", "docs/mcp-clients.md", "docs/auditors-guide.md")
#: Pages whose shell blocks must name each program by its installed path.
PATH_REQUIRED = {"README.md", "docs/mcp-clients.md"}
PROGRAMS = {"notanda-mcp", "notanda-mcp-client", "notanda-evidence", "verify_file.py"}


def _pages() -> dict[str, str]:
    found = {name: REPO_ROOT / name for name in PAGES}
    missing = [name for name, path in found.items() if not path.is_file()]
    if missing:
        absent(f"{missing} not found under {REPO_ROOT}: run from a repository checkout")
    return {name: path.read_text(encoding="utf-8") for name, path in found.items()}


def _fenced(text: str, language: str) -> Iterator[str]:
    yield from re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)


def _logical_lines(script: str) -> Iterator[str]:
    """The script's command lines; a line whose quote is still open continues on the next."""
    pending = ""
    for line in script.splitlines():
        pending += line + "\n"
        try:
            shlex.split(pending, comments=True)
        except ValueError:  # no closing quotation yet
            continue
        yield pending
        pending = ""
    assert not pending, f"unclosed quotation in {pending!r}"


def _segments(line: str) -> Iterator[list[str]]:
    """The simple commands of one command line, as argv lists (comments dropped)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    current: list[str] = []
    for token in lexer:
        if set(token) <= set(";&|"):
            yield current
            current = []
        else:
            current.append(token)
    yield current


def _invocation(argv: list[str]) -> tuple[str, str, list[str]] | None:
    """``(program, as typed, arguments)`` when *argv* runs one of our programs.

    As typed, a script run by ``python3`` keeps its interpreter in front
    (``python3 verify_file.py``): like a path, it says how to run it.

    The program is the command word (after ``NAME=value`` assignments), the
    script that ``python3`` runs, or the command after a ``--`` (``claude mcp
    add ... -- COMMAND``); a path such as ``./packages/notanda-mcp`` given as
    an argument is not an invocation.
    """
    words = list(argv)
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        words.pop(0)
    if "--" in words:
        words = words[words.index("--") + 1 :]
    if words and re.fullmatch(r"python(3(\.\d+)?)?", PurePosixPath(words[0]).name):
        interpreter = words.pop(0)
        while words and words[0].startswith("-"):
            if words.pop(0) in ("-c", "-m"):
                return None
        if words and PurePosixPath(words[0]).name in PROGRAMS:
            return PurePosixPath(words[0]).name, f"{interpreter} {words[0]}", words[1:]
    if words and PurePosixPath(words[0]).name in PROGRAMS:
        return PurePosixPath(words[0]).name, words[0], words[1:]
    return None


def _runnable(typed: str) -> bool:
    """Whether *typed* runs after the install as written (a path, or an interpreter)."""
    return "/" in typed or " " in typed


def _shell_commands(pages: dict[str, str]) -> Iterator[tuple[str, str, str, list[str]]]:
    for page, text in pages.items():
        spans = [(line, True) for block in _fenced(text, "sh") for line in _logical_lines(block)]
        spans += [
            (span, False)
            for span in re.findall(r"`([^`\n]+)`", text)
            if any(program in span for program in PROGRAMS)
        ]
        for line, fenced in spans:
            for argv in _segments(line):
                found = _invocation(argv)
                if found is None:
                    continue
                program, typed, arguments = found
                # Prose mentions a program by its bare name or by its path
                # alone; a path with arguments makes it a command.
                if fenced or (_runnable(typed) and arguments):
                    yield page, program, typed, arguments


def _client_configurations(pages: dict[str, str]) -> Iterator[tuple[str, str, list[str]]]:
    def servers(node: Any) -> Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            if PurePosixPath(str(node.get("command", ""))).name == "notanda-mcp":
                yield node
            for value in node.values():
                yield from servers(value)

    for page, text in pages.items():
        for block in _fenced(text, "json"):
            for server in servers(json.loads(block)):
                yield page, str(server["command"]), list(server.get("args", []))


def _parser_for(program: str, arguments: list[str]) -> tuple[argparse.ArgumentParser, list[str]]:
    if program == "notanda-evidence":
        return evidence_cli._parser(), arguments
    if program == "notanda-mcp-client":
        return client_cli._parser(), arguments
    if program == "verify_file.py":
        parser = argparse.ArgumentParser(prog="verify_file.py")
        verify_file.add_verify_arguments(parser)
        return parser, arguments
    if arguments and not arguments[0].startswith("-"):
        # notanda-mcp dispatches its subcommands by the first word, each with
        # a parser named after it (``_doctor_parser``, ``_check_references_parser``).
        make = getattr(server_cli, f"_{arguments[0].replace('-', '_')}_parser", None)
        assert make is not None, f"notanda-mcp has no subcommand {arguments[0]!r}"
        return make(), arguments[1:]
    return server_cli._server_parser(), arguments


def _refusal(program: str, arguments: list[str]) -> str | None:
    """What the program's parser says about *arguments*, or None when it accepts them."""
    parser, rest = _parser_for(program, arguments)
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(rest)
    except SystemExit as exc:
        return f"exit {exc.code}: {said.getvalue().strip()}"
    return None


def _cases() -> list[Any]:
    pages = _pages() if all((REPO_ROOT / name).is_file() for name in PAGES) else {}
    cases = [
        pytest.param(
            page, program, typed, arguments, id=f"{page}: {shlex.join([typed, *arguments])}"
        )
        for page, program, typed, arguments in _shell_commands(pages)
    ]
    cases += [
        pytest.param(page, "notanda-mcp", typed, args, id=f"{page} json: {shlex.join(args)}")
        for page, typed, args in _client_configurations(pages)
    ]
    return cases


CASES = _cases()


def test_the_pages_show_commands_for_every_program() -> None:
    """The extraction finds what the pages are known to show (so the next test is not empty)."""
    _pages()
    programs = {case.values[1] for case in CASES}
    assert programs == PROGRAMS
    pages = {case.values[0] for case in CASES}
    assert pages == set(PAGES)


@pytest.mark.parametrize(("page", "program", "typed", "arguments"), CASES)
def test_every_documented_command_parses(
    page: str, program: str, typed: str, arguments: list[str]
) -> None:
    assert _refusal(program, arguments) is None, (page, shlex.join([typed, *arguments]))
    if page in PATH_REQUIRED:
        assert _runnable(typed), f"{page}: {typed!r} is not on PATH after the install"


def test_a_command_that_does_not_exist_is_refused() -> None:
    """The check above can fail: a made-up subcommand and a made-up option are refused."""
    assert _refusal("notanda-evidence", ["verfy", "EVIDENCE"]) is not None
    assert _refusal("notanda-mcp-client", ["--evidence-dir", "/x", "--qury", "q"]) is not None
    assert _refusal("notanda-mcp", ["--evidence-dir", "/x", "--key", "k"]) is not None
    with pytest.raises(AssertionError, match="no subcommand 'serve'"):
        _refusal("notanda-mcp", ["serve", "/x"])


def _venvs(pages: dict[str, str]) -> Iterator[tuple[str, str]]:
    """``(page, folder)`` for every ``python -m venv FOLDER`` the pages show."""
    for page, text in pages.items():
        lines = [line for block in _fenced(text, "sh") for line in _logical_lines(block)]
        lines += [span for span in re.findall(r"`([^`\n]+)`", text) if " venv " in span]
        for line in lines:
            for argv in _segments(line):
                words = [w for w in argv if not w.startswith("-")]
                if "-m" in argv and words[1:2] == ["venv"] and len(words) > 2:
                    yield page, words[2]


def test_every_environment_the_pages_create_is_outside_the_checkout_or_ignored() -> None:
    """An environment made in the checkout must not show up as untracked files."""
    pages = _pages()
    created = sorted(set(_venvs(pages)))
    assert {folder for _, folder in created} >= {".venv", ".venv-nox"}
    for page, folder in created:
        if folder.startswith(("~", "/")):
            continue
        ignored = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "check-ignore", "-q", "--no-index", f"{folder}/"],
            check=False,
        )
        assert ignored.returncode == 0, f"{page}: {folder}/ is in the checkout and not ignored"
