"""The ``notanda-mcp`` command: the stdio server, ``doctor``, ``demo`` and ``check-references``.

``notanda-mcp --evidence-dir DIR`` serves MCP on stdio. ``notanda-mcp doctor``
checks a newcomer's set-up (``_doctor.py``); ``notanda-mcp demo DIR`` leaves
offline demo evidence in DIR (``_demo.py``); ``notanda-mcp check-references
FILE`` checks a bibliography into one record (``_check_cli.py``, whose exit
codes are its own). Exit codes (``docs/errors.md``):
0 served until the client left (doctor: ready; demo: every step worked); 1
doctor found a problem, a demo step failed, or a second signal stopped the
server at once; 2 usage error, bad evidence directory or unusable
configuration (also a bad ``--timestamp-url``, ``--timestamp-every`` or
``--tsa-ca``, or either of the last two without ``--timestamp-url``).
Every usage error ends with a one-line remedy; a mistyped command is answered
with the nearest one. Every command exits 141, quietly, when its output is
closed early (``quiet_broken_pipe``). Started with a terminal on stdin, the
server says once on stderr what it is and how to try it (``TERMINAL_NOTICE``).

Nothing heavy is imported before the arguments are checked and logging is in
place, and the provider client is not imported until the first search.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from notanda_evidence.verify_file import printable, quiet_broken_pipe, unknown_command

from ._logging import configure_logging
from ._service import DEFAULT_SEARCH_SLOTS
from ._stamper import (
    DEFAULT_TIMESTAMP_EVERY_S,
    MINIMUM_TIMESTAMP_EVERY_S,
    check_timestamp_url,
    load_tsa_ca,
    parse_every,
)
from ._usage import (
    EXIT_OK,
    EXIT_USAGE,
    UsageParser,
    _Usage,
    check_configuration,
    parse_toolsets,
    resolve_evidence_dir,
)
from ._version import __version__

# Each command's own module (``_server``, ``_doctor``, ``_check_cli``, ``_demo``)
# is imported only once the command is chosen, in ``_main``: the server's
# start-up loads none of the others' code, and no command loads the MCP SDK
# before its arguments are checked (the module docstring's promise).

#: The subcommands beside the server itself, each with its one-line help.
COMMANDS = {
    "doctor": ("", "check Python, the folder and the configuration; self-test"),
    "demo": ("DIR", "offline searches into DIR, then the commands to try by hand"),
    "check-references": ("FILE", "check a bibliography against OpenAlex into one record"),
}

#: Said on stderr, once, when the server starts with a terminal on its standard input.
TERMINAL_NOTICE = (
    "notanda-mcp: this is the Notanda MCP server. It speaks MCP (JSON-RPC) on standard input"
    " and output, and an MCP client normally starts it (Claude Desktop, an IDE,"
    " notanda-mcp-client); typed text is not a search.\n"
    "notanda-mcp: to try it by hand: notanda-mcp-client --evidence-dir DIR --offline"
    " --query 'reproducibility', or notanda-mcp demo DIR (docs/mcp-clients.md).\n"
    "notanda-mcp: waiting for a client; press Ctrl-D to quit.\n"
)


def _server_parser() -> argparse.ArgumentParser:
    commands = "\n".join(
        f"  {(name + ' ' + takes).strip():<23}{text}" for name, (takes, text) in COMMANDS.items()
    )
    parser = UsageParser(
        prog="notanda-mcp",
        usage="%(prog)s --evidence-dir DIR [options]\n       %(prog)s COMMAND [--help]",
        description="Local stdio MCP server: OpenAlex literature search where every search "
        "leaves a sealed, verifiable evidence record. An MCP client starts it.",
        epilog=f"commands (each has its own --help):\n{commands}\n\n"
        "The OpenAlex key is read from HARVESTER_OPENALEX_API_KEY or the owner-only "
        "file named by HARVESTER_CONFIG; no argument accepts it.\n\n"
        "Example:\n  notanda-mcp --evidence-dir ~/notanda-evidence",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--evidence-dir",
        required=True,
        metavar="DIR",
        help="absolute path of the evidence root (created if missing)",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="how much the server itself reports on stderr (default: warning)",
    )
    parser.add_argument(
        "--toolsets",
        default="search",
        metavar="LIST",
        help="comma-separated toolsets to offer: search (search_literature, get_evidence; "
        "always offered), references (check_references). Default: search",
    )
    parser.add_argument(
        "--search-slots",
        type=int,
        default=DEFAULT_SEARCH_SLOTS,
        metavar="N",
        help=f"searches that may run at once (default: {DEFAULT_SEARCH_SLOTS})",
    )
    parser.add_argument(
        "--timestamp-url",
        metavar="URL",
        help="an RFC 3161 time-stamp authority: stamp the log's head there (off by default)",
    )
    parser.add_argument(
        "--timestamp-every",
        metavar="SECONDS",
        help="with --timestamp-url, how often to stamp what was logged since (at least "
        f"{MINIMUM_TIMESTAMP_EVERY_S:g}; default: {DEFAULT_TIMESTAMP_EVERY_S:g})",
    )
    parser.add_argument(
        "--tsa-ca",
        metavar="FILE",
        help="with --timestamp-url, a PEM bundle of the TSA CAs to trust (as for notanda-evidence "
        "audit --tsa-ca): store only answers whose chain leads to one of them",
    )
    return parser


def _doctor_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="notanda-mcp doctor",
        description="Check Python, the evidence folder and the configuration, then run an "
        "offline end-to-end self-test (search, restart, retrieval, independent verification).",
    )
    parser.add_argument(
        "--evidence-dir",
        metavar="DIR",
        help="the evidence root to probe (the self-test never writes there)",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="also run one real OpenAlex search into DIR (needs network and a key), and ask "
        "the --timestamp-url TSA once",
    )
    parser.add_argument(
        "--timestamp-url",
        metavar="URL",
        help="the time-stamp authority the server is given: with --live, ask it once and check "
        "its answer; with --evidence-dir, say when DIR was last stamped",
    )
    parser.add_argument(
        "--tsa-ca",
        metavar="FILE",
        help="with --timestamp-url --live, also check the TSA's chain against this PEM bundle "
        "of TSA CAs, as the server does with --tsa-ca",
    )
    return parser


def _demo_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="notanda-mcp demo",
        description="Offline: make a few searches into DIR through a real stdio server with "
        "the built-in provider, restart, retrieve one with its receipt, verify and audit DIR, "
        "then print those commands to run by hand. Records say injected.",
        epilog="Example:\n  notanda-mcp demo ~/notanda-demo",
    )
    parser.add_argument(
        "directory",
        metavar="DIR",
        help="a new or empty folder (relative or absolute; created if missing)",
    )
    return parser


def _check_references_parser() -> argparse.ArgumentParser:
    from ._check_cli import parser  # noqa: PLC0415 - lazy, see the imports

    return parser()


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``notanda-mcp`` and return its exit code (141, quietly, if its output was closed)."""
    return quiet_broken_pipe(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and not args_list[0].startswith("-") and args_list[0] not in COMMANDS:
        # The server takes no positional argument: a word here is a mistyped command.
        _server_parser().error(unknown_command(args_list[0], list(COMMANDS)))
    if args_list[:1] == ["doctor"]:
        from ._doctor import run_doctor  # noqa: PLC0415 - lazy, see the imports

        doctor_args = _doctor_parser().parse_args(args_list[1:])
        return run_doctor(
            doctor_args.evidence_dir,
            live=doctor_args.live,
            timestamp_url=doctor_args.timestamp_url,
            tsa_ca=doctor_args.tsa_ca,
        )
    if args_list[:1] == ["check-references"]:
        from ._check_cli import main as check_references  # noqa: PLC0415 - lazy, see the imports

        return check_references(args_list[1:])
    if args_list[:1] == ["demo"]:
        from ._demo import run_demo  # noqa: PLC0415 - lazy, see the imports

        return run_demo(_demo_parser().parse_args(args_list[1:]).directory)
    args = _server_parser().parse_args(args_list)
    configure_logging(args.log_level)
    try:
        if args.search_slots < 1:
            raise _Usage(
                "--search-slots must be at least 1: give 1 or more "
                f"(default {DEFAULT_SEARCH_SLOTS})"
            )
        toolsets = parse_toolsets(args.toolsets)
        every = _timestamp_settings(args.timestamp_url, args.timestamp_every, args.tsa_ca)
        root = resolve_evidence_dir(args.evidence_dir, create=True)
        check_configuration()
    except _Usage as exc:
        print(f"notanda-mcp: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    from ._server import build_server  # noqa: PLC0415 - lazy, see the imports

    if sys.stdin is not None and sys.stdin.isatty():
        sys.stderr.write(TERMINAL_NOTICE)
        sys.stderr.flush()
    build_server(
        root,
        search_slots=args.search_slots,
        toolsets=toolsets,
        timestamp_url=args.timestamp_url,
        timestamp_every=every,
        tsa_ca=args.tsa_ca,
    ).run()
    return EXIT_OK


def _timestamp_settings(url: str | None, every: str | None, tsa_ca: str | None) -> float | None:
    """Check ``--timestamp-url``, ``--timestamp-every`` and ``--tsa-ca``; the interval, in seconds.

    None when ``--timestamp-every`` is not given: the server then takes its default.

    Raises:
        _Usage: with the one-line message of the check that failed.
    """
    try:
        if url is not None:
            check_timestamp_url(url)
        seconds = None if every is None else parse_every(every)
        if tsa_ca is not None and url is not None:
            load_tsa_ca(tsa_ca)
    except ValueError as exc:
        raise _Usage(str(exc)) from None
    if tsa_ca is not None and url is None:
        raise _Usage(
            "--tsa-ca needs --timestamp-url (stamping is off without a time-stamp authority): "
            "give --timestamp-url URL as well (docs/mcp-clients.md), or leave --tsa-ca out"
        )
    if every is not None and url is None:
        # Stamping is off without a TSA: an interval alone would be ignored in silence.
        raise _Usage(
            "--timestamp-every needs --timestamp-url (stamping is off without a time-stamp "
            "authority): give e.g. --timestamp-url http://timestamp.digicert.com as well, "
            "or leave --timestamp-every out"
        )
    return seconds
