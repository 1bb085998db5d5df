"""The mcp 1.x Python SDK client path: drive servers with ``mcp.ClientSession`` and time it.

Runs under the mcp 1.x client's own venv (``nox -s bench`` builds it; the
pin is ``MCP1_CLIENT`` in ``noxfile.py``)::

    MCP1_VENV/bin/python mcp1_client.py --rounds N --errlog FILE --env JSON \\
        --server ours JSON_ARGV --server anchor JSON_ARGV

Each server is started as that SDK's ``stdio_client`` starts it; the session
initializes and lists the tools (so the SDK checks every ``structuredContent``
against the tool's output schema, as it does for a real client), then
``client_paths.search_and_get`` runs. The samples are printed as one JSON
object on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import AsyncExitStack
from typing import Any, TextIO

import anyio
from client_paths import WARM_UP, Call, checked, search_and_get
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, required=True)
    parser.add_argument("--warm-up", type=int, default=WARM_UP)
    parser.add_argument("--errlog", required=True, help="where the servers' stderr goes")
    parser.add_argument("--env", default="{}", help="JSON object: the servers' extra environment")
    parser.add_argument("--server", nargs=2, action="append", metavar=("NAME", "JSON_ARGV"))
    return parser.parse_args()


def caller(session: ClientSession) -> Call:
    async def call(tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        result = await session.call_tool(tool, arguments)
        seconds = time.perf_counter() - started
        return seconds, checked(tool, result.isError, result.structuredContent)

    return call


async def main(args: argparse.Namespace) -> dict[str, Any]:
    env = json.loads(args.env)
    with open(args.errlog, "a", encoding="utf-8") as errlog:
        return await drive(args, env, errlog)


async def drive(args: argparse.Namespace, env: dict[str, str], errlog: TextIO) -> dict[str, Any]:
    clients: dict[str, Call] = {}
    async with AsyncExitStack() as stack:
        for name, argv_json in args.server or ():
            argv = json.loads(argv_json)
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await session.list_tools()
            clients[name] = caller(session)
        samples = await search_and_get(clients, args.rounds, args.warm_up)
    from importlib.metadata import version

    samples["client"] = f"mcp {version('mcp')}"
    return samples


if __name__ == "__main__":
    found = anyio.run(main, parse_args())
    sys.stdout.write(json.dumps(found) + "\n")
