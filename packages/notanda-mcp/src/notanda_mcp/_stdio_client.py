"""The one stdio MCP client session, used by ``notanda-mcp-client``, ``doctor`` and ``demo``.

It starts a server command with the SDK's client, initializes, lists the tools
offered, and calls them, handing back each call's structured content and
whether the server marked it an error. The SDK is imported on entry, never at
import time, so the commands stay quick to start.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ._version import __version__


class StdioSession:
    """An initialized client session with a server started on stdio."""

    def __init__(self, client: Any, tools: tuple[str, ...]) -> None:
        self._client = client
        #: The names of the tools the server offers, sorted.
        self.tools = tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
        """Call *tool*; return its structured content (as the SDK gave it) and ``isError``."""
        result = await self._client.call_tool(tool, arguments)
        return result.structured_content, bool(result.is_error)


#: How long a client waits for each answer of the server, by default, in seconds.
DEFAULT_READ_TIMEOUT_S = 60.0


@contextlib.asynccontextmanager
async def stdio_session(
    command: Sequence[str],
    *,
    client_name: str,
    env: Mapping[str, str],
    mode: str = "auto",
    read_timeout_seconds: float = DEFAULT_READ_TIMEOUT_S,
) -> AsyncIterator[StdioSession]:
    """Start *command* as a stdio server, initialize, list its tools; stop it on exit.

    Args:
        command: The server's command line (program first).
        client_name: The client name sent in ``initialize``.
        env: The whole environment the server process gets.
        mode: The protocol era to negotiate (the SDK's ``mode``).
        read_timeout_seconds: How long to wait for each answer.
    """
    from mcp import Client, StdioServerParameters  # noqa: PLC0415 - lazy: see the module docstring
    from mcp_types import Implementation  # noqa: PLC0415 - lazy: see the module docstring

    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=dict(env))
    info = Implementation(name=client_name, version=__version__)
    mode_arg: Any = mode
    async with Client(
        params, mode=mode_arg, client_info=info, read_timeout_seconds=read_timeout_seconds
    ) as client:
        tools = tuple(sorted(tool.name for tool in (await client.list_tools()).tools))
        yield StdioSession(client, tools)
