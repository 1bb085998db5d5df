"""The client side of the search/get_evidence bench, shared by the three client paths.

Standard library only: besides ``mcp_bench.py`` (this venv, mcp 2.x), it is
imported by ``mcp1_client.py``, which runs under the mcp 1.x client's own
venv. A client path is a mapping of server names (``ours``, ``anchor``) to a
*call* coroutine ``call(tool, arguments) -> (seconds, structured answer)``;
:func:`search_and_get` drives them all the same way, alternating servers.

:class:`RawClient` is the first path: newline-delimited JSON-RPC over the
server's stdin and stdout, no SDK on the client side, so its figures are the
server's cost alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Awaitable, Callable
from typing import IO, Any

from launch_common import BENCH_KEY

SEARCH = {"query": "machine learning", "limit": 10}
#: The protocol version the raw client asks for (the handshake era: the anchor speaks no other).
PROTOCOL = "2025-11-25"
#: The servers' extra environment (an SDK merges it over its minimal default one).
#: PYTHONDONTWRITEBYTECODE is deliberately absent: the warm-up runs cache bytecode,
#: as a pip install does up front.
SERVER_ENV = {"HARVESTER_OPENALEX_API_KEY": BENCH_KEY}
#: Calls per server before any is timed: first-use imports and caches.
WARM_UP = 3

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[float, dict[str, Any]]]]


def checked(tool: str, is_error: bool | None, content: Any) -> dict[str, Any]:
    """*content* if it is a successful structured answer, else an error naming *tool*."""
    if is_error or not isinstance(content, dict) or content.get("status") != "ok":
        raise RuntimeError(f"{tool} failed: {str(content)[:200]}")
    return content


async def search_and_get(
    clients: dict[str, Call], rounds: int, warm_up: int = WARM_UP
) -> dict[str, Any]:
    """Medians' raw samples of ``search_literature`` then ``get_evidence`` per server.

    Each server gets *warm_up* searches, then *rounds* timed searches, then
    *rounds* timed retrievals with the receipts of its own searches; the
    servers alternate call by call. Returns ``{"search": {name: [s]}, "get":
    {name: [s]}, "replies": {tool: answer}}`` with the last answers of the
    first server (the SDK floor serves them).
    """
    records: dict[str, list[dict[str, Any]]] = {name: [] for name in clients}
    for _ in range(warm_up):
        for name, call in clients.items():
            records[name].append((await call("search_literature", SEARCH))[1])
    search: dict[str, list[float]] = {name: [] for name in clients}
    for _ in range(rounds):
        for name, call in clients.items():
            seconds, content = await call("search_literature", SEARCH)
            search[name].append(seconds)
            records[name].append(content)
    first = next(iter(clients))
    replies = {"search_literature": records[first][-1]}
    get: dict[str, list[float]] = {name: [] for name in clients}
    for index in range(rounds):
        for name, call in clients.items():
            record = records[name][index % len(records[name])]
            arguments = {"evidence_id": record["evidence_id"], "receipt": record["receipt"]}
            seconds, content = await call("get_evidence", arguments)
            get[name].append(seconds)
            if name == first:
                replies["get_evidence"] = content
    return {"search": search, "get": get, "replies": replies}


def inherited_env() -> dict[str, str]:
    """This process's environment but PYTHONDONTWRITEBYTECODE: children cache their bytecode."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


class RawClient:
    """A newline-delimited JSON-RPC client over a server's stdin and stdout."""

    def __init__(
        self, command: list[str], errlog: IO[str], env: dict[str, str] = SERVER_ENV
    ) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env={**inherited_env(), **env},
        )
        self._next = 0

    def send(self, method: str, params: dict[str, Any], *, notify: bool = False) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self._next += 1
            message["id"] = self._next
        if self.process.stdin is None:
            raise RuntimeError("the server has no stdin")
        self.process.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send(method, params)
        if self.process.stdout is None:
            raise RuntimeError("the server has no stdout")
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server closed stdout before answering {method}")
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer

    def handshake(self) -> list[dict[str, Any]]:
        """initialize, initialized, and tools/list, as every real client starts; the tools."""
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "notanda-bench-raw", "version": "1"},
            },
        )
        self.send("notifications/initialized", {}, notify=True)
        tools: list[dict[str, Any]] = self.request("tools/list", {})["result"]["tools"]
        return tools

    def tool_result(self, tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """Seconds one tool call takes, and its whole ``result`` (text and structured)."""
        started = time.perf_counter()
        answer = self.request("tools/call", {"name": tool, "arguments": arguments})
        result: dict[str, Any] = answer["result"]
        return time.perf_counter() - started, result

    def call_tool(self, tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """Seconds one tool call takes, and its structured answer (which must be a success)."""
        seconds, result = self.tool_result(tool, arguments)
        return seconds, checked(tool, result.get("isError"), result.get("structuredContent"))

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """:meth:`call_tool` as a client path's *call* (it blocks; nothing else runs meanwhile)."""
        return self.call_tool(tool, arguments)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
