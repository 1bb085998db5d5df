"""``notanda-mcp-client``: a real stdio MCP client for the server, built on the SDK.

It starts the installed server (or ``--server-command``), initializes, checks
that exactly the tools of ``--toolsets`` are offered (by default the two of
``search``; the setting is passed on to the installed server it starts, while
a ``--server-command`` chooses its own), runs one search or one retrieval, and
prints the tool's structured answer as JSON. After a search it reads the
sealed record back through ``notanda_evidence`` and confirms that what the
server returned is what it stored, once the fields added after sealing are set
aside. ``--save-receipt FILE`` appends ``EVIDENCE_ID RECEIPT`` to a receipts
file kept outside the evidence directory.

Exit codes (``docs/errors.md``): 0 the tool succeeded; 1 the tool answered
with an error (``isError``); 2 usage; 3 the server could not be reached or
offered the wrong tools; 4 the returned result differs from the stored record;
141 the output was closed before the end (quietly; the record stays sealed).
``--offline`` starts the server with the built-in provider ``doctor`` and
``demo`` use (``_selftest``): no network, no key, and its records say injected.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# anyio (and with it the MCP SDK) is imported in ``_main``, once the arguments are checked.
import notanda_evidence as evidence
import notanda_openalex as openalex
from notanda_evidence.verify_file import printable, printable_json, quiet_broken_pipe

from . import _usage
from ._doctor import selftest_server
from ._errors import NotandaMcpError
from ._schemas import GET_EVIDENCE, SEARCH_LITERATURE, tool_names
from ._stdio_client import DEFAULT_READ_TIMEOUT_S, stdio_session
from ._usage import EXIT_OK, EXIT_USAGE, UsageParser, _Usage, parse_toolsets
from ._version import __version__

EXIT_TOOL_ERROR = 1
EXIT_UNREACHABLE = 3
EXIT_MISMATCH = 4
EXIT_BROKEN_PIPE = _usage.EXIT_BROKEN_PIPE
#: Fields a search adds to the stored response when answering (``docs/evidence-format.md``).
ADDED_AFTER_SEALING = ("receipt", "log_head", "head", "log_index", "remedy")
PROTOCOLS = {"auto": "auto", "legacy": "legacy", "2026-07-28": "2026-07-28"}


class _Unreachable(NotandaMcpError):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="notanda-mcp-client",
        description="Run one search or one retrieval against a Notanda MCP server over stdio.",
        epilog="Exit codes: 0 ok, 1 the tool answered with an error, 2 usage, "
        "3 server unreachable or wrong tools, 4 returned result differs from the stored record, "
        "141 output closed before the end.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--evidence-dir",
        required=True,
        metavar="DIR",
        help="the server's evidence root (absolute path)",
    )
    parser.add_argument(
        "--server-command",
        metavar="CMD",
        help="start this command instead of the installed notanda-mcp",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="start the server with the built-in offline provider notanda-mcp doctor and demo "
        "use (three synthetic works, no network, no key); its records say injected",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--query", help="search for this")
    action.add_argument("--id", dest="evidence_id", help="retrieve this evidence ID")
    parser.add_argument(
        "--limit",
        type=int,
        default=openalex.DEFAULT_LIMIT,
        help=f"works to return (1 to {openalex.MAX_LIMIT}; default {openalex.DEFAULT_LIMIT})",
    )
    parser.add_argument("--receipt", help="with --id: the receipt you kept")
    parser.add_argument(
        "--toolsets",
        default="search",
        metavar="LIST",
        help="comma-separated toolsets the server offers (search, references); passed to the "
        "server it starts, and exactly their tools are expected (default: search)",
    )
    parser.add_argument(
        "--protocol",
        choices=sorted(PROTOCOLS),
        default="auto",
        help="protocol era to negotiate (default: auto)",
    )
    parser.add_argument(
        "--save-receipt", metavar="FILE", help="append 'EVIDENCE_ID RECEIPT' to FILE after a search"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_READ_TIMEOUT_S,
        metavar="S",
        help=f"seconds to wait for the answer (default: {DEFAULT_READ_TIMEOUT_S:g})",
    )
    return parser


def _server_command(args: argparse.Namespace) -> list[str]:
    if args.server_command:
        return shlex.split(args.server_command)
    if args.offline:
        return selftest_server(Path(args.evidence_dir), toolsets=args.toolsets)
    command = [sys.executable, "-m", "notanda_mcp", "--evidence-dir", args.evidence_dir]
    return [*command, "--toolsets", ",".join(args.toolsets)]


def _usage_problem(args: argparse.Namespace, evidence_dir: Path) -> str | None:
    """What is wrong with the arguments, as one line with its remedy; None if nothing."""
    if not evidence_dir.is_absolute():
        return '--evidence-dir must be an absolute path: give the full path, e.g. "$PWD/evidence"'
    if args.evidence_id is not None and not evidence_dir.is_dir():
        # A retrieval only reads: a mistyped folder must not be created by the server.
        return (
            "--evidence-dir names no folder, and --id only reads from one: give the folder "
            "the search was made into"
        )
    if args.receipt is not None and args.evidence_id is None:
        return "--receipt goes with --id: retrieve with --id EVIDENCE_ID --receipt RECEIPT"
    if not 1 <= args.limit <= openalex.MAX_LIMIT:
        return (
            f"--limit must be 1 to {openalex.MAX_LIMIT}: give e.g. --limit {openalex.DEFAULT_LIMIT}"
        )
    if args.server_command is not None and not shlex.split(args.server_command):
        return "--server-command is empty: give a command line, or leave it out"
    if args.offline and args.server_command is not None:
        return "--offline starts its own server: give --offline or --server-command, not both"
    try:
        args.toolsets = parse_toolsets(args.toolsets)
    except _Usage as exc:
        return str(exc)
    return None


async def _session(args: argparse.Namespace) -> tuple[dict[str, Any], bool]:
    # The server reads its key from the environment or HARVESTER_CONFIG; pass both on.
    async with stdio_session(
        _server_command(args),
        client_name="notanda-mcp-client",
        env=os.environ,
        mode=PROTOCOLS[args.protocol],
        read_timeout_seconds=args.timeout,
    ) as session:
        expected = tool_names(args.toolsets)
        if session.tools != expected:
            raise _Unreachable(f"the server offers {list(session.tools)}, not {list(expected)}")
        if args.query is not None:
            arguments: dict[str, Any] = {"query": args.query, "limit": args.limit}
            content, is_error = await session.call(SEARCH_LITERATURE, arguments)
        else:
            arguments = {"evidence_id": args.evidence_id}
            if args.receipt is not None:
                arguments["receipt"] = args.receipt
            content, is_error = await session.call(GET_EVIDENCE, arguments)
    if not isinstance(content, dict):
        raise _Unreachable("the server answered without structured content")
    return content, is_error


def stored_matches(evidence_dir: Path, content: dict[str, Any]) -> bool:
    """Whether a search's answer equals its sealed ``response.json`` minus the added fields."""
    record = evidence.open_record(evidence_dir, content.get("evidence_id"), content.get("receipt"))
    if not record or record.response is None:
        return False
    returned = {k: v for k, v in content.items() if k not in ADDED_AFTER_SEALING}
    return returned == record.response


