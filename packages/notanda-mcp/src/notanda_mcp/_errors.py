"""The one exception base of notanda-mcp.

A leaf module: every exception class the package defines derives from
:class:`NotandaMcpError`, as every exception of notanda-evidence derives from
``EvidenceError`` and every exception of notanda-openalex from
``OpenAlexError``. It imports nothing, so any module can import it.
"""

from __future__ import annotations


class NotandaMcpError(Exception):
    """Base of every exception ``notanda_mcp`` defines: ``except NotandaMcpError`` catches them."""
