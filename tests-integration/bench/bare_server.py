"""A bare mcp 2.x low-level server: the SDK's own floor for start-up and for a tool call.

Default: two trivial tools answering a fixed text, nothing else imported or
done (the cold-start baseline). ``--echo FILE`` serves the tools described in
FILE (``[{"name", "output_schema", "reply"}, ...]``) and answers each call with
its canned reply, as text plus ``structuredContent``, the way notanda-mcp
shapes a reply: the floor of one tool call of that size and schema.
``--pid-file F`` writes the PID so that the benchmark can read its RSS.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(
        name=name,
        description=f"Trivial tool {name}.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    )
    for name in ("first", "second")
]
REPLIES: dict[str, dict[str, Any]] = {}


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    reply = REPLIES.get(params.name)
    if reply is None:
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])
    text = json.dumps(reply, ensure_ascii=False, sort_keys=True)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=reply
    )


def _echo(path: str) -> None:
    with open(path, encoding="utf-8") as stream:
        described = json.load(stream)
    TOOLS[:] = [
        types.Tool(
            name=tool["name"], input_schema={"type": "object"}, output_schema=tool["output_schema"]
        )
        for tool in described
    ]
    REPLIES.update({tool["name"]: tool["reply"] for tool in described})


async def _serve() -> None:
    server: Server[Any] = Server("bare", on_list_tools=_list_tools, on_call_tool=_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    options = dict(zip(sys.argv[1::2], sys.argv[2::2], strict=False))
    if "--pid-file" in options:
        with open(options["--pid-file"], "w", encoding="ascii") as stream:
            stream.write(str(os.getpid()))
    if "--echo" in options:
        _echo(options["--echo"])
    anyio.run(_serve)