def _first_error(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``notanda-mcp-client`` and return its exit code (141, quietly, if output closed)."""
    return quiet_broken_pipe(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    import anyio  # noqa: PLC0415 - lazy, see the imports

    args = _parser().parse_args(argv)
    evidence_dir = Path(os.path.expanduser(args.evidence_dir))
    usage = _usage_problem(args, evidence_dir)
    if usage is not None:
        print(f"notanda-mcp-client: {printable(usage)}", file=sys.stderr)
        return EXIT_USAGE
    args.evidence_dir = str(evidence_dir)
    try:
        content, is_error = anyio.run(_session, args)
    except Exception as exc:  # the SDK wraps everything in exception groups
        error = _first_error(exc)
        detail = str(error) if isinstance(error, _Unreachable) else type(error).__name__
        print(
            f"notanda-mcp-client: could not complete the call ({printable(detail)})",
            file=sys.stderr,
        )
        return EXIT_UNREACHABLE
    # Provider text is in the answer: JSON escapes C0 controls but not bidi,
    # zero-width or C1 characters, so the terminal-safe form is printed.
    sys.stdout.write(printable_json(content, indent=2, sort_keys=True) + "\n")
    if args.query is not None:
        # A sealed search (successful or not) is evidence: keep its receipt, and
        # check that the answer is what was sealed when it was also logged.
        if "log_head" in content and not stored_matches(evidence_dir, content):
            print(
                "notanda-mcp-client: the returned result differs from the sealed record",
                file=sys.stderr,
            )
            return EXIT_MISMATCH
        if args.save_receipt and "receipt" in content:
            with open(args.save_receipt, "a", encoding="utf-8") as stream:
                stream.write(f"{content['evidence_id']} {content['receipt']}\n")
    if args.offline and args.query is not None:
        print(
            "notanda-mcp-client: offline: the built-in provider answered (synthetic works), so "
            "the record says injected; notanda-evidence cite refuses it without --allow-injected",
            file=sys.stderr,
        )
    if is_error:
        return EXIT_TOOL_ERROR
    return EXIT_OK
