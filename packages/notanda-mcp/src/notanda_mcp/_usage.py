"""What every ``notanda-mcp`` command shares: exit codes, the usage error, the evidence folder.

A leaf module: the commands (``_cli``), the server, ``doctor``, ``demo`` and
``notanda-mcp-client`` import it, and it imports none of them, so the command
line can import the server without a cycle. The exit codes mean what
``docs/errors.md`` says. ``check_configuration`` is the one configuration check
both the server (at start-up) and ``doctor`` run, so they cannot disagree.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import notanda_openalex as openalex
from notanda_evidence import verify_file

from ._errors import NotandaMcpError
from ._schemas import Toolset, resolve_toolsets

#: Success, and a usage error: what they are for every Notanda command (``verify_file``).
EXIT_OK = verify_file.EXIT_OK
EXIT_USAGE = verify_file.EXIT_USAGE
#: ``doctor``: a check failed; ``demo``: a step failed.
EXIT_PROBLEM = 1
#: The server: a second SIGTERM or SIGINT stopped it without waiting.
EXIT_FORCED = 1
#: Every command: the output was closed before it finished (``quiet_broken_pipe``).
EXIT_BROKEN_PIPE = verify_file.EXIT_BROKEN_PIPE


class _Usage(NotandaMcpError):
    pass


class CheckVerdict(StrEnum):
    """The first word of each line ``doctor`` and ``demo`` print (``docs/errors.md``)."""

    OK = "ok"
    WARN = "warn"
    FAIL = "FAIL"


def verdict_line(verdict: CheckVerdict, text: str) -> str:
    """One printed check: the verdict in six columns, then *text* (already escaped)."""
    return f"{verdict.value:<6}{text}"


class HelpFormatter(argparse.HelpFormatter):
    """Wraps a description or epilog paragraph by paragraph; an indented line stays as written.

    So an example command (``Example:`` then the command, indented) is printed
    on a line of its own and never wrapped into the text around it.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap  # noqa: PLC0415 - lazy: only help text is wrapped, and most runs print none

        out: list[str] = []
        for paragraph in text.split("\n\n"):
            lines = paragraph.split("\n")
            prose = [line for line in lines if not line.startswith("  ")]
            kept = [line for line in lines if line.startswith("  ")]
            if prose:
                out.append(
                    textwrap.fill(
                        " ".join(prose), width, initial_indent=indent, subsequent_indent=indent
                    )
                )
            out.extend(indent + line for line in kept)
            out.append("")
        return "\n".join(out).rstrip("\n")


class UsageParser(verify_file.UsageParser):
    """The usage parser of every Notanda command (``verify_file.UsageParser``), for notanda-mcp.

    As there, a usage error ends with a one-line remedy, exits 2, and an option
    is never abbreviated (``--receipt`` is never read as another option). Here
    description and epilog keep indented example lines whole, and each line of
    a usage error names the command, as every other line notanda-mcp prints on
    stderr does (``notanda-mcp: ...``).
    """

    remedy = "run '{prog} --help' for every option"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def usage_error_lines(self, problem: str, remedy: str) -> str:
        """*problem* and *remedy* (already escaped), each on a line that names the command."""
        return f"{self.prog}: error: {problem}\n{self.prog}: remedy: {remedy}\n"


def resolve_evidence_dir(text: str, *, create: bool, relative: bool = False) -> Path:
    """Expand ``~``, refuse relative paths and files, create a missing folder (0700).

    With *relative*, a relative path is taken from the working directory
    instead (a command run by a person; no MCP client chose that directory).

    Raises:
        _Usage: with a one-line message.
    """
    path = Path(os.path.expanduser(text))
    if relative:
        path = path.absolute()
    if not path.is_absolute():
        raise _Usage(
            "--evidence-dir must be an absolute path: MCP clients start servers in "
            "arbitrary working directories; give the full path, "
            'e.g. --evidence-dir "$HOME/evidence"'
        )
    if path.exists() and not path.is_dir():
        raise _Usage("--evidence-dir names a file, not a folder: name a folder (new or existing)")
    if create and not path.exists():
        try:
            path.mkdir(mode=0o700, parents=True)
        except OSError as exc:
            raise _Usage(
                f"cannot create the evidence folder ({type(exc).__name__}): create it yourself "
                "(mkdir -m 700 DIR) or name a folder whose parent you can write"
            ) from None
    return path


def parse_toolsets(text: str) -> tuple[str, ...]:
    """The ``--toolsets`` value as toolset names (``search`` always among them).

    Raises:
        _Usage: The list is empty, has an empty item, or names an unknown toolset.
    """
    names = [name.strip() for name in text.split(",")]
    known = ",".join(toolset.value for toolset in Toolset)
    if not all(names):
        raise _Usage(
            f"--toolsets has an empty name: give a comma-separated list of {known}, "
            "e.g. --toolsets search,references"
        )
    try:
        return resolve_toolsets(names)
    except ValueError:
        raise _Usage(
            f"--toolsets names an unknown toolset: give a comma-separated list of {known}, "
            "e.g. --toolsets search,references"
        ) from None


def check_configuration(env: Mapping[str, str] | None = None) -> Any:
    """Load the notanda core configuration the way the server does at start-up.

    The one check both the server and ``doctor`` run, so they cannot disagree.

    Returns:
        The loaded configuration (``harvester.config.Config``).

    Raises:
        _Usage: The configuration is unusable. The one-line message names the
            variable, the path HARVESTER_CONFIG gives, the problem and what to
            do, and never a value read from the file or the environment.
    """
    try:
        return openalex.load_core_config(env)
    except openalex.ConfigurationError as exc:
        source = os.environ if env is None else env
        path = source.get("HARVESTER_CONFIG")
        where = f"HARVESTER_CONFIG={path}" if path else "the HARVESTER_* variables"
        raise _Usage(
            f"unusable notanda configuration ({where}): {exc}; {exc.problem.remedy}"
        ) from None
