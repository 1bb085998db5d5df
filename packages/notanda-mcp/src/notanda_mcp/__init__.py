"""Notanda's local stdio MCP server: literature search where every search leaves evidence.

Two tools, ``search_literature`` and ``get_evidence``, and ``check_references``
with the ``references`` toolset. Every search and every check is recorded,
sealed and logged before it is answered (``docs/evidence-format.md``).
Every exception the package defines is a ``NotandaMcpError``.
``build_server`` is the documented test seam; importing this package stays
cheap until it is called, because MCP clients wait for the server to start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import NotandaMcpError
from ._version import __version__

if TYPE_CHECKING:
    from notanda_evidence.verify_file import NOTICE

    from ._server import NotandaServer, build_server

__all__ = ["NOTICE", "NotandaMcpError", "NotandaServer", "__version__", "build_server"]


def __getattr__(name: str) -> Any:
    if name in ("NotandaServer", "build_server"):
        from . import _server

        return getattr(_server, name)
    if name == "NOTICE":
        from notanda_evidence.verify_file import NOTICE

        return NOTICE
    raise AttributeError(f"module 'notanda_mcp' has no attribute {name!r}")
