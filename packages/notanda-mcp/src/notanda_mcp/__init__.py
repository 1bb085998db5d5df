"""Notanda's local stdio MCP server: literature search where every search leaves evidence.

Two tools, ``search_literature`` and ``get_evidence``, and ``check_references``
with the ``references`` toolset. Every search and every check is recorded,
sealed and logged before it is answered (``docs/evidence-format.md``).
Every exception the package defines is a ``NotandaMcpError``.
``build_server`` is the documented test seam; importing this package stays
cheap until it is called, because MCP clients wait for the server to start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._errors import NotandaMcpError as NotandaMcpError
from ._version import __version__ as __version__

# The public names: ``_EXPORTS`` below is the one list (``__all__`` is made
# from it). Type checkers cannot read it, so each lazy name is also imported
# here as ``X as X`` (an explicit re-export); ``tests/test_package.py`` checks
# that the two agree. To add a name: one line here, one entry in ``_EXPORTS``.
if TYPE_CHECKING:
    from notanda_evidence.verify_file import NOTICE as NOTICE

    from ._server import NotandaServer as NotandaServer
    from ._server import build_server as build_server

# The server and the notice are imported on first use: importing the package
# stays cheap for the command line, which parses its arguments first.
_EXPORTS = {
    "NOTICE": "notanda_evidence.verify_file",
    "NotandaMcpError": "._errors",
    "NotandaServer": "._server",
    "__version__": "._version",
    "build_server": "._server",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'notanda_mcp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
