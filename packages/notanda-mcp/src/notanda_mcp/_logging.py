"""The server owns stderr: only allow-listed messages, never a URL, a query or exception text.

Installed before the MCP SDK is imported or the server is built:

* The server's own records (logger ``notanda_mcp``) pass only when their
  message template is on :data:`ALLOWED`; their arguments are evidence IDs,
  stage names, codes and numbers, never provider or user text.
* Records from ``mcp``, ``httpx``, ``httpcore``, ``harvester`` and every other
  library are capped at WARNING and reduced to ``<logger>: <LEVEL> (details
  withheld)``, so that a traceback, a URL or an echoed key can never reach
  stderr, whatever the SDK or httpx decide to log.
* Uncaught exceptions in any thread and unraisable exceptions print one fixed
  line instead of a traceback.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any, TextIO

from notanda_evidence.verify_file import printable

__all__ = ["ALLOWED", "LOGGER", "configure_logging"]

LOGGER = logging.getLogger("notanda_mcp")

#: Every message the server may write to stderr. Arguments are ids, codes, numbers.
ALLOWED = frozenset(
    {
        "notanda-mcp %s serving %s on stdio (pid %d)",
        "search %s sealed: %s",
        "search %s failed before sealing: %s",
        "search %s sealed but not logged: %s",
        "search %s cancelled by the client; sealed: %s",
        "search rejected before a record: %s",
        "check %s sealed: %s",
        "check %s failed before sealing: %s",
        "check %s sealed but not logged: %s",
        "check %s cancelled by the client; sealed: %s",
        "check rejected before a record: %s",
        "%s arguments rejected before a record: %s",
        "retrieval %s: %s",
        "stage %s for %s",
        "waiting up to %.1f s for %d search(es) in flight",
        "stopped with %d unsealed search(es) left incomplete",
        "shutting down (%s)",
        "unexpected %s in %s; answered as %s",
        "code digest %s",
        "request line refused: over %d bytes",
        "the client closed stdout before %s",
        "stamping log heads every %.1f s",
        "log head %d stamped by the time-stamp authority",
        "log head %d already stamped by another server",
        "log head %d not stamped: %s",
        "log head %d not stamped: %s (HTTP %d)",
        "log head %d not stamped: %s (%s)",
        "log head not stamped: %s (%s)",
        "the last stamp is left to the next start (%s)",
        "unexpected %s while stamping; tried again at the next interval",
    }
)
#: Libraries whose records are reduced and capped at WARNING.
CAPPED = (
    "mcp",
    "mcp_types",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "harvester",
    "anyio",
    "asyncio",
    "opentelemetry",
    "py.warnings",
    "notanda_openalex",
)


class _Gate(logging.Filter):
    """Pass allow-listed server records; reduce everything else to a bare notice."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "notanda_mcp" or record.name.startswith("notanda_mcp."):
            if record.msg not in ALLOWED or record.exc_info or record.stack_info:
                record.msg, record.args = "withheld a message that is not on the allow-list", ()
                record.exc_info = record.exc_text = record.stack_info = None
            return True
        if record.levelno < logging.WARNING:
            return False
        record.msg = "%s: %s (details withheld)"
        record.args = (record.name, record.levelname)
        record.exc_info = record.exc_text = record.stack_info = None
        return True


class _PrintableFormatter(logging.Formatter):
    """Every line as :func:`printable` text: no argument can move the operator's cursor."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))


def _quiet_excepthook(kind: type[BaseException], *_: Any) -> None:
    sys.stderr.write(f"notanda-mcp: unexpected {kind.__name__} (details withheld)\n")


def _quiet_thread_hook(args: threading.ExceptHookArgs) -> None:
    _quiet_excepthook(args.exc_type)


def _quiet_unraisable(args: Any) -> None:
    sys.stderr.write(
        f"notanda-mcp: unraisable {type(args.exc_value).__name__} (details withheld)\n"
    )


def configure_logging(level: str = "warning", stream: TextIO | None = None) -> None:
    """Route every log record through the gate to stderr.

    Args:
        level: The server's own level: ``debug``, ``info``, ``warning`` or
            ``error``. Libraries stay capped at WARNING whatever it is.
        stream: Where to write (stderr by default).
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(_PrintableFormatter("notanda-mcp %(levelname)s %(message)s"))
    handler.addFilter(_Gate())
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    LOGGER.setLevel(level.upper())
    for name in CAPPED:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.captureWarnings(True)
    sys.excepthook = _quiet_excepthook
    threading.excepthook = _quiet_thread_hook
    sys.unraisablehook = _quiet_unraisable
